"""Names on ``/v1/realtime`` turns: a server with ``--diarize-model``, ``--speaker-model`` and
``--voices`` gives a session that asks for speakers the library's live names on its completed
items' words and segments. Two voices are enrolled: "Ada" from the 30 s clip's one slot with
clean voice (voice_helpers) and "Bob" from noise. The conversation is sent at 16 kHz in three
manually committed items; each completed event must equal what parakeet_py computes on its own:
one scene stream (the diarizer, the encoder, the registry, at the server's latency and
``--voice-min-seconds``) fed the session's audio up to the item's end, its closed and open
segments (open ones ending at the audio heard), word_speakers / speaker_utterances, and the
slots' names then. The fixture encoder has random weights, so every speech clip embeds alike:
Ada (not the noise's Bob) names the one slot that gathers a second of clean voice, and the
slots that never do keep their letters with an empty name. Also: a server without --voices
gives no names; --voice-min-seconds without --voices stops the server with one line."""

import subprocess
import sys

import numpy as np
import pytest

from data_helpers import AUDIO
from parakeet_py import Context, Diarizer, Segment, SpeakerEncoder, VoiceRegistry, Word, load_audio
from parakeet_py.speakers import scene_stream
from parakeet_py.speakers.diarize import speaker_utterances, word_speakers
from server_helpers import ROOT, ServerProcess
from stream_helpers import MODELS, SMALL, SMALL_WINDOW, per_test_limit, run_stream
from test_server_realtime import raw_session, recv, send
from test_server_realtime_speakers import COMPLETED, DIAR, OPENAI_KEYS, commit_item, label
from voice_helpers import ENCODER, enrolled_registry

MODEL = MODELS["tdt"]
CONVERSATION = AUDIO / "conversation_16k.wav"
RATE = 16000  # the session's rate: 16 kHz PCM16 reaches the diarizer as it was sent
LATENCY = "very_low"  # the server's default --realtime-diarize-latency
MIN_VOICE = 1.0  # the fixtures' slots never gather the default 2 s of clean voice
CUTS = [0, 4 * RATE, int(10.8 * RATE), None]

_bounded = per_test_limit(240)


@pytest.fixture(scope="module")
def voices(tmp_path_factory):
    path = tmp_path_factory.mktemp("voices") / "voices.pksr"
    with Diarizer(DIAR) as d, SpeakerEncoder(ENCODER) as enc:
        registry, _ = enrolled_registry(d, enc, "Ada")
        noise = (0.1 * np.random.default_rng(0).standard_normal(3 * RATE)).astype(np.float32)
        registry.enroll("Bob", noise, enc, sample_rate=RATE)
        registry.save(path)
        registry.close()
    return path


@pytest.fixture(scope="module")
def conversation():
    return np.round(load_audio(CONVERSATION) * 32767).astype("<i2")


def named_server(voices, directory, *extra):
    args = ["--threads", "1", "--realtime-window", SMALL_WINDOW, "--diarize-model", str(DIAR), "--speaker-model",
            str(ENCODER), "--voices", str(voices), *extra]
    return ServerProcess(args, directory, model=MODEL)


def session_items(srv, pcm):
    """The completed events of the session's three items, [(first, last, event)]."""
    items = []
    with raw_session(srv) as ws:
        send(ws, {"type": "session.update", "session": {"type": "transcription", "audio": {"input": {
            "format": {"type": "audio/pcm", "rate": RATE}, "turn_detection": None,
            "transcription": {"speakers": True}}}}})
        assert recv(ws)["type"] == "session.updated"
        for first, last in zip(CUTS, CUTS[1:]):
            last = pcm.size if last is None else last
            items.append((first, last, commit_item(ws, pcm[first:last])))
    return items


