"""``/v1/realtime?intent=transcription`` through the official openai client (beta and GA
dialects) and a raw WebSocket: 24 kHz PCM16 in, deltas joined equal the completed transcript
and the Python stream's text; concurrent sessions beyond the pool; malformed events, wrong
formats, an oversized append, idle clients, a full server and a vanished client."""

import base64
import contextlib
import json
import socket
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import openai
import pytest
import soxr
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from parakeet_py import Context, load_audio
from server_helpers import ONE_CLIENT, ServerProcess, wait_for
from stream_helpers import LONG, MODELS, SMALL, SMALL_WINDOW, SPEECH, per_test_limit, run_stream

MODEL = MODELS["tdt"]
WAIT_SEC = 60
APPEND_BYTES = 4800  # 0.1 s of 24 kHz PCM16

pytestmark = pytest.mark.skipif(not MODEL.exists(), reason="fixture model missing")


_bounded = per_test_limit(240)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with ServerProcess(["--concurrency", "2", "--threads", "1", "--realtime-window", SMALL_WINDOW, "--max-streams", "8",
                        "--max-append-mb", "0.25", *ONE_CLIENT], tmp_path_factory.mktemp("realtime"), model=MODEL) as srv:
        yield srv


def pcm24(audio16: np.ndarray) -> bytes:
    """16 kHz float audio as 24 kHz PCM16 little-endian (what OpenAI's pcm16 is)."""
    up = soxr.resample(audio16, 16000, 24000, "HQ")
    return np.clip(np.round(up * 32767), -32768, 32767).astype("<i2").tobytes()


@pytest.fixture(scope="module")
def clips():
    audio = load_audio(LONG)
    return [pcm24(audio[i * 16000:(i + 3) * 16000]) for i in range(0, 18, 3)] + [pcm24(load_audio(SPEECH))]


def expected_text(pcm: bytes) -> str:
    """The Python stream's text for 24 kHz PCM16 with the server's window."""
    samples = np.frombuffer(pcm, dtype="<i2")
    with Context(MODEL) as ctx:
        return run_stream(ctx.stream(**SMALL, sample_rate=24000), samples, [len(samples)])[0]


def ws_url(srv, query="?intent=transcription"):
    return srv.url.replace("http://", "ws://") + "/v1/realtime" + query


def appends(pcm: bytes):
    for i in range(0, len(pcm), APPEND_BYTES):
        yield base64.b64encode(pcm[i:i + APPEND_BYTES]).decode()


def collect_item(recv):
    """(deltas, committed event, completed event) of one item, reading events until completed."""
    deltas, committed = [], None
    while True:
        event = recv()
        kind = event["type"] if isinstance(event, dict) else event.type
        if kind == "conversation.item.input_audio_transcription.delta":
            deltas.append(event["delta"] if isinstance(event, dict) else event.delta)
        elif kind == "input_audio_buffer.committed":
            committed = event
        elif kind == "conversation.item.input_audio_transcription.completed":
            return deltas, committed, event
        else:
            raise AssertionError(f"unexpected event {event}")


def test_beta_client_transcribes_24k_pcm16(server, clips):
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="unused",
                           websocket_base_url=server.url.replace("http://", "ws://") + "/v1")
    with client.beta.realtime.connect(model="parakeet", extra_query={"intent": "transcription"}) as conn:
        created = conn.recv()
        assert created.type == "transcription_session.created"
        conn.transcription_session.update(session={
            "input_audio_format": "pcm16", "turn_detection": None,
            "input_audio_transcription": {"model": "gpt-4o-transcribe", "language": "en"}})
        updated = conn.recv()
        assert updated.type == "transcription_session.updated"
        for chunk in appends(clips[-1]):
            conn.input_audio_buffer.append(audio=chunk)
        conn.input_audio_buffer.commit()
        deltas, committed, completed = collect_item(conn.recv)
    assert len(deltas) > 3
    assert committed.item_id == completed.item_id and committed.previous_item_id is None
    assert "".join(deltas) == completed.transcript == expected_text(clips[-1])


