"""Speakers on ``/v1/realtime`` turns (``transcription.speakers: true`` on a server with
``--diarize-model``): the conversation fixture streamed as 24 kHz PCM16, through the official
openai client (GA, manual commits), a raw beta socket (server_vad turns, appends of 0.1 s and
1.5 s) and semantic_vad turns on the <EOU> model. Each completed item's words are the Python
stream's words of the item's audio moved onto the session's timeline, and their speakers and
segments are what parakeet_py computes independently: one DiarizerStream fed the session's
audio up to the item's end (soxr to 16 kHz), its closed and active segments, word_speakers /
speaker_utterances. So the labels are the session's, the same speaker across turns. Also: a
new audio rate keeps the timeline; the session echoes the field; a server without a
diarizer, or with one that cannot stream, refuses it; a bad value; speakers off adds nothing;
a session that vanishes mid-item, or turns speakers off, frees its diarization stream."""

import base64
import socket

import numpy as np
import openai
import pytest
import soxr
from websockets.sync.client import connect

from data_helpers import AUDIO, CACHE_AWARE_MODELS, NEMO_DIR
from parakeet_py import Context, Diarizer, Word, load_audio
from parakeet_py.speakers.diarize import speaker_utterances, word_speakers
from server_helpers import ServerProcess, wait_for
from stream_helpers import MODELS, SMALL, SMALL_WINDOW, per_test_limit, run_stream
from test_server_realtime import appends, pcm24, raw_session, recv, send, ws_url

MODEL = MODELS["tdt"]
EOU_MODEL = CACHE_AWARE_MODELS["ca_eou"]
DIAR = NEMO_DIR / "sortformer_stream" / "model.gguf"
CONVERSATION = AUDIO / "conversation_16k.wav"  # 14 s, three voices, pauses and an overlap
WAIT_SEC = 60
RATE = 24000
LATENCY = "very_low"  # the server's default --realtime-diarize-latency
COMPLETED = "conversation.item.input_audio_transcription.completed"
OPENAI_KEYS = {"event_id", "type", "item_id", "content_index", "transcript", "usage"}

pytestmark = pytest.mark.skipif(not (MODEL.exists() and DIAR.exists()), reason="fixture model missing")
_bounded = per_test_limit(240)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    # vad=None: the server's default VAD (the silero-vad package's model), for server_vad turns
    with ServerProcess(["--threads", "1", "--realtime-window", SMALL_WINDOW, "--diarize-model", str(DIAR)],
                       tmp_path_factory.mktemp("rtspk"), model=MODEL, vad=None) as srv:
        yield srv


@pytest.fixture(scope="module")
def conversation():
    """The conversation, then 1 s of silence (so server_vad closes its last turn), as 24 kHz PCM16."""
    audio = np.concatenate([load_audio(CONVERSATION), np.zeros(16000, np.float32)])
    return np.frombuffer(pcm24(audio), dtype="<i2")


class DiarizerRun:
    """What parakeet_py computes for a session: one diarization stream fed the session's PCM16
    (resampled to 16 kHz by a soxr stream per rate), and each item's words and speakers."""

    def __init__(self):
        self.diarizer = Diarizer(DIAR)
        self.stream = self.diarizer.stream(latency=LATENCY)
        self.closed, self.rate, self.resampler = [], None, None

    def hear(self, pcm, rate):
        """Appends ``pcm`` at ``rate``; returns the segments known then: closed, then open."""
        if rate != self.rate:
            self.rate = rate
            self.resampler = None if rate == 16000 else soxr.ResampleStream(rate, 16000, 1, dtype="float32",
                                                                            quality="HQ")
        audio = pcm.astype(np.float32) / 32768.0
        self.closed += self.stream.feed(audio if self.resampler is None else self.resampler.resample_chunk(audio))
        return self.closed + self.stream.active

    def close(self):
        self.stream.close()
        self.diarizer.close()


def label(speaker):
    return chr(ord("A") + speaker) if speaker >= 0 else "unknown"


