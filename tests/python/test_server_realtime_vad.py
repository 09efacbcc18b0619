"""Turn detection of ``/v1/realtime``: the official openai client streams two utterances with a
pause between them and never commits; the server's Silero VAD finds the two turns
(speech_started / speech_stopped within two 32 ms frames of the VAD's own segments of the same
audio), commits each itself and transcribes each as the Python stream transcribes that turn's
audio. Also: server_vad is the default, null keeps manual commits, bad settings are error
events, semantic_vad is refused on a model without <EOU> and commits at the model's <EOU>."""

import base64

import numpy as np
import openai
import pytest
import soundfile as sf

from parakeet_py import Context, Vad
from parakeet_py.vad import default_model
from server_helpers import ServerProcess
from data_helpers import CACHE_AWARE_MODELS
from stream_helpers import MODELS, SMALL, SMALL_WINDOW, SPEECH, per_test_limit, run_stream
from test_server_realtime import pcm24, raw_session as raw, recv, send

MODEL = MODELS["tdt"]
EOU_MODEL = CACHE_AWARE_MODELS["ca_eou"]
WAIT_SEC = 60
APPEND_BYTES = 4800  # 0.1 s of 24 kHz PCM16
FRAME_MS = 32
SETTINGS = {"type": "server_vad", "threshold": 0.5, "prefix_padding_ms": 300, "silence_duration_ms": 500}

pytestmark = pytest.mark.skipif(not MODEL.exists(), reason="fixture model missing")
_bounded = per_test_limit(240)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with ServerProcess(["--threads", "1", "--realtime-window", SMALL_WINDOW], tmp_path_factory.mktemp("rtvad"),
                       model=MODEL, vad=None) as srv:  # the server's default VAD: the package's model
        yield srv


@pytest.fixture(scope="module")
def two_utterances():
    """0.5 s silence, the fixture speech up to its first pause, 1.5 s silence, the rest, 1 s
    silence (faint noise under all of it), at 16 kHz."""
    speech, rate = sf.read(str(SPEECH), dtype="float32")
    cut = int(3.1 * rate)  # in the fixture's first pause (2.91-3.30 s)
    quiet = [np.zeros(int(s * rate), np.float32) for s in (0.5, 1.5, 1.0)]
    audio = np.concatenate([quiet[0], speech[:cut], quiet[1], speech[cut:], quiet[2]])
    return audio + np.random.default_rng(20).normal(0, 1e-3, audio.size).astype(np.float32)


def appends(pcm: bytes):
    for i in range(0, len(pcm), APPEND_BYTES):
        yield base64.b64encode(pcm[i:i + APPEND_BYTES]).decode()


def turns_of(recv, n):
    """Reads events until ``n`` completed items: [(speech_started, speech_stopped, committed,
    deltas, completed)] per item, checking their order."""
    out, current = [], {}
    while len(out) < n:
        event = recv()
        kind = event.type
        if kind == "input_audio_buffer.speech_started":
            assert not current, current
            current = {"started": event, "deltas": []}
        elif kind == "conversation.item.input_audio_transcription.delta":
            assert "stopped" not in current or "committed" in current
            current["deltas"].append(event)
        elif kind == "input_audio_buffer.speech_stopped":
            current["stopped"] = event
        elif kind == "input_audio_buffer.committed":
            assert "stopped" in current
            current["committed"] = event
        elif kind == "conversation.item.input_audio_transcription.completed":
            assert "committed" in current
            out.append((current["started"], current["stopped"], current["committed"], current["deltas"], event))
            current = {}
        else:
            raise AssertionError(f"unexpected event {event}")
    return out


def test_openai_client_gets_two_turns_at_the_vads_times(server, two_utterances):
    pcm = pcm24(two_utterances)
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="unused")
    with client.realtime.connect(model="parakeet", extra_query={"intent": "transcription"}) as conn:
        created = conn.recv()
        assert created.type == "session.created"
        assert created.session.audio.input.turn_detection.type == "server_vad"  # OpenAI's default
        conn.session.update(session={"type": "transcription", "audio": {"input": {
            "format": {"type": "audio/pcm", "rate": 24000}, "turn_detection": SETTINGS}}})
        updated = conn.recv()
        assert updated.type == "session.updated", updated
        assert updated.session.audio.input.turn_detection.silence_duration_ms == 500
        for chunk in appends(pcm):
            conn.input_audio_buffer.append(audio=chunk)
        turns = turns_of(conn.recv, 2)

    with Vad(default_model()) as vad:
        want = vad.segments(two_utterances, 16000, threshold=0.5, min_pause=0.5, speech_pad=0.0)
    assert len(want) == 2, want
    samples = np.frombuffer(pcm, dtype="<i2")
    previous = None
    for (started, stopped, committed, deltas, completed), segment in zip(turns, want):
        assert abs(started.audio_start_ms - (segment["start"] * 1000 - 300)) <= 2 * FRAME_MS
        assert abs(stopped.audio_end_ms - (segment["end"] * 1000 + 500)) <= 2 * FRAME_MS
        item = started.item_id
        assert stopped.item_id == committed.item_id == completed.item_id == item
        assert committed.previous_item_id == previous
        previous = item
        assert "".join(d.delta for d in deltas) == completed.transcript
        # the turn's audio is exactly [audio_start_ms, audio_end_ms) of what was sent
        first, last = started.audio_start_ms * 24, stopped.audio_end_ms * 24
        assert completed.usage.seconds == pytest.approx((last - first) / 24000, abs=1e-3)
        with Context(MODEL) as ctx:
            text = run_stream(ctx.stream(**SMALL, sample_rate=24000), samples[first:last], [last - first])[0]
        assert completed.transcript == text