def test_ga_client_transcribes_two_items_in_one_session(server, clips):
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="unused")
    with client.realtime.connect(model="parakeet", extra_query={"intent": "transcription"}) as conn:
        assert conn.recv().type == "session.created"
        conn.session.update(session={"type": "transcription", "audio": {"input": {
            "format": {"type": "audio/pcm", "rate": 24000}, "turn_detection": None}}})
        updated = conn.recv()
        assert updated.type == "session.updated", updated
        items = []
        for pcm in clips[:2]:
            for chunk in appends(pcm):
                conn.input_audio_buffer.append(audio=chunk)
            conn.input_audio_buffer.commit()
            items.append(collect_item(conn.recv))
    assert [c.transcript for _, _, c in items] == [expected_text(p) for p in clips[:2]]
    assert items[1][1].previous_item_id == items[0][2].item_id != items[1][2].item_id
    assert items[0][2].usage.seconds == pytest.approx(3.0, abs=0.01)


@contextlib.contextmanager
def raw_session(srv, **kw):
    with connect(ws_url(srv), open_timeout=WAIT_SEC, **kw) as ws:
        assert json.loads(ws.recv(timeout=WAIT_SEC))["type"] == "session.created"
        yield ws


def send(ws, event):
    ws.send(json.dumps(event))


def recv(ws):
    return json.loads(ws.recv(timeout=WAIT_SEC))


def transcribe_raw(ws, pcm):
    for chunk in appends(pcm):
        send(ws, {"type": "input_audio_buffer.append", "audio": chunk})
    send(ws, {"type": "input_audio_buffer.commit"})
    return collect_item(lambda: recv(ws))[2]["transcript"]


def test_concurrent_sessions_beyond_the_pool_give_single_stream_results(server, clips):
    def one(pcm):
        with raw_session(server) as ws:
            return transcribe_raw(ws, pcm)

    with ThreadPoolExecutor(len(clips)) as pool:  # 7 sessions on 2 backends
        texts = list(pool.map(one, clips, timeout=WAIT_SEC * 3))
    assert texts == [expected_text(p) for p in clips]
    assert server.metric("parakeet_stream_chunk_latency_seconds_count", {"kind": "realtime"}) > 0


@pytest.mark.parametrize("frame,code", [
    ("{not json", "invalid_json"),
    ("[1, 2]", "invalid_json"),
    (json.dumps({"type": "response.create"}), "invalid_value"),
    (json.dumps({"type": "input_audio_buffer.append"}), "invalid_value"),
    (json.dumps({"type": "input_audio_buffer.append", "audio": "***not base64***"}), "invalid_value"),
    (json.dumps({"type": "input_audio_buffer.commit"}), "input_audio_buffer_commit_empty"),
    (json.dumps({"type": "transcription_session.update", "session": {"turn_detection": {"type": "server_vad"}}}),
     "unsupported_value"),
    (json.dumps({"type": "transcription_session.update", "session": {"input_audio_format": "g711_ulaw"}}),
     "unsupported_value"),
    (json.dumps({"type": "session.update", "session": {"type": "transcription", "audio": {"input": {
        "format": {"type": "audio/pcm", "rate": 44100}}}}}), "unsupported_value"),
    (json.dumps({"type": "session.update", "session": {"type": "realtime"}}), "unsupported_value"),
    (json.dumps({"type": "transcription_session.update", "session": {"voice": "alloy"}}), "unknown_parameter"),
    (json.dumps({"type": "transcription_session.update", "session": {
        "input_audio_transcription": {"language": "english"}}}), "invalid_value"),
    (b"\x00\x01binary", "invalid_frame"),
    # A RecursionError, which was taken for a vanished client.
    pytest.param("[" * 100_000 + "]" * 100_000, "invalid_json", id="deeply-nested-json"),
])
def test_malformed_events_get_an_error_and_the_session_goes_on(server, clips, frame, code):
    with raw_session(server) as ws:
        ws.send(frame)
        error = recv(ws)
        assert error["type"] == "error" and error["error"]["code"] == code, error
        assert error["error"]["message"]
        assert transcribe_raw(ws, clips[0][:48000]) == expected_text(clips[0][:48000])


def test_errors_name_the_client_event(server):
    with raw_session(server) as ws:
        send(ws, {"type": "input_audio_buffer.commit", "event_id": "evt_42"})
        assert recv(ws)["error"]["event_id"] == "evt_42"


