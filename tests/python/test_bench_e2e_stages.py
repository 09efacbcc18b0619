"""bench/bench_e2e.py's pieces that its OpenVINO comparison rests on: our encoder's stage timed
through the progress reports (--encoder-only), the token agreement it prints, and the refusal
of engines that cannot time their encoder alone."""

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import benchlib  # noqa: E402
from bench_e2e import OursEngine, agreeing_tokens  # noqa: E402


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory, model_path):
    """The hybrid fixture under the name the ours-W engines read (model-<W>.gguf)."""
    d = tmp_path_factory.mktemp("bench_model")
    (d / "model-f32.gguf").symlink_to(model_path)
    return str(d)


def test_the_encoder_stage_is_timed_inside_the_same_request(model_dir, speech_wav):
    audio = benchlib.read_wav(str(speech_wav))
    timed = OursEngine(model_dir, "f32", 1, None, encoder_stage=True)
    plain = OursEngine(model_dir, "f32", 1, None)
    rep = timed.run(audio)
    assert set(rep["stages"]) == {"encoder"}
    # The stage starts with the request's first report and ends before its last one (1: the
    # transcript is made), so the decoding between them is left out.
    first, last = timed.marks[0][0], timed.marks[-1][0]
    assert 0.0 < rep["stages"]["encoder"] < last - first < rep["seconds"]
    fractions = [f for _, f in timed.marks]
    assert fractions[0] == 0.0 and fractions[-1] == 1.0
    assert fractions == sorted(fractions)
    assert "stages" not in plain.run(audio)
    # The timed path transcribes the same tokens as the plain one.
    assert timed.result(audio)["ids"] == plain.result(audio)["ids"]


def test_token_agreement_counts_aligned_tokens():
    ref = [5, 6, 7, 8, 9]
    assert agreeing_tokens(ref, ref) == 5
    assert agreeing_tokens(ref, [5, 6, 8, 9]) == 4  # one dropped token costs one
    assert agreeing_tokens(ref, [5, 6, 1, 7, 8, 9]) == 5  # one inserted token costs none of ref's
    assert agreeing_tokens(ref, [1, 2, 3]) == 0


def test_encoder_only_refuses_engines_that_cannot_time_their_encoder():
    run = subprocess.run([sys.executable, str(BENCH / "bench_e2e.py"), "--encoder-only",
                          "--engines", "ours-q8_0@avx2,onnx-asr,pcpp-q8_0"],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode != 0
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("--encoder-only: onnx-asr, pcpp-q8_0 cannot time the encoder alone"), last
