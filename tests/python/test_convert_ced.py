"""The CED converter (parakeet_py/convert/ced_checkpoint.py, ``parakeet-cli convert``): a
checkpoint written in torch.save's format (without torch) from the committed fixture's weights
converts back to the same tensors; f16 and q8_0 store exactly ced.cpp's allowlisted matrices in
that type, and a q8_0 file scores the same bits at 1 and 3 threads; the front-end buffers are
torchaudio's; bad input is refused in one line."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ced_helpers import MODEL as FIXTURE, clip, write_checkpoint
from cli_helpers import run_cli
from convert_helpers import checkpoint_bytes, read_gguf
from parakeet_py import SoundTagger
from parakeet_py.convert import ConversionError
from parakeet_py.convert.ced_checkpoint import convert_ced
from parakeet_py.convert.ced_mel import htk_mel_filterbank, periodic_hann

MATRICES = ("attn.qkv.weight", "attn.proj.weight", "mlp.fc1.weight", "mlp.fc2.weight")


@pytest.fixture(scope="module")
def fixture_gguf():
    return read_gguf(str(FIXTURE))


@pytest.fixture
def checkpoint(tmp_path) -> Path:
    return write_checkpoint(tmp_path)


def test_f32_conversion_reproduces_the_fixture(tmp_path, checkpoint, fixture_gguf):
    out = tmp_path / "out.gguf"
    convert_ced(checkpoint, out, "f32", name="ced-test")
    fields, tensors = read_gguf(str(out))
    want_fields, want_tensors = fixture_gguf
    assert fields == want_fields
    assert sorted(tensors) == sorted(want_tensors)
    for name, (kind, ne, data) in tensors.items():
        assert kind == "F32" and ne == want_tensors[name][1], name
        assert np.array_equal(data, want_tensors[name][2]), name


@pytest.mark.parametrize("out_type,stored", [("f16", "F16"), ("q8_0", "Q8_0")])
def test_quantised_types_cover_the_allowlisted_matrices(tmp_path, checkpoint, out_type, stored):
    out = tmp_path / f"out-{out_type}.gguf"
    convert_ced(checkpoint / "pytorch_model.bin", out, out_type)
    _, tensors = read_gguf(str(out))
    for name, (kind, ne, _) in tensors.items():
        quantised = name.endswith(MATRICES)  # outputlayer.1 is [10, 64]: under 32 rows, kept f32 as ced.cpp does
        assert kind == (stored if quantised else "F32"), name


@pytest.mark.parametrize("out_type,tolerance", [("f16", 2e-3), ("q8_0", 2e-2)])
def test_quantised_files_score_close_to_f32(tmp_path, checkpoint, out_type, tolerance):
    out = tmp_path / f"run-{out_type}.gguf"
    convert_ced(checkpoint, out, out_type)
    pcm = clip("long")
    with SoundTagger(FIXTURE) as f32, SoundTagger(out) as quantised:
        reference, scores = f32.scores(pcm), quantised.scores(pcm)
    assert np.abs(scores - reference).max() <= tolerance
    assert not np.array_equal(scores, reference)  # the quantised matrices are really used


SCORES_IN_A_FRESH_PROCESS = (
    "import sys, numpy as np\n"
    "from parakeet_py import SoundTagger\n"
    "with SoundTagger(sys.argv[1]) as t:\n"
    "    sys.stdout.buffer.write(t.scores(np.load(sys.argv[2])).tobytes())\n")


def test_quantised_scores_do_not_depend_on_the_thread_count(tmp_path, checkpoint):
    # A quantised file runs the attention on int8 scores and bf16 weighted sums where the CPU has
    # AVX512_BF16; every product is split by output, so 1 and 3 threads give the same bits. The
    # library reads PARAKEET_THREADS once, hence one process per thread count.
    out = tmp_path / "threads-q8_0.gguf"
    convert_ced(checkpoint, out, "q8_0")
    np.save(tmp_path / "pcm.npy", clip("long"))
    scores = []
    for threads in ("1", "3"):
        env = dict(os.environ, PARAKEET_THREADS=threads, PYTHONPATH=os.pathsep.join(sys.path))
        run = subprocess.run([sys.executable, "-c", SCORES_IN_A_FRESH_PROCESS, str(out), str(tmp_path / "pcm.npy")],
                             env=env, capture_output=True, timeout=120)
        assert run.returncode == 0, run.stderr.decode()
        scores.append(run.stdout)
    assert len(scores[0]) == 10 * 4 and scores[0] == scores[1]


def test_front_end_buffers_are_torchaudios_shapes_and_values(fixture_gguf):
    _, tensors = fixture_gguf
    fb_kind, fb_ne, fb = tensors["ced.mel_filterbank"]
    assert (fb_kind, fb_ne) == ("F32", [257, 64])
    assert np.array_equal(fb.reshape(64, 257), htk_mel_filterbank(512, 64, 16000, 0.0, 8000.0))
    assert np.array_equal(tensors["ced.mel_window"][2], periodic_hann(512))
    # HTK triangles without normalisation: each filter peaks below 1 and the first bin is empty.
    assert fb.max() <= 1.0 and fb.reshape(64, 257)[:, 0].max() == 0.0


def test_cli_converts_a_folder(tmp_path, checkpoint):
    out = tmp_path / "cli.gguf"
    result = run_cli("convert", str(checkpoint), str(out), "--type", "q8_0", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["kind"] == "ced"
    assert read_gguf(str(out))[1]["encoder.blocks.0.attn.qkv.weight"][0] == "Q8_0"
    refused = run_cli("convert", str(checkpoint), str(tmp_path / "x.gguf"), "--type", "q4_0")
    assert refused.exit_code != 0 and "a CED file is written as f32, f16, q8_0" in refused.stderr


def test_bad_input_is_refused(tmp_path, checkpoint):
    with pytest.raises(ConversionError, match="cannot read the CED config"):
        convert_ced(tmp_path / "empty" / "missing.bin", tmp_path / "o.gguf")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "config.json").write_text("{}")
    (tmp_path / "other" / "pytorch_model.bin").write_bytes(checkpoint_bytes({"w": np.zeros((2, 2), np.float32)}))
    with pytest.raises(ConversionError, match="is not a CED checkpoint: it has no 'encoder.patch_embed.proj.weight'"):
        convert_ced(tmp_path / "other", tmp_path / "o.gguf")
    with pytest.raises(ConversionError, match="unknown type 'q4_0'"):
        convert_ced(checkpoint, tmp_path / "o.gguf", "q4_0")
    assert not (tmp_path / "o.gguf").exists()
