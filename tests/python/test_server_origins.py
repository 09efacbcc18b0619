"""parakeet-server answers only the hosts and web origins it trusts: a Host header naming
another host (DNS rebinding) is 400, a browser Origin not on the list is 403 on HTTP and on the
realtime WebSocket's handshake; loopback, the --host address and the flags' names pass, and
clients that send no Origin (every non-browser client) are not affected."""

import httpx
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from server_helpers import MODEL, ServerProcess

pytestmark = pytest.mark.skipif(not MODEL.exists(), reason=f"{MODEL} has not been generated")
WAIT_SEC = 60


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with ServerProcess(["--trusted-host", "asr.example", "--allowed-origin", "https://app.example"],
                       tmp_path_factory.mktemp("origins")) as srv:
        yield srv


def get(srv, **headers):
    return httpx.get(srv.url + "/v1/models", headers=headers, timeout=WAIT_SEC)


def test_hosts(server):
    assert get(server).status_code == 200  # Host: 127.0.0.1:port
    assert get(server, host=f"localhost:{server.port}").status_code == 200
    assert get(server, host="asr.example").status_code == 200
    r = get(server, host=f"rebound.attacker.example:{server.port}")
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_host"


def test_origins(server):
    assert get(server, origin=f"http://localhost:{server.port}").status_code == 200
    assert get(server, origin="http://127.0.0.1:3000").status_code == 200
    assert get(server, origin="https://app.example").status_code == 200
    for origin in ("https://evil.example", "http://app.example", "null", "https://app.example.evil.example"):
        r = get(server, origin=origin)
        assert r.status_code == 403 and r.json()["error"]["code"] == "origin_not_allowed", origin
    r = httpx.post(server.url + "/v1/audio/transcriptions", headers={"origin": "https://evil.example"},
                   files={"file": ("a.wav", b"RIFF", "audio/wav")}, timeout=WAIT_SEC)
    assert r.status_code == 403


def test_realtime_handshake_checks_the_origin(server):
    url = server.url.replace("http://", "ws://") + "/v1/realtime?intent=transcription"
    with pytest.raises(InvalidStatus) as refused:
        connect(url, origin="https://evil.example", open_timeout=WAIT_SEC)
    assert refused.value.response.status_code == 403
    with connect(url, origin=f"http://localhost:{server.port}", open_timeout=WAIT_SEC) as ws:
        assert "session.created" in ws.recv(timeout=WAIT_SEC)
    with connect(url, open_timeout=WAIT_SEC) as ws:  # no Origin: not a browser
        assert "session.created" in ws.recv(timeout=WAIT_SEC)
