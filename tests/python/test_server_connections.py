"""parakeet-server against hostile connections: a request head or body trickled byte by byte is
cut at its timeout, connections over the caps (in all, per client) are refused at once, uploads
beyond the queue are refused before their body is read, one client holds only its share of the
queue, and a stop cancels the transcriptions in flight instead of waiting for them.

Clients from other addresses are 127.0.0.2 (all of 127.0.0.0/8 is loopback on Linux). The tests
wait for events (a connection closed, an answer read); the socket timeouts are hang guards.
"""

import contextlib
import signal
import socket
import threading
import time

import httpx
import pytest

from server_helpers import CANCELLABLE, MODEL, ONE_CLIENT, UNBATCHED, ServerProcess, long_wav_bytes

URL_PATH = "/v1/audio/transcriptions"
HANG_GUARD_SEC = 180
OTHER_CLIENT = "127.0.0.2"

pytestmark = pytest.mark.skipif(not MODEL.exists(), reason=f"{MODEL} has not been generated")


def open_socket(srv, source: str = "127.0.0.1") -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", srv.port), timeout=HANG_GUARD_SEC, source_address=(source, 0))
    return sock


def read_answer(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (or the hang guard)."""
    chunks = []
    while True:
        data = sock.recv(65536)
        if not data:
            return b"".join(chunks)
        chunks.append(data)


def status_of(answer: bytes) -> int:
    assert answer.startswith(b"HTTP/1.1 "), answer[:200]
    return int(answer.split(b" ", 2)[1])


def upload_head(srv, length: int) -> bytes:
    """A transcription request's head announcing a multipart body of ``length`` bytes."""
    return (f"POST {URL_PATH} HTTP/1.1\r\nHost: 127.0.0.1:{srv.port}\r\n"
            "Content-Type: multipart/form-data; boundary=XYZ\r\n"
            f"Content-Length: {length}\r\n\r\n").encode()


BODY_START = (b'--XYZ\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n'
              b"Content-Type: audio/wav\r\n\r\n")


def trickle_until_closed(sock: socket.socket, byte: bytes = b"x") -> bytes:
    """Sends one byte every 0.1 s (a slowloris' pace, not a synchronisation) until the server
    closes the connection; returns what it answered."""
    deadline = time.monotonic() + HANG_GUARD_SEC
    sock.settimeout(0.1)
    answer = b""
    while time.monotonic() < deadline:
        try:
            sock.sendall(byte)
        except OSError:  # closed by the server
            break
        try:
            data = sock.recv(65536)
        except socket.timeout:
            continue
        except OSError:
            break
        if not data:
            break
        answer += data
    else:
        raise AssertionError("the server held a trickling connection past the hang guard")
    sock.settimeout(HANG_GUARD_SEC)
    with contextlib.suppress(OSError):
        answer += read_answer(sock)
    return answer


def served(srv, source: str = "127.0.0.1") -> int:
    transport = httpx.HTTPTransport(local_address=source)
    with httpx.Client(transport=transport, timeout=HANG_GUARD_SEC) as client:
        return client.get(srv.url + "/health").status_code


def test_a_trickled_request_head_is_cut_at_the_header_timeout(tmp_path):
    with ServerProcess(["--header-timeout", "1"], tmp_path) as srv:
        sock = open_socket(srv)
        sock.sendall(f"GET /health HTTP/1.1\r\nHost: 127.0.0.1:{srv.port}\r\nX-Slow: ".encode())
        assert trickle_until_closed(sock) == b""  # closed without an answer
        sock.close()
        assert served(srv) == 200


def test_a_trickled_body_is_answered_408_at_the_body_timeout_and_frees_its_place(tmp_path):
    # One place in all (K = 1, no queue): the slow upload holds it until it is cut.
    with ServerProcess(["--body-timeout", "1", "--concurrency", "1", "--max-queue", "0"], tmp_path) as srv:
        sock = open_socket(srv)
        sock.sendall(upload_head(srv, 1_000_000) + BODY_START)
        answer = trickle_until_closed(sock, b"\x00")
        sock.close()
        assert status_of(answer) == 408 and b'"body_timeout"' in answer
        r = httpx.post(srv.url + URL_PATH, files={"file": ("a.wav", long_wav_bytes(2), "audio/wav")},
                       timeout=HANG_GUARD_SEC)
        assert r.status_code == 200, r.text


def test_connections_over_the_caps_are_refused_at_once(tmp_path):
    # The held connections send nothing: a long head timeout keeps them held however slow the test.
    with ServerProcess(["--max-connections", "4", "--max-connections-per-client", "3", "--header-timeout", "600"],
                       tmp_path) as srv:
        held = [open_socket(srv) for _ in range(3)]
        refused = open_socket(srv)  # the 4th from this client: over its cap
        answer = read_answer(refused)
        assert status_of(answer) == 503 and b'"too_many_connections"' in answer
        assert served(srv, OTHER_CLIENT) == 200  # another client still gets in (4 in all)
        other = open_socket(srv, OTHER_CLIENT)   # the 4th connection in all...
        also_refused = open_socket(srv, OTHER_CLIENT)  # ...so a 5th is over the total cap
        assert status_of(read_answer(also_refused)) == 503
        for sock in held + [other, refused, also_refused]:
            sock.close()
        # Closed connections count no more (the server may see the closes a little later).
        deadline = time.monotonic() + HANG_GUARD_SEC
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.TransportError):
                if served(srv) == 200:
                    break
        else:
            raise AssertionError("the closed connections still count")


