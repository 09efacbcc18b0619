"""parakeet-cli vad and `convert silero_vad.onnx`, through click's CliRunner."""

import json

import numpy as np
import pytest
import soundfile as sf

pytest.importorskip("onnx")

from parakeet_cli.main import cli  # noqa: E402
from parakeet_py.vad import Vad, package_onnx  # noqa: E402
from test_cli import runner  # noqa: E402


def invoke(*args):
    return runner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def vad_gguf(tmp_path_factory):
    out = tmp_path_factory.mktemp("vadcli") / "silero.gguf"
    r = invoke("convert", package_onnx(), out, "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc["kind"] == "silero_vad" and doc["bytes"] == out.stat().st_size
    return out


def test_convert_refuses_quantised_types(tmp_path):
    r = invoke("convert", package_onnx(), tmp_path / "x.gguf", "--type", "q8_0")
    assert r.exit_code != 0 and "f32 or f16" in r.output + (r.stderr or "")
    assert not (tmp_path / "x.gguf").exists()


def test_convert_refuses_other_onnx(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not an onnx file")
    r = invoke("convert", bad, tmp_path / "x.gguf")
    assert r.exit_code == 1 and "ONNX" in (r.stderr or r.output)


def test_vad_formats(vad_gguf, speech_wav):
    audio, sr = sf.read(str(speech_wav), dtype="float32")
    with Vad(vad_gguf) as v:
        expected = v.segments(audio, sr)
    assert len(expected) >= 2
    text = invoke("vad", "-m", vad_gguf, speech_wav)
    assert text.exit_code == 0
    assert text.output.split("\n")[:len(expected)] == [f"{s['start']:.3f} {s['end']:.3f}" for s in expected]
    doc = json.loads(invoke("vad", "-m", vad_gguf, "--format", "json", speech_wav).output)
    assert doc["segments"] == expected and doc["file"] == str(speech_wav)
    srt = invoke("vad", "-m", vad_gguf, "--format", "srt", speech_wav).output
    assert srt.count(" --> ") == len(expected) and srt.startswith("1\n")
    both = json.loads(invoke("vad", "-m", vad_gguf, "--format", "json", speech_wav, speech_wav).output)
    assert [d["segments"] for d in both] == [expected, expected]


def test_vad_options_reach_the_library(vad_gguf, speech_wav):
    loose = invoke("vad", "-m", vad_gguf, "--min-pause", "2.0", speech_wav).output.strip().split("\n")
    tight = invoke("vad", "-m", vad_gguf, speech_wav).output.strip().split("\n")
    assert len(loose) < len(tight)
    r = invoke("vad", "-m", vad_gguf, "--threshold", "2", speech_wav)
    assert r.exit_code == 1 and "out of range" in (r.stderr or r.output)


def test_vad_silence_has_no_segments(vad_gguf, tmp_path):
    p = tmp_path / "quiet.wav"
    sf.write(str(p), np.zeros(32000, np.float32), 16000)
    assert invoke("vad", "-m", vad_gguf, p).output.strip() == ""


def test_transcribe_vad_matches_the_python_call(vad_gguf, model_path, speech_wav, tmp_path):
    from parakeet_py import Context

    with Context(model_path) as ctx:
        want = ctx.transcribe(str(speech_wav), vad=vad_gguf)
    r = invoke("transcribe", "-m", model_path, "--vad", "--vad-model", vad_gguf, "-f", "json", speech_wav)
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc["text"] == want.text
    assert [w["start"] for w in doc["words"]] == pytest.approx([w.start for w in want.words], abs=1e-3)
    assert invoke("transcribe", "-m", model_path, "--vad-model", vad_gguf, speech_wav).exit_code == 2
    assert invoke("transcribe", "-m", model_path, "--vad", "--beam", "2", speech_wav).exit_code == 2
