"""Sound events on ``/v1/realtime`` (``transcription.sounds: true`` on a server with
``--sound-model``): the CED fixture's long clip, 5 s of silence and the clip again, sent as 16 kHz PCM16 in
0.1 s appends, with manual commits and under server_vad turns (the sounds hear every sample, turns
or not). The events must tell the library's sound stream (SoundTagger.stream fed the same samples):
every sound it closed is a ``sound_stopped`` with its segment, after a ``sound_started`` with its
class and start; what is open at the end was started and not stopped; nothing else was started; and
they arrive while the audio flows (the first ones before the rest of the audio is sent). A sound too
short to keep is stopped as "dropped". Also: the field is echoed; a server without a sound model
refuses it, as a bad value, and an update that fails on its speakers starts no sounds either;
turning it off, or vanishing, frees the stream."""

import numpy as np
import pytest

from ced_helpers import MODEL as CED, clip
from server_helpers import ServerProcess, wait_for
from stream_helpers import per_test_limit
from test_server_realtime import appends, raw_session, recv, send
from test_server_realtime_speakers import check_streams_freed, update
from parakeet_py import SoundTagger

RATE = 16000
STARTED, STOPPED = "input_audio_buffer.sound_started", "input_audio_buffer.sound_stopped"

_bounded = per_test_limit(180)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    # vad=None: the server's default VAD (the silero-vad package's model), for server_vad turns
    with ServerProcess(["--threads", "1", "--sound-model", str(CED)], tmp_path_factory.mktemp("rtsnd"),
                       vad=None) as srv:
        yield srv


@pytest.fixture(scope="module")
def pcm():
    audio = np.concatenate([clip("long"), np.zeros(5 * RATE, np.float32), clip("long")])
    return np.round(audio * 32767).astype("<i2")


def sounds_session(ws, turn_detection=None):
    send(ws, {"type": "session.update", "session": {"type": "transcription", "audio": {"input": {
        "format": {"type": "audio/pcm", "rate": RATE}, "turn_detection": turn_detection,
        "transcription": {"sounds": True}}}}})
    updated = recv(ws)
    assert updated["type"] == "session.updated", updated
    assert updated["session"]["audio"]["input"]["transcription"]["sounds"] is True


@pytest.mark.parametrize("turn_detection", [None, {"type": "server_vad"}], ids=["manual", "server_vad"])
def test_sound_events_arrive_while_the_audio_flows(server, pcm, turn_detection):
    with raw_session(server) as ws:
        sounds_session(ws, turn_detection)
        first = pcm.size - clip("long").size  # the first clip and the silence, in which its sounds close
        for chunk in appends(pcm[:first].tobytes()):
            send(ws, {"type": "input_audio_buffer.append", "audio": chunk})
        events = []
        while not any(e["type"] == STOPPED for e in events):  # before the rest of the audio is sent
            events.append(recv(ws))
        for chunk in appends(pcm[first:].tobytes()):
            send(ws, {"type": "input_audio_buffer.append", "audio": chunk})
        send(ws, {"type": "input_audio_buffer.clear"})
        while (event := recv(ws))["type"] != "input_audio_buffer.cleared":
            events.append(event)
    with SoundTagger(CED) as tagger, tagger.stream(top_k=0) as stream:
        closed = stream.feed(pcm.astype(np.float32) / 32768.0)
        still_open = stream.active()
    assert closed and still_open  # the clip's sounds close in the silence; the second ones stay open
    sounds = [e for e in events if e["type"] in (STARTED, STOPPED)]
    assert [e["sound"] for e in sounds if e["type"] == STOPPED and not e.get("dropped")] == closed
    started = [(e["sound"]["index"], e["sound"]["start"]) for e in sounds if e["type"] == STARTED]
    assert {(s["index"], s["start"]) for s in closed + still_open} <= set(started)
    open_now = {}
    for e in sounds:  # each sound starts before it stops, and stops once
        key = e["sound"]["index"]
        if e["type"] == STARTED:
            assert key not in open_now, e
            open_now[key] = e["sound"]
        else:
            assert open_now.pop(key) == {k: e["sound"][k] for k in ("index", "label", "start")}, e
    assert sorted(open_now) == sorted(s["index"] for s in still_open)


def test_a_sound_too_short_to_keep_is_stopped_as_dropped():
    """SessionSounds (the session's part, in process) on the conversation clip, a second a feed,
    against a sound stream of its own fed the same: a class that leaves the open ones without a
    segment (closed shorter than the minimum duration) is stopped with "dropped"."""
    from data_helpers import conversation_pcm
    from parakeet_cli.server.realtime_sounds import SessionSounds

    x = conversation_pcm()
    with SoundTagger(CED) as tagger, tagger.stream(top_k=0) as stream:
        sounds, want, events = SessionSounds(tagger, RATE), set(), []
        before = {}
        for at in range(0, x.size, RATE):
            events += sounds.hear(x[at:at + RATE])
            closed = {s["index"] for s in stream.feed(x[at:at + RATE])}
            now = {s["index"]: s for s in stream.active()}
            want |= {(i, s["start"]) for i, s in before.items() if i not in now and i not in closed}
            before = now
        sounds.close()
    dropped = {(e["sound"]["index"], e["sound"]["start"]) for e in events if e.get("dropped")}
    assert dropped and dropped == want


def test_a_server_without_a_sound_model_refuses_and_bad_values_are_errors(tmp_path, server):
    with ServerProcess(["--threads", "1"], tmp_path) as srv, raw_session(srv) as ws:
        error = update(ws, {"sounds": True})
        assert error["type"] == "error" and error["error"]["code"] == "unsupported_value", error
        assert error["error"]["param"] == "session.audio.input.transcription.sounds"
        assert "--sound-model" in error["error"]["message"]
        assert "sounds" not in update(ws, {"language": "en"})["session"]["audio"]["input"]["transcription"]
    with raw_session(server) as ws:
        error = update(ws, {"sounds": "yes"})
        assert error["error"]["code"] == "invalid_value" and error["error"]["param"].endswith(".sounds"), error
        error = update(ws, {"sounds": True, "speakers": True})  # this server has no diarizer
        assert error["error"]["param"].endswith(".speakers"), error
        wait_for(lambda: server.metric("parakeet_realtime_sound_streams") == 0, "the sounds started to be freed")
        assert "sounds" not in update(ws, {"language": "en"})["session"]["audio"]["input"]["transcription"]


def test_turning_sounds_off_or_vanishing_frees_the_stream(server, pcm):
    check_streams_freed(server, "sounds", "parakeet_realtime_sound_streams", pcm[:3 * RATE])