def answer_to_a_second_upload(srv, expected: bytes) -> bytes:
    """The answer to an upload whose head is sent without its body, while the first upload
    (sent just before) holds its place. The first's place is taken when its head arrives; in
    case the second head overtook it, the second is tried again (a hang guard bounds it)."""
    deadline = time.monotonic() + HANG_GUARD_SEC
    while True:
        second = open_socket(srv)
        second.sendall(upload_head(srv, 20_000_000))
        answer = read_answer(second)
        second.close()
        if expected in answer or time.monotonic() > deadline:
            return answer


def test_uploads_beyond_the_queue_are_refused_before_their_body(tmp_path):
    with ServerProcess([*UNBATCHED, "--concurrency", "1", "--max-queue", "0", *ONE_CLIENT], tmp_path) as srv:
        first = open_socket(srv)
        first.sendall(upload_head(srv, 20_000_000) + BODY_START)  # its body is still to come
        # The second upload's body is never sent: it is answered at once, or never.
        answer = answer_to_a_second_upload(srv, b'"server_overloaded"')
        assert status_of(answer) == 503 and b"retry-after" in answer.lower()
        first.close()


def test_one_client_holds_only_its_share_of_the_queue(tmp_path):
    # K = 1 and one waiting place: a share of 0.5 is one place per client.
    with ServerProcess([*UNBATCHED, "--concurrency", "1", "--max-queue", "1", "--client-share", "0.5"], tmp_path) as srv:
        first = open_socket(srv)
        first.sendall(upload_head(srv, 20_000_000) + BODY_START)
        answer = answer_to_a_second_upload(srv, b"its share of the queue")
        assert status_of(answer) == 503
        transport = httpx.HTTPTransport(local_address=OTHER_CLIENT)
        with httpx.Client(transport=transport, timeout=HANG_GUARD_SEC) as other:
            r = other.post(srv.url + URL_PATH, files={"file": ("a.wav", long_wav_bytes(2), "audio/wav")})
        assert r.status_code == 200, r.text
        first.close()


@pytest.mark.parametrize("fields,vad,flags", CANCELLABLE.values(), ids=CANCELLABLE.keys())
def test_a_stop_cancels_the_transcription_in_flight(tmp_path, fields, vad, flags):
    # 10 min under full attention: seconds of compute; the stop gives it no time at all.
    data = long_wav_bytes(600)
    srv = ServerProcess(["--attention", "full", "--shutdown-timeout", "0", *flags], tmp_path, vad=vad)
    with srv:
        answers = []
        client = threading.Thread(target=lambda: answers.append(httpx.post(
            srv.url + URL_PATH, files={"file": ("long.wav", data, "audio/wav")}, data=fields,
            timeout=HANG_GUARD_SEC)))
        client.start()
        deadline = time.monotonic() + HANG_GUARD_SEC
        while srv.metric("parakeet_backends_in_use") != 1:
            assert time.monotonic() < deadline, "the request did not start"
            time.sleep(0.02)
        srv.proc.send_signal(signal.SIGTERM)
        client.join(HANG_GUARD_SEC)
        assert srv.proc.wait(HANG_GUARD_SEC) is not None
    assert answers and answers[0].status_code == 503, answers and answers[0].text
    assert answers[0].json()["error"]["code"] == "server_shutting_down"
