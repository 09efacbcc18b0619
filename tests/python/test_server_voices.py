"""``parakeet-server --diarize-model D --speaker-model E --voices R``: diarized_json gives each
segment its speaker's registered "name" beside "speaker", equal to Context.transcribe(diarizer=,
speakers=, speaker_encoder=); the other formats and a server without --voices are unchanged;
--voices without --speaker-model, and a registry the server cannot read, stop it with one line."""

import os
import subprocess
import sys

import httpx
import pytest
from openai.types.audio import TranscriptionDiarized

from server_helpers import MODEL, ROOT, ServerProcess
from voice_helpers import CLIP, DIARIZER, ENCODER, saved_registry_and_transcript


@pytest.fixture(scope="module")
def registry_and_expected(tmp_path_factory):
    return saved_registry_and_transcript(tmp_path_factory.mktemp("voices"))


@pytest.fixture(scope="module")
def server(tmp_path_factory, registry_and_expected):
    args = ["--diarize-model", str(DIARIZER), "--speaker-model", str(ENCODER), "--voices",
            str(registry_and_expected[0]), "--max-audio-seconds", "40"]
    with ServerProcess(args, tmp_path_factory.mktemp("voices-server")) as srv:
        yield srv


def post(srv, **data):
    return httpx.post(srv.url + "/v1/audio/transcriptions", files={"file": ("a.wav", CLIP.read_bytes(), "audio/wav")},
                      data=data, timeout=120)


def test_diarized_json_names_the_enrolled_speaker(server, registry_and_expected):
    expected = registry_and_expected[1]
    r = post(server, response_format="diarized_json")
    assert r.status_code == 200, r.text
    segments = r.json()["segments"]
    TranscriptionDiarized.model_validate(r.json())  # still OpenAI's shape, with one key more per segment
    assert [(s["text"], s["name"]) for s in segments] == [(u.text, u.name) for u in expected.utterances]
    assert {s["name"] for s in segments} == {"Ada", ""}


def test_verbose_json_keeps_its_shape(server):
    r = post(server, response_format="verbose_json", **{"timestamp_granularities[]": "word"})
    assert r.status_code == 200, r.text
    assert all("name" not in w for w in r.json()["words"])


def run_server(*args):
    return subprocess.run([sys.executable, "-m", "parakeet_cli.server", "--model", str(MODEL), "--vad-model", "none",
                           "--port", "1", *map(str, args)], capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env={"PYTHONPATH": f"{ROOT}:{ROOT / 'cli'}", **_library_env()})


def _library_env():
    return {k: v for k, v in os.environ.items() if k.startswith("PARAKEET_") or k in ("PATH", "HOME")}


def test_voices_without_the_encoder_is_a_usage_error(registry_and_expected):
    r = run_server("--voices", registry_and_expected[0])
    assert r.returncode == 2 and "--voices goes with --speaker-model" in r.stderr, r.stderr


def test_an_unreadable_registry_stops_the_server_with_one_line():
    r = run_server("--speaker-model", ENCODER, "--voices", CLIP)
    assert r.returncode == 1, r.stderr
    assert r.stderr.strip() == f"Error: cannot load {CLIP}: {CLIP}: not a usable speaker registry file (no PKSR header)"