class SceneRun:
    """What parakeet_py computes for the session: one scene stream fed its audio, the segments
    it has closed, and each item's words with their speakers and names."""

    def __init__(self, diarizer, encoder, registry):
        self.stream = scene_stream.begin(diarizer=diarizer, speaker_encoder=encoder, registry=registry,
                                         latency=LATENCY, min_voice_sec=MIN_VOICE)
        self.closed = []

    def hear(self, pcm):
        """Feeds PCM16 ``pcm``; the segments known then (closed, then open to the audio's end)
        and the slots' names."""
        doc = self.stream.feed(pcm.astype(np.float32) / 32768.0)
        self.closed += [Segment(s["speaker"], s["start"], s["end"]) for s in doc["speakers"]]
        segments = self.closed + [Segment(s["speaker"], s["start"], doc["t"]) for s in doc["active"]["speakers"]]
        return segments, {int(slot): n["name"] for slot, n in doc["names"].items()}


def expected_keys(ctx, run, pcm, first, last):
    """(words, utterances) that the item [first, last) of ``pcm`` must carry, the scene stream
    having heard the session's audio up to ``first``."""
    segments, names = run.hear(pcm[first:last])
    _, words, _, _ = run_stream(ctx.stream(**SMALL, sample_rate=RATE), pcm[first:last], [last - first])
    start = first / RATE
    words = [Word(w.text, round(start + w.start, 3), round(start + w.end, 3), w.confidence) for w in words]
    who = [(label(s), names.get(s, "")) for s in word_speakers(words, segments)]
    utterances = [(label(u.speaker), names.get(u.speaker, ""), u.text, round(u.start, 3), round(u.end, 3))
                  for u in speaker_utterances(words, segments)]
    return [(w.text, w.start, w.end) + pair for w, pair in zip(words, who)], utterances


def test_turns_carry_the_registrys_names_by_the_live_rules(voices, conversation, tmp_path):
    with named_server(voices, tmp_path, "--voice-min-seconds", str(MIN_VOICE)) as srv:
        items = session_items(srv, conversation)
    named = []
    with Context(MODEL) as ctx, Diarizer(DIAR) as d, SpeakerEncoder(ENCODER) as enc:
        registry = VoiceRegistry.load(voices)
        run = SceneRun(d, enc, registry)
        with run.stream:
            for first, last, event in items:
                assert set(event) == OPENAI_KEYS | {"words", "segments"}, event
                words, utterances = expected_keys(ctx, run, conversation, first, last)
                assert [(w["word"], w["start"], w["end"], w["speaker"], w["name"]) for w in event["words"]] == words
                assert [(s["speaker"], s["name"], s["text"], s["start"], s["end"]) for s in event["segments"]] == \
                    utterances
                named += [(w["speaker"], w["name"]) for w in event["words"]]
        registry.close()
    # Ada names a speaker of the later items; a speaker the registry never named keeps its letter
    assert any(name == "Ada" for _, name in named), named
    assert any(name == "" and speaker != "unknown" for speaker, name in named), named
    assert not any(name == "Bob" for _, name in named)
    # one name per speaker once it is named
    assert len({speaker for speaker, name in named if name == "Ada"}) == 1


def test_without_voices_turns_have_no_names(conversation, tmp_path):
    args = ["--threads", "1", "--realtime-window", SMALL_WINDOW, "--diarize-model", str(DIAR)]
    with ServerProcess(args, tmp_path, model=MODEL) as srv, raw_session(srv) as ws:
        send(ws, {"type": "session.update", "session": {"type": "transcription", "audio": {"input": {
            "format": {"type": "audio/pcm", "rate": RATE}, "turn_detection": None,
            "transcription": {"speakers": True}}}}})
        assert recv(ws)["type"] == "session.updated"
        event = commit_item(ws, conversation[:3 * RATE])
    assert event["type"] == COMPLETED and event["words"]
    assert all("name" not in w for w in event["words"]) and all("name" not in s for s in event["segments"])


def test_voice_min_seconds_without_voices_is_a_usage_error():
    result = subprocess.run([sys.executable, "-m", "parakeet_cli.server", "--model", str(MODEL), "--voice-min-seconds",
                             "1"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    assert "--voice-min-seconds goes with --voices" in result.stderr