def update(ws, turn_detection):
    send(ws, {"type": "session.update", "session": {"type": "transcription",
                                                    "audio": {"input": {"turn_detection": turn_detection}}}})
    return recv(ws)


def test_null_turn_detection_keeps_manual_commits(server, two_utterances):
    with raw(server) as ws:
        assert update(ws, None)["session"]["audio"]["input"]["turn_detection"] is None
        for chunk in appends(pcm24(two_utterances)):
            send(ws, {"type": "input_audio_buffer.append", "audio": chunk})
        send(ws, {"type": "input_audio_buffer.commit"})
        kinds = []
        while not kinds or kinds[-1] != "conversation.item.input_audio_transcription.completed":
            kinds.append(recv(ws)["type"])
    assert "input_audio_buffer.committed" in kinds
    assert not {"input_audio_buffer.speech_started", "input_audio_buffer.speech_stopped"} & set(kinds)


@pytest.mark.parametrize("turn_detection, param", [
    ({"type": "server_vad", "threshold": 0}, "session.audio.input.turn_detection.threshold"),
    ({"type": "server_vad", "threshold": "loud"}, "session.audio.input.turn_detection.threshold"),
    ({"type": "server_vad", "silence_duration_ms": 20000}, "session.audio.input.turn_detection.silence_duration_ms"),
    ({"type": "server_vad", "prefix_padding_ms": -1}, "session.audio.input.turn_detection.prefix_padding_ms"),
    ({"type": "server_vad", "idle_timeout_ms": 5000}, "session.audio.input.turn_detection.idle_timeout_ms"),
    ({"type": "server_vad", "loudness": 1}, "session.audio.input.turn_detection.loudness"),
    ({"type": "client_vad"}, "session.audio.input.turn_detection.type"),
    ({"type": "semantic_vad"}, "session.audio.input.turn_detection"),  # this model has no <EOU>
])
def test_bad_turn_detection_is_an_error_event(server, turn_detection, param):
    with raw(server) as ws:
        error = update(ws, turn_detection)
        assert error["type"] == "error" and error["error"]["param"] == param, error
        assert update(ws, SETTINGS)["type"] == "session.updated"  # the session goes on


def test_a_server_without_vad_refuses_server_vad(tmp_path):
    with ServerProcess(["--threads", "1"], tmp_path, model=MODEL) as srv, raw(srv) as ws:  # --vad-model none
        error = update(ws, {"type": "server_vad"})
    assert error["type"] == "error" and "no VAD model" in error["error"]["message"]


@pytest.mark.skipif(not EOU_MODEL.exists(), reason="fixture model missing")
def test_semantic_vad_commits_at_the_models_end_of_utterance(tmp_path, two_utterances):
    """On a model with <EOU>, a turn ends at the first <EOU> its stream decodes: each committed
    turn's audio_end_ms is its start plus the time of the first <EOU> of the model's stream
    fed the turn's audio."""
    pcm = pcm24(two_utterances)
    samples = np.frombuffer(pcm, dtype="<i2")
    with ServerProcess(["--threads", "1"], tmp_path, model=EOU_MODEL, vad=None) as srv, raw(srv) as ws:
        assert update(ws, {"type": "semantic_vad", "eagerness": "high"})["type"] == "session.updated"
        for chunk in appends(pcm):
            send(ws, {"type": "input_audio_buffer.append", "audio": chunk})
        events = []
        # the last turn ends at its <EOU> or 2 s (eagerness high) after the speech: 1 s of
        # silence follows it, so more audio closes it
        for chunk in appends(pcm24(np.zeros(3 * 16000, np.float32))):
            send(ws, {"type": "input_audio_buffer.append", "audio": chunk})
        send(ws, {"type": "input_audio_buffer.clear"})
        while not events or events[-1]["type"] != "input_audio_buffer.cleared":
            events.append(recv(ws))
    starts = {e["item_id"]: e["audio_start_ms"] for e in events if e["type"] == "input_audio_buffer.speech_started"}
    stops = [e for e in events if e["type"] == "input_audio_buffer.speech_stopped"]
    assert stops and len(stops) == len([e for e in events if e["type"].endswith("transcription.completed")])
    at_eou = 0
    with Context(EOU_MODEL) as ctx:
        for stop in stops:
            start_ms = starts[stop["item_id"]]
            first = start_ms * 24
            s = ctx.stream(sample_rate=24000)
            eous = []
            for begin in range(0, samples.size - first, 2400):
                eous += [e.time for e in s.feed(samples[first + begin:first + begin + 2400]).events if e.type == "eou"]
            s.close()
            # a turn ends at its first <EOU>, or earlier at the VAD's end (2 s of silence)
            if eous and stop["audio_end_ms"] == pytest.approx(start_ms + eous[0] * 1000, abs=1):
                at_eou += 1
            else:
                assert not eous or stop["audio_end_ms"] < start_ms + eous[0] * 1000
    assert at_eou >= 1
