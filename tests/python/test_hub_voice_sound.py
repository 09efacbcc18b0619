"""Speaker encoders and sound taggers by name (resolve_model's ``speaker`` and ``sound`` kinds),
against the local Hub (local_hub.py) in subprocesses with their own HF_HOME, as test_hub_models:
a repo's published GGUF is used as it is, SpeechBrain's ``embedding_model.ckpt`` and CED's
``pytorch_model.bin`` are downloaded with the file their converter reads beside them and
converted once (the same bytes as the local converters, named after the repo); ``parakeet-cli
sounds``, ``speakers`` and ``transcribe`` and ``parakeet-server`` take the names and answer as
with the local files; a repo without such a model is one line."""

from __future__ import annotations

import base64
import filecmp
import json
from pathlib import Path

import httpx
import numpy as np
import pytest

from ced_helpers import MODEL as CED, clip_path, write_checkpoint
from data_helpers import NEMO_DIR, SPEECH
from hub_helpers import hub_env, ok, one_line_error, run_cli
from local_hub import LocalHub
from parakeet_py import SpeakerEncoder
from parakeet_py.convert.ced_checkpoint import convert_ced
from parakeet_py.convert.speechbrain_ecapa import convert_speechbrain_ecapa
from server_helpers import ServerProcess

SPKREC = Path(__file__).resolve().parents[1] / "data" / "speaker" / "spkrec_tiny"
ECAPA = SPKREC.parent / "ecapa_tiny.gguf"
ASR = NEMO_DIR / "hybrid_tdt_ctc" / "model.gguf"
CLIP = clip_path("long")
GGUF_SOUND = "mudler/ced-gguf/ced-test.gguf"  # a repo of several published files: one is named
GGUF_SPEAKER = "someone/ecapa-gguf"  # a repo of one published file


@pytest.fixture
def hub(tmp_path):
    server = LocalHub()
    server.add("mudler/ced-gguf", {"ced-test.gguf": CED.read_bytes(), "ced-other.gguf": CED.read_bytes()})
    server.add("someone/ecapa-gguf", {"ecapa.gguf": ECAPA.read_bytes(), "README.md": b"# ECAPA\n"})
    server.add("speechbrain/spkrec-tiny", {name: (SPKREC / name).read_bytes() for name in
                                           ("embedding_model.ckpt", "hyperparams.yaml")}
               | {"classifier.ckpt": b"not read", "label_encoder.txt": b"'a' => 0\n"})
    ced = write_checkpoint(tmp_path)
    server.add("mispeech/ced-test", {name: (ced / name).read_bytes() for name in ("pytorch_model.bin", "config.json")})
    yield server
    server.close()


@pytest.fixture
def env(hub, tmp_path):
    return hub_env(hub.url, tmp_path / "hf")


def pull(env, kind, name) -> Path:
    return Path(ok(run_cli(env, "pull", "--kind", kind, name)).strip())


def sounds(env, model):
    return json.loads(ok(run_cli(env, "sounds", "-m", model, CLIP, "--json")))


def test_a_published_sound_gguf_is_used_as_it_is(env):
    assert filecmp.cmp(pull(env, "sound", GGUF_SOUND), CED, shallow=False)
    by_name = sounds(env, GGUF_SOUND)
    assert by_name["events"] and by_name == sounds(env, str(CED)) | {"file": str(CLIP)}


def test_a_ced_checkpoint_is_converted_once_with_its_config(env, tmp_path):
    local = tmp_path / "local.gguf"
    convert_ced(write_checkpoint(tmp_path), local, "q8_0", name="ced-test")
    first = run_cli(env, "pull", "--kind", "sound", "mispeech/ced-test")
    path = Path(ok(first).strip())
    assert "converting" in first.stderr and path.name.endswith("-q8_0.gguf")
    assert filecmp.cmp(path, local, shallow=False)
    again = run_cli(env, "pull", "--kind", "sound", "mispeech/ced-test")
    assert Path(ok(again).strip()) == path and "converting" not in again.stderr
    assert sounds(env, "mispeech/ced-test") == sounds(env, str(local))


def test_speaker_encoders_by_name_enrol_and_identify_as_the_local_files(env, tmp_path):
    local = tmp_path / "local-ecapa.gguf"
    convert_speechbrain_ecapa(SPKREC / "embedding_model.ckpt", local, name="spkrec-tiny")
    assert filecmp.cmp(pull(env, "speaker", "speechbrain/spkrec-tiny"), local, shallow=False)
    for model, reference in (("speechbrain/spkrec-tiny", local), (GGUF_SPEAKER, ECAPA)):
        outputs = []
        for used in (model, str(reference)):
            registry = tmp_path / f"{used.replace('/', '_')}.pksr"
            ok(run_cli(env, "speakers", "enroll", registry, "Ada", SPEECH, "-m", used))
            outputs.append(json.loads(ok(run_cli(env, "speakers", "identify", registry, SPEECH, "-m", used,
                                                 "--json"))))
        assert outputs[0]["name"] == "Ada" and outputs[0] == outputs[1]


def test_transcribe_takes_a_sound_model_by_name(env):
    by_name = json.loads(ok(run_cli(env, "transcribe", "-m", ASR, "--sound-model", GGUF_SOUND, "-f", "json", CLIP)))
    local = json.loads(ok(run_cli(env, "transcribe", "-m", ASR, "--sound-model", CED, "-f", "json", CLIP)))
    assert by_name["sound_events"] and by_name == local


def test_the_server_takes_both_by_name(env, tmp_path, monkeypatch):
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    args = ["--sound-model", GGUF_SOUND, "--speaker-model", "speechbrain/spkrec-tiny"]
    with ServerProcess(args, tmp_path, model=ASR) as server:
        verbose = httpx.post(server.url + "/v1/audio/transcriptions", data={"response_format": "verbose_json"},
                             files={"file": ("a.wav", CLIP.read_bytes(), "audio/wav")}, timeout=60)
        embed = httpx.post(server.url + "/v1/voice/embed",
                           json={"audio": base64.b64encode(SPEECH.read_bytes()).decode()}, timeout=60)
    assert verbose.status_code == 200 and verbose.json()["sound_events"] == sounds(env, str(CED))["events"]
    assert embed.status_code == 200, embed.text
    with SpeakerEncoder(ECAPA) as encoder:  # the converted checkpoint is the fixture's encoder
        assert np.allclose(embed.json()["embedding"], encoder.embed(SPEECH), atol=1e-6)


def test_a_repo_without_such_a_model_is_one_line(env, tmp_path):
    line = one_line_error(run_cli(env, "sounds", "-m", "someone/ecapa-gguf/README.md", CLIP))
    assert "someone/ecapa-gguf" in line, line
    line = one_line_error(run_cli(env, "speakers", "enroll", tmp_path / "v.pksr", "Ada", SPEECH, "-m",
                                  "mispeech/ced-test"))
    assert "has no embedding_model.ckpt or .gguf file" in line, line
    line = one_line_error(run_cli(env, "sounds", "-m", "mudler/ced-gguf", CLIP))
    assert "2 model files" in line and "name one" in line, line