def check_item(ctx, pcm, rate, start, event, segments, window=SMALL):
    """One completed ``event`` of an item of audio ``pcm`` at ``rate`` that starts ``start``
    seconds into the session, against the segments known at its end (``window``: the server's
    --realtime-window; {} for a cache-aware model). Returns its labels."""
    assert set(event) == OPENAI_KEYS | {"words", "segments"}, event
    _, words, _, _ = run_stream(ctx.stream(**window, sample_rate=rate), pcm, [pcm.size])
    want = [Word(w.text, round(start + w.start, 3), round(start + w.end, 3), w.confidence) for w in words]
    assert [(w["word"], w["start"], w["end"]) for w in event["words"]] == [(w.text, w.start, w.end) for w in want]
    assert [w["speaker"] for w in event["words"]] == [label(s) for s in word_speakers(want, segments)]
    assert [(s["speaker"], s["text"], s["start"], s["end"]) for s in event["segments"]] == [
        (label(u.speaker), u.text, round(u.start, 3), round(u.end, 3)) for u in speaker_utterances(want, segments)]
    assert [s["type"] for s in event["segments"]] == ["transcript.text.segment"] * len(event["segments"])
    assert [s["id"] for s in event["segments"]] == [f"seg_{i}" for i in range(len(event["segments"]))]
    return {w["speaker"] for w in event["words"]} - {"unknown"}


def check_items(pcm, items, model=MODEL, window=SMALL):
    """``items``: [(first, last, completed event as a dict)] of one 24 kHz session, in order."""
    run, at, labels = DiarizerRun(), 0, []
    try:
        with Context(model) as ctx:
            for first, last, event in items:
                segments = run.hear(pcm[at:last], RATE)
                at = last
                labels.append(check_item(ctx, pcm[first:last], RATE, first / RATE, event, segments, window))
    finally:
        run.close()
    # two speakers or more, and a speaker heard in more than one item under one label
    assert len(set().union(*labels)) >= 2
    assert any(labels[i] & labels[j] for i in range(len(items)) for j in range(i))


def test_ga_client_manual_commits_get_the_sessions_speakers(server, conversation):
    cuts = [0, 4 * RATE, int(10.8 * RATE), conversation.size]
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="unused")
    with client.realtime.connect(model="parakeet", extra_query={"intent": "transcription"}) as conn:
        assert conn.recv().type == "session.created"
        conn.session.update(session={"type": "transcription", "audio": {"input": {
            "format": {"type": "audio/pcm", "rate": RATE}, "turn_detection": None,
            "transcription": {"model": "parakeet", "speakers": True}}}})
        updated = conn.recv()
        assert updated.type == "session.updated", updated
        assert updated.session.audio.input.transcription.model_extra["speakers"] is True
        items = []
        for first, last in zip(cuts, cuts[1:]):
            for chunk in appends(conversation[first:last].tobytes()):
                conn.input_audio_buffer.append(audio=chunk)
            conn.input_audio_buffer.commit()
            while (event := conn.recv()).type != COMPLETED:
                pass
            items.append((first, last, event.model_dump(exclude_unset=True)))
    check_items(conversation, items)


def beta_session(srv):
    return connect(ws_url(srv), open_timeout=WAIT_SEC, additional_headers={"OpenAI-Beta": "realtime=v1"})


# With appends of 1.5 s the VAD reports a turn's end in an append that runs well past it: the
# diarizer has still heard the turn's audio only when the item is attributed.
@pytest.mark.parametrize("append_seconds", [0.1, 1.5])
def test_beta_server_vad_turns_get_the_sessions_speakers(server, conversation, append_seconds):
    with beta_session(server) as ws:
        assert recv(ws)["type"] == "transcription_session.created"
        send(ws, {"type": "transcription_session.update", "session": {
            "input_audio_transcription": {"speakers": True},
            "turn_detection": {"type": "server_vad", "silence_duration_ms": 500}}})
        updated = recv(ws)
        assert updated["type"] == "transcription_session.updated", updated
        assert updated["session"]["input_audio_transcription"]["speakers"] is True
        step = int(append_seconds * RATE)
        for at in range(0, conversation.size, step):
            send(ws, {"type": "input_audio_buffer.append",
                      "audio": base64.b64encode(conversation[at:at + step].tobytes()).decode()})
        send(ws, {"type": "input_audio_buffer.clear"})
        events = []
        while not events or events[-1]["type"] != "input_audio_buffer.cleared":
            events.append(recv(ws))
    starts = {e["item_id"]: e["audio_start_ms"] for e in events if e["type"] == "input_audio_buffer.speech_started"}
    stops = {e["item_id"]: e["audio_end_ms"] for e in events if e["type"] == "input_audio_buffer.speech_stopped"}
    completed = [e for e in events if e["type"] == COMPLETED]
    assert len(completed) >= 2
    # a turn's audio is [audio_start_ms, audio_end_ms) of what was sent (24 samples a ms)
    check_items(conversation, [(starts[e["item_id"]] * 24, stops[e["item_id"]] * 24, e) for e in completed])


