"""``/v1/realtime`` against slot squatting and floods: only audio keeps a session open, a session
is closed at its lifetime cap, an item holds at most --max-audio-seconds, one client holds only
its share of the stream slots, per-message deflate is off, and a client flooding large appends
faster than they are decoded is held back by the socket, not buffered in the server's memory,
large events are decoded off the event loop, and a client gone stops its feeding. The tests wait
for events (an error event, a close, a request's end); timeouts are hang guards."""

import asyncio
import base64
import json
import socket
import struct
import threading
import time

import httpx
import numpy as np
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from parakeet_cli.server.metrics import Metrics
from parakeet_cli.server.realtime import OFF_LOOP_CHARS, RealtimeConfig, Session, _b64decode
from parakeet_py import StreamUpdate
from server_helpers import ServerProcess, long_wav_bytes, wait_for
from stream_helpers import MODELS, SMALL_WINDOW

MODEL = MODELS["tdt"]
WAIT_SEC = 120
RATE = 24000
OTHER_CLIENT = "127.0.0.2"

pytestmark = pytest.mark.skipif(not MODEL.exists(), reason="fixture model missing")


def ws_url(srv):
    return srv.url.replace("http://", "ws://") + "/v1/realtime?intent=transcription"


def session(srv, source="127.0.0.1", **kw):
    sock = socket.create_connection(("127.0.0.1", srv.port), timeout=WAIT_SEC, source_address=(source, 0))
    return connect(ws_url(srv), sock=sock, open_timeout=WAIT_SEC, **kw)


def send(ws, event):
    ws.send(json.dumps(event))


def recv(ws):
    return json.loads(ws.recv(timeout=WAIT_SEC))


def append(seconds: float) -> dict:
    samples = (np.sin(np.arange(int(seconds * RATE)) * 0.05) * 3000).astype("<i2")
    return {"type": "input_audio_buffer.append", "audio": base64.b64encode(samples.tobytes()).decode()}


def until_error(ws, keep_busy):
    """Calls ``keep_busy(ws)`` and reads its answers until the server sends an error event;
    returns it (then the connection must close)."""
    deadline = time.monotonic() + WAIT_SEC
    while time.monotonic() < deadline:
        try:
            keep_busy(ws)
        except ConnectionClosed:  # closed meanwhile: its error event is still to be read
            pass
        while True:
            event = recv(ws)
            if event["type"] == "error":
                with pytest.raises(ConnectionClosed):
                    while True:
                        ws.recv(timeout=WAIT_SEC)
                return event["error"]
            if event["type"] in ("input_audio_buffer.cleared", "conversation.item.input_audio_transcription.completed"):
                break
    raise AssertionError("the session was not closed")


@pytest.fixture(scope="module")
def squat(tmp_path_factory):
    """Short limits: 1 s without audio, 4 s a session, 1 s an item."""
    with ServerProcess(["--realtime-window", SMALL_WINDOW, "--stream-idle-timeout", "1", "--max-session-seconds", "4",
                        "--max-audio-seconds", "1"], tmp_path_factory.mktemp("squat"), model=MODEL) as srv:
        yield srv


def test_events_without_audio_do_not_keep_a_session_open(squat):
    with session(squat) as ws:
        assert recv(ws)["type"] == "session.created"

        def clear(ws):
            time.sleep(0.1)  # the squatter's pace
            send(ws, {"type": "input_audio_buffer.clear"})
        assert until_error(ws, clear)["code"] == "idle_timeout"


def test_a_session_is_closed_at_its_lifetime_cap(squat):
    with session(squat) as ws:
        assert recv(ws)["type"] == "session.created"

        def speak(ws):  # audio all the time: never idle
            for _ in range(3):
                send(ws, append(0.1))
            send(ws, {"type": "input_audio_buffer.commit"})
        assert until_error(ws, speak)["code"] == "session_expired"


def test_an_item_holds_at_most_max_audio_seconds(squat):
    with session(squat) as ws:
        assert recv(ws)["type"] == "session.created"
        for _ in range(10):
            send(ws, append(0.1))  # 1 s: the limit
        send(ws, append(0.1))
        while (event := recv(ws))["type"] != "error":
            assert event["type"] == "conversation.item.input_audio_transcription.delta"
        assert event["error"]["code"] == "audio_too_long" and event["error"]["param"] == "audio"
        send(ws, {"type": "input_audio_buffer.commit"})
        while (event := recv(ws))["type"] != "conversation.item.input_audio_transcription.completed":
            pass
        assert event["usage"]["seconds"] == 1.0  # the refused append was not taken


def test_one_client_holds_only_its_share_and_no_deflate(tmp_path):
    # 4 slots, a share of 0.5: two per client.
    with ServerProcess(["--realtime-window", SMALL_WINDOW, "--max-streams", "4", "--client-share", "0.5"], tmp_path,
                       model=MODEL) as srv:
        with session(srv) as a, session(srv) as b:
            for ws in (a, b):
                assert recv(ws)["type"] == "session.created"
                # The client offered permessage-deflate (websockets does by default); refused.
                assert "Sec-WebSocket-Extensions" not in ws.response.headers
            with session(srv) as refused:
                error = recv(refused)["error"]
                assert error["code"] == "too_many_streams" and "share" in error["message"]
                with pytest.raises(ConnectionClosed) as closed:
                    refused.recv(timeout=WAIT_SEC)
                assert closed.value.rcvd.code == 1013
            with session(srv, OTHER_CLIENT) as other:
                assert recv(other)["type"] == "session.created"


def rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def test_a_flood_of_appends_waits_in_the_socket_not_in_memory(tmp_path):
    # The only backend is busy with a long upload, so no append is decoded meanwhile: the server
    # holds one frame while it waits, and the rest of a flood of 5.4 MiB frames must wait in
    # the socket (before: up to 32 frames per session were read into memory).
    frames, frame = 24, json.dumps(append(4 * 1024 * 1024 / 2 / RATE))
    with ServerProcess(["--concurrency", "1", "--attention", "full", "--realtime-window", SMALL_WINDOW,
                        "--max-append-mb", "4"], tmp_path, model=MODEL) as srv:
        busy = []
        upload = threading.Thread(target=lambda: busy.append(httpx.post(
            srv.url + "/v1/audio/transcriptions", files={"file": ("long.wav", long_wav_bytes(600), "audio/wav")},
            timeout=WAIT_SEC)), daemon=True)
        with session(srv, max_size=None) as ws:
            assert recv(ws)["type"] == "session.created"
            upload.start()
            deadline = time.monotonic() + WAIT_SEC
            while srv.metric("parakeet_backends_in_use") != 1:
                assert time.monotonic() < deadline and not busy, "the upload did not start"
                time.sleep(0.01)
            before = rss_bytes(srv.proc.pid)  # the upload's audio is decoded by now
            sent = []

            def flood():
                try:
                    for _ in range(frames):
                        ws.send(frame)
                        sent.append(1)
                except (ConnectionClosed, OSError):
                    pass
            sender = threading.Thread(target=flood, daemon=True)
            sender.start()
            # While the backend is busy nothing is decoded: the flood can only go into memory.
            grown = 0
            while upload.is_alive() and sender.is_alive():
                grown = max(grown, rss_bytes(srv.proc.pid) - before)
                assert time.monotonic() < deadline, "neither the flood nor the upload ended"
                time.sleep(0.01)
            flood_done = not sender.is_alive()
            ws.socket.shutdown(socket.SHUT_RDWR)
            sender.join(WAIT_SEC)
        upload.join(WAIT_SEC)
    assert not flood_done, f"the server read all {frames} frames ({len(sent)} sent) while it could decode none"
    assert grown < 96 * 1024 * 1024, f"the server's memory grew by {grown / 2**20:.0f} MiB"


def test_a_client_gone_after_large_appends_stops_their_feeding(tmp_path):
    # Silence (no deltas to send): the server learns of the reset from the connection itself.
    silence = {"type": "input_audio_buffer.append",
               "audio": base64.b64encode(np.zeros(2 * 1024 * 1024, "<i2").tobytes()).decode()}
    frames, frame_seconds = 6, 2 * 1024 * 1024 / RATE  # 87 s each at 24 kHz
    fed = "parakeet_stream_audio_seconds_total"
    with ServerProcess(["--concurrency", "1", "--realtime-window", SMALL_WINDOW, "--max-append-mb", "4"],
                       tmp_path, model=MODEL) as srv:
        sock = socket.create_connection(("127.0.0.1", srv.port), timeout=WAIT_SEC)
        with connect(ws_url(srv), sock=sock, open_timeout=WAIT_SEC, max_size=None) as ws:
            assert recv(ws)["type"] == "session.created"
            sent = []

            def flood():
                try:
                    for _ in range(frames):
                        ws.send(json.dumps(silence))
                        sent.append(1)
                except (ConnectionClosed, OSError):  # the reset below
                    pass
            sender = threading.Thread(target=flood, daemon=True)
            sender.start()
            wait_for(lambda: srv.metric(fed) > 0, "the first append to be fed")
            # A reset, as a client that vanishes: the appends still in flight are for nobody.
            wait_for(lambda: len(sent) >= 2, "a second append to be handed over")
            handed_over = len(sent)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.close()
            sender.join(WAIT_SEC)
            ws.close_socket()
        wait_for(lambda: srv.metric("parakeet_live_streams", {"kind": "realtime"}) == 0, "the slot to be freed")
        stopped_at = srv.metric(fed)
        # The only backend serves the next request; the gone session's audio fed no further.
        r = httpx.post(srv.url + "/v1/audio/transcriptions",
                       files={"file": ("a.wav", long_wav_bytes(2), "audio/wav")}, timeout=WAIT_SEC)
        assert r.status_code == 200, r.text
        assert srv.metric(fed) == stopped_at < handed_over * frame_seconds


class _RecordingLive:
    """LiveStreams' part a session uses, recording what it hands to the stream threads."""

    def __init__(self):
        self.off_loop = []

    async def run(self, fn, *args):
        self.off_loop.append(fn)
        return await asyncio.get_running_loop().run_in_executor(None, fn, *args)

    async def begin(self, lease, *args):
        lease.stream = object()

    async def feed(self, lease, samples):
        return StreamUpdate()


class _SentEvents:
    def __init__(self):
        self.events = []

    async def send_text(self, text):
        self.events.append(json.loads(text))


def test_large_events_are_decoded_off_the_event_loop():
    """JSON and base64 of a large event run on a stream thread (a 20 MiB event decoded on the
    event loop stalls every connection); a small one is decoded in place."""
    live, sent = _RecordingLive(), _SentEvents()
    config = RealtimeConfig(model_id="m", api_key=None, window=(1.0, 1.0, 1.0), idle_seconds=60,
                            max_append_bytes=1 << 20)
    session = Session(sent, live, config, beta=False, metrics=Metrics(1, 1))
    big = json.dumps(append(4.0))  # 192 KB of base64
    assert len(big) > OFF_LOOP_CHARS
    asyncio.run(session.handle(big))
    assert live.off_loop == [json.loads, _b64decode] and sent.events == []
    live.off_loop.clear()
    asyncio.run(session.handle(json.dumps(append(0.1))))
    assert live.off_loop == [] and sent.events == []
