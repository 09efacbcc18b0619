"""parakeet-cli transcribe --diarize-model: every format labels speakers (text: one
"[Speaker N] ..." line per utterance; json: words with "speaker", plus "segments" and
"utterances"; srt / vtt: a cue per speaker run, starting with its label), equal to what the
Python API gives for the same files; and the options it does not go with."""

import json
import re

import pytest
from cli_helpers import run_cli as run
from data_helpers import AUDIO, NEMO_DIR
from parakeet_cli.subtitles import group_words
from parakeet_py import Context, Diarizer, Word

ASR = NEMO_DIR / "hybrid_tdt_ctc" / "model.gguf"
DIAR = NEMO_DIR / "sortformer_offline" / "model.gguf"
CLIP = AUDIO / "conversation_16k.wav"


@pytest.fixture(scope="module")
def expected():
    with Context(ASR) as ctx, Diarizer(DIAR) as d:
        return ctx.transcribe(CLIP, diarizer=d)


def label(speaker):
    return f"[Speaker {speaker + 1}]" if speaker >= 0 else "[Speaker ?]"


def test_text_prints_one_labelled_line_per_utterance(expected):
    r = run("transcribe", "-m", ASR, "--diarize-model", DIAR, CLIP)
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines() == [f"{label(u.speaker)} {u.text}" for u in expected.utterances]
    assert len({u.speaker for u in expected.utterances}) >= 2
    # Several files: each line keeps the file name in front.
    r = run("transcribe", "-m", ASR, "--diarize-model", DIAR, "-c", "2", CLIP, CLIP)
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines() == [f"{CLIP}\t{label(u.speaker)} {u.text}" for u in expected.utterances] * 2


def test_json_words_carry_speakers(expected):
    r = run("transcribe", "-m", ASR, "--diarize-model", DIAR, "-f", "json", CLIP)
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert [w["speaker"] for w in doc["words"]] == [w.speaker for w in expected.words]
    assert [u["text"] for u in doc["utterances"]] == [u.text for u in expected.utterances]
    assert len(doc["segments"]) == len(expected.segments)


@pytest.mark.parametrize("fmt", ["srt", "vtt"])
def test_subtitle_cues_start_with_their_speaker(fmt, expected):
    r = run("transcribe", "-m", ASR, "--diarize-model", DIAR, "-f", fmt, CLIP)
    assert r.exit_code == 0, r.output
    cues = [c.text for c in group_words(expected.words, expected.duration)]
    texts = re.findall(r"--> [0-9:.,]+\n(.*?)(?:\n\n|\n?$)", r.stdout, re.S)
    assert [t.replace("\n", " ") for t in texts] == cues
    assert all(re.match(r"\[Speaker (\d|\?)\][ \n]", t) for t in texts)  # never split inside the label


def test_cues_break_where_the_speaker_changes():
    words = [Word("a", 0.0, 0.2, 0.9, 0), Word("b", 0.3, 0.5, 0.9, 0), Word("c", 0.6, 0.8, 0.9, 1),
             Word("d", 0.9, 1.0, 0.9, -1)]
    assert [c.text for c in group_words(words)] == ["[Speaker 1] a b", "[Speaker 2] c", "[Speaker ?] d"]
    # Without speakers nothing changes.
    assert [c.text for c in group_words([Word("a", 0.0, 0.2, 0.9), Word("b", 0.3, 0.5, 0.9)])] == ["a b"]


@pytest.mark.parametrize("extra", [["--beam", "2"], ["--vad"], ["-d", "ctc"]])
def test_options_it_does_not_go_with(extra):
    r = run("transcribe", "-m", ASR, "--diarize-model", DIAR, *extra, CLIP)
    assert r.exit_code == 2
    assert "--diarize-model" in r.stderr
