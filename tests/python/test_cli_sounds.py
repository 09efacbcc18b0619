"""``parakeet-cli sounds`` and ``transcribe --sound-model`` on the CED fixture (tests/data/ced):
the labels and events are the SoundTagger's, in text and JSON."""

import json

import ced_helpers
from cli_helpers import run_cli
from parakeet_py import SoundTagger, load_audio

MODEL = str(ced_helpers.MODEL)
CLIP = str(ced_helpers.clip_path("long"))


def expected():
    with SoundTagger(MODEL) as t:
        pcm = load_audio(CLIP, target_rate=16000)
        return t.classify(pcm, top_k=3), t.events(pcm)


def test_sounds_json_is_the_taggers():
    labels, events = expected()
    result = run_cli("sounds", "-m", MODEL, "--top-k", "3", "--json", CLIP)
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["file"] == CLIP and doc["duration"] == 2.5
    assert doc["labels"] == labels and doc["events"] == events
    assert any(e["label"] == "Silence" and e["start"] == 0.0 and e["end"] == 2.5 for e in doc["events"])


def test_sounds_text_and_stream_options():
    labels, events = expected()
    result = run_cli("sounds", "-m", MODEL, "--top-k", "3", CLIP)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:3] == [f"{t['score']:.3f} {t['label']}" for t in labels]
    assert len(lines) == 3 + len(events)
    # --on 1 opens nothing.
    strict = json.loads(run_cli("sounds", "-m", MODEL, "--on", "1", "--json", CLIP).stdout)
    assert strict["events"] == []
    bad = run_cli("sounds", "-m", MODEL, "--hop", "0.1", CLIP)
    assert bad.exit_code != 0 and "invalid sound options: hop_sec must be at least 0.2" in bad.stderr


def test_transcribe_with_a_sound_model(ctc_model_path):
    _, events = expected()
    result = run_cli("transcribe", "-m", str(ctc_model_path), "--sound-model", MODEL, "-f", "json", CLIP)
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["sound_events"] == events and "text" in doc
    text = run_cli("transcribe", "-m", str(ctc_model_path), "--sound-model", MODEL, CLIP)
    assert text.exit_code == 0, text.stderr
    assert text.stdout.splitlines()[-len(events):] == [f"[{e['start']:.2f} {e['end']:.2f} {e['label']}]" for e in events]
    refused = run_cli("transcribe", "-m", str(ctc_model_path), "--sound-model", MODEL, "-f", "srt", CLIP)
    assert refused.exit_code != 0 and "--sound-model goes with --format text or json" in refused.stderr