def update(ws, transcription, turn_detection=None):
    send(ws, {"type": "session.update", "session": {"type": "transcription", "audio": {"input": {
        "transcription": transcription, "turn_detection": turn_detection}}}})
    return recv(ws)


def test_speakers_off_changes_nothing(server, conversation):
    with raw_session(server) as ws:
        updated = update(ws, {"speakers": False})
        assert "speakers" not in updated["session"]["audio"]["input"]["transcription"]
        event = commit_item(ws, conversation[:3 * RATE])
    assert set(event) == OPENAI_KEYS and event["transcript"]


@pytest.mark.parametrize("value", ["yes", 1, None, {"on": True}])
def test_a_bad_value_is_an_error_event(server, value):
    with raw_session(server) as ws:
        error = update(ws, {"speakers": value})
        assert error["type"] == "error", error
        assert error["error"]["code"] == "invalid_value"
        assert error["error"]["param"] == "session.audio.input.transcription.speakers"
        assert "speakers" not in update(ws, {"speakers": False})["session"]["audio"]["input"]["transcription"]
    with beta_session(server) as ws:
        recv(ws)
        send(ws, {"type": "transcription_session.update", "session": {"input_audio_transcription": {"speakers": value}}})
        error = recv(ws)
        assert error["error"]["param"] == "session.input_audio_transcription.speakers", error


def commit_item(ws, pcm):
    for chunk in appends(pcm.tobytes()):
        send(ws, {"type": "input_audio_buffer.append", "audio": chunk})
    send(ws, {"type": "input_audio_buffer.commit"})
    while (event := recv(ws))["type"] != COMPLETED:
        pass
    return event


def test_a_new_rate_keeps_the_sessions_timeline(server):
    """4 s at 16 kHz, then the session switches to 24 kHz: the second item starts at 4 s on the
    timeline, and the diarizer heard the first item's audio as it was."""
    audio = load_audio(CONVERSATION)
    first = np.round(audio[:4 * 16000] * 32767).astype("<i2")
    second = np.frombuffer(pcm24(audio[4 * 16000:int(10.8 * 16000)]), dtype="<i2")
    with raw_session(server) as ws:
        send(ws, {"type": "session.update", "session": {"type": "transcription", "audio": {"input": {
            "format": {"type": "audio/pcm", "rate": 16000}, "turn_detection": None,
            "transcription": {"speakers": True}}}}})
        assert recv(ws)["type"] == "session.updated"
        events = [commit_item(ws, first)]
        send(ws, {"type": "session.update", "session": {"type": "transcription", "audio": {"input": {
            "format": {"type": "audio/pcm", "rate": RATE}}}}})
        assert recv(ws)["session"]["audio"]["input"]["transcription"]["speakers"] is True
        events.append(commit_item(ws, second))
    run = DiarizerRun()
    try:
        with Context(MODEL) as ctx:
            check_item(ctx, first, 16000, 0.0, events[0], run.hear(first, 16000))
            check_item(ctx, second, RATE, 4.0, events[1], run.hear(second, RATE))
    finally:
        run.close()