def test_an_oversized_append_is_refused_and_the_session_goes_on(server, clips):
    big = base64.b64encode(b"\x00" * (300 * 1024)).decode()  # over the server's 0.25 MiB
    with raw_session(server) as ws:
        send(ws, {"type": "input_audio_buffer.append", "audio": big})
        error = recv(ws)
        assert error["error"]["code"] == "audio_too_large" and error["error"]["param"] == "audio"
        assert transcribe_raw(ws, clips[0][:48000]) == expected_text(clips[0][:48000])


def test_clear_drops_the_item(server, clips):
    with raw_session(server) as ws:
        for chunk in appends(clips[1]):
            send(ws, {"type": "input_audio_buffer.append", "audio": chunk})
        send(ws, {"type": "input_audio_buffer.clear"})
        while (event := recv(ws))["type"] != "input_audio_buffer.cleared":
            assert event["type"] == "conversation.item.input_audio_transcription.delta"
        assert transcribe_raw(ws, clips[0]) == expected_text(clips[0])



def test_a_vanished_client_frees_its_stream(server, clips):
    with raw_session(server) as ws:
        for chunk in list(appends(clips[1]))[:10]:
            send(ws, {"type": "input_audio_buffer.append", "audio": chunk})
        ws.socket.shutdown(socket.SHUT_RDWR)  # gone without a close frame
    wait_for(lambda: server.metric("parakeet_live_streams", {"kind": "realtime"}) == 0, "the session to be freed")
    with raw_session(server) as again:
        assert transcribe_raw(again, clips[0]) == expected_text(clips[0])


def test_wrong_intent_and_idle_and_full_servers_close_cleanly(tmp_path, clips):
    with ServerProcess(["--realtime-window", SMALL_WINDOW, "--max-streams", "1", "--stream-idle-timeout", "1"],
                       tmp_path, model=MODEL) as srv:
        with connect(ws_url(srv, ""), open_timeout=WAIT_SEC) as ws:
            assert recv(ws)["error"]["code"] == "unsupported_intent"
            with pytest.raises(ConnectionClosed) as closed:
                ws.recv(timeout=WAIT_SEC)
            assert closed.value.rcvd.code == 1008
        with raw_session(srv) as held:
            with connect(ws_url(srv), open_timeout=WAIT_SEC) as refused:
                error = recv(refused)
                assert error["error"]["code"] == "too_many_streams" and error["error"]["type"] == "server_error"
                with pytest.raises(ConnectionClosed) as closed:
                    refused.recv(timeout=WAIT_SEC)
                assert closed.value.rcvd.code == 1013
            # Silent for over a second: the held session is closed with an error event.
            assert recv(held)["error"]["code"] == "idle_timeout"
            with pytest.raises(ConnectionClosed):
                held.recv(timeout=WAIT_SEC)
        assert srv.metric("parakeet_streams_refused_total", {"kind": "realtime"}) == 1
        wait_for(lambda: srv.metric("parakeet_live_streams", {"kind": "realtime"}) == 0, "the slot to be free")
        with raw_session(srv) as ws:
            assert transcribe_raw(ws, clips[0][:48000]) == expected_text(clips[0][:48000])


def test_api_key_is_required_when_set(tmp_path):
    with ServerProcess(["--api-key", "sekret"], tmp_path, model=MODEL) as srv:
        with pytest.raises(InvalidStatus) as refused:
            connect(ws_url(srv), open_timeout=WAIT_SEC)
        assert refused.value.response.status_code == 403
        with connect(ws_url(srv), additional_headers={"Authorization": "Bearer sekret"}, open_timeout=WAIT_SEC) as ws:
            assert recv(ws)["type"] == "session.created"
        with connect(ws_url(srv), subprotocols=["realtime", "openai-insecure-api-key.sekret"],
                     open_timeout=WAIT_SEC) as ws:
            assert ws.subprotocol == "realtime" and recv(ws)["type"] == "session.created"
        # a browser's key (a subprotocol: it cannot set headers) is checked as the header's is
        with pytest.raises(InvalidStatus) as refused:
            connect(ws_url(srv), subprotocols=["realtime", "openai-insecure-api-key.wrong"], open_timeout=WAIT_SEC)
        assert refused.value.response.status_code == 403
