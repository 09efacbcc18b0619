"""parakeet-cli transcribe --diarize-model D --voices R --speaker-model E: text prints "Ada: ..."
for the utterances of the enrolled speaker and "[Speaker N] ..." for the others, json gives words
and utterances their "name" and "name_score", both equal to the Python API's named transcript;
usage errors when one of the three options is missing or --stream is asked for."""

import json

import pytest
from cli_helpers import run_cli as run
from voice_helpers import ASR, CLIP, DIARIZER, ENCODER, saved_registry_and_transcript


@pytest.fixture(scope="module")
def named(tmp_path_factory):
    """(the registry file, the Python API's named transcript of the clip)."""
    return saved_registry_and_transcript(tmp_path_factory.mktemp("voices"))


def named_run(registry, *extra):
    return run("transcribe", "-m", ASR, "--diarize-model", DIARIZER, "--voices", registry,
               "--speaker-model", ENCODER, *extra, CLIP)


def test_text_names_the_enrolled_speaker(named):
    registry, expected = named
    r = named_run(registry)
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines == [f"Ada: {u.text}" if u.name else f"[Speaker {u.speaker + 1}] {u.text}"
                     for u in expected.utterances]
    assert any(line.startswith("Ada: ") for line in lines) and any(line.startswith("[Speaker ") for line in lines)


def test_json_carries_names(named):
    registry, expected = named
    r = named_run(registry, "-f", "json")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert [(w["name"], w["name_score"]) for w in doc["words"]] == [(w.name, w.name_score) for w in expected.words]
    assert [u["name"] for u in doc["utterances"]] == [u.name for u in expected.utterances]
    assert "Ada" in {u["name"] for u in doc["utterances"]}


@pytest.mark.parametrize("drop, message", [
    ("--voices", "--voices and --speaker-model go together, with --diarize-model"),
    ("--speaker-model", "--voices and --speaker-model go together, with --diarize-model"),
    ("--diarize-model", "--voices and --speaker-model go together, with --diarize-model"),
])
def test_each_of_the_three_is_needed(named, drop, message):
    options = {"--diarize-model": DIARIZER, "--voices": named[0], "--speaker-model": ENCODER}
    del options[drop]
    r = run("transcribe", "-m", ASR, *[x for kv in options.items() for x in kv], CLIP)
    assert r.exit_code == 2 and message in r.stderr, r.stderr


def test_not_with_stream(named):
    r = named_run(named[0], "--stream")
    assert r.exit_code == 2 and "--voices does not go with --stream" in r.stderr, r.stderr


def test_a_file_that_is_not_a_registry_is_a_clear_error(named):
    r = named_run(CLIP)
    assert r.exit_code == 1 and r.stderr.startswith("Error: ") and len(r.stderr.strip().splitlines()) == 1, r.stderr