def check_streams_freed(srv, field, metric, pcm):
    """A session that turns ``field`` on (one stream counted by ``metric``) and off, and one that
    vanishes mid-item with it on, free their streams."""
    def streams():
        return srv.metric(metric)

    wait_for(lambda: streams() == 0, "earlier sessions' streams to be freed")
    with raw_session(srv) as ws:
        assert update(ws, {field: True})["type"] == "session.updated"
        assert streams() == 1
        assert field not in update(ws, {field: False})["session"]["audio"]["input"]["transcription"]
        wait_for(lambda: streams() == 0, "the stream turned off to be freed")
    with raw_session(srv) as ws:
        assert update(ws, {field: True})["type"] == "session.updated"
        for chunk in list(appends(pcm.tobytes())):
            send(ws, {"type": "input_audio_buffer.append", "audio": chunk})
        ws.socket.shutdown(socket.SHUT_RDWR)  # gone mid-item, without a close frame
    wait_for(lambda: streams() == 0, "the vanished session's stream to be freed")


def test_a_vanished_session_or_speakers_turned_off_free_the_diarization_stream(server, conversation):
    check_streams_freed(server, "speakers", "parakeet_realtime_speaker_streams", conversation[:5 * RATE])
    wait_for(lambda: server.metric("parakeet_live_streams", {"kind": "realtime"}) == 0, "the session to be freed")
    with raw_session(server) as ws:  # the server goes on
        assert update(ws, {"speakers": True})["type"] == "session.updated"
        assert "words" in commit_item(ws, conversation[:2 * RATE])


@pytest.mark.parametrize("diarizer", [None, NEMO_DIR / "sortformer_offline" / "model.gguf"],
                         ids=["no-diarizer", "per-feature-diarizer"])
def test_servers_that_cannot_diarize_live_refuse_speakers(tmp_path, diarizer):
    args = ["--threads", "1"] + (["--diarize-model", str(diarizer)] if diarizer else [])
    with ServerProcess(args, tmp_path, model=MODEL) as srv, raw_session(srv) as ws:
        error = update(ws, {"speakers": True})
        assert error["type"] == "error" and error["error"]["code"] == "unsupported_value", error
        assert error["error"]["param"] == "session.audio.input.transcription.speakers"
        assert ("--diarize-model" if diarizer is None else "per_feature") in error["error"]["message"]
        # nothing of the update was applied; the session goes on
        assert "speakers" not in update(ws, {"language": "en"})["session"]["audio"]["input"]["transcription"]
        assert srv.metric("parakeet_realtime_speaker_streams") == 0


@pytest.mark.skipif(not EOU_MODEL.exists(), reason="fixture model missing")
def test_semantic_vad_turns_get_the_sessions_speakers(tmp_path, conversation):
    """A turn ends at the model's <EOU> (or the VAD's fallback): the item holds the audio fed
    until then, [audio_start_ms, + usage.seconds), and the diarizer has heard up to its end."""
    pcm = np.concatenate([conversation, np.zeros(3 * RATE, np.int16)])  # 3 s more: the last turn ends
    with ServerProcess(["--threads", "1", "--diarize-model", str(DIAR)], tmp_path, model=EOU_MODEL,
                       vad=None) as srv, raw_session(srv) as ws:
        updated = update(ws, {"speakers": True}, {"type": "semantic_vad", "eagerness": "high"})
        assert updated["type"] == "session.updated", updated
        for chunk in appends(pcm.tobytes()):
            send(ws, {"type": "input_audio_buffer.append", "audio": chunk})
        send(ws, {"type": "input_audio_buffer.clear"})
        events = []
        while not events or events[-1]["type"] != "input_audio_buffer.cleared":
            events.append(recv(ws))
    starts = {e["item_id"]: e["audio_start_ms"] for e in events if e["type"] == "input_audio_buffer.speech_started"}
    completed = [e for e in events if e["type"] == COMPLETED]
    assert len(completed) >= 2
    # turn bounds lie on the VAD's frames, whole milliseconds at 24 kHz
    items = [(starts[e["item_id"]] * 24, (starts[e["item_id"]] + round(e["usage"]["seconds"] * 1000)) * 24, e)
             for e in completed]
    check_items(pcm, items, EOU_MODEL, {})
