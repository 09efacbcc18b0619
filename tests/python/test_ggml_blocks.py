"""ggml's block types end to end: our quantisers and dequantisers against ggml's own
(libggml-base from parakeet.cpp's wheel, which tools/setup.sh installs), byte for byte and bit for
bit, on random tensors and on the fixture models' shapes; every type written by
``parakeet-cli quantize`` loads and transcribes; ``--type f32`` reads any file back exactly as
ggml decodes it; and files that break a type's rules are refused naming the tensor."""

from __future__ import annotations

import subprocess
import sys

import gguf
import numpy as np
import pytest

from data_helpers import MODELS, SPEECH
from ggml_helpers import GGML_NAMES, ggml_dequantize, ggml_quantize, libggml
from parakeet_py import Context
from parakeet_py.convert import ggml_blocks, requantize_gguf
from parakeet_py.convert.quantize import OUT_TYPES
from parakeet_py.errors import BadModel

BLOCK_TYPES = ("q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q4_k", "q5_k", "q6_k")


def _tensors(seed: int):
    """Random rows of mixed scales, with the edge cases the quantisers branch on."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((48, 1024)) * rng.uniform(1e-3, 4.0, (48, 1))).astype(np.float32)
    x[1, :256] = 0.0                 # an all-zero super-block
    x[2, :64] = 0.5                  # constant blocks
    x[3] = np.abs(x[3])              # no negative values (mins of zero)
    x[4, ::7] = -50.0                # outliers
    x[5] = rng.uniform(-1e-20, 1e-20, 1024).astype(np.float32)  # below the quantisers' epsilon
    return x


@pytest.mark.parametrize("type_name", BLOCK_TYPES)
@pytest.mark.parametrize("seed", [0, 1])
def test_quantise_and_dequantise_exactly_as_ggml(type_name, seed):
    lib = libggml()
    x = _tensors(seed)
    ours = ggml_blocks.encode(x, type_name)
    theirs = ggml_quantize(lib, x, type_name)
    assert ours.shape == theirs.shape
    assert np.array_equal(ours, theirs), f"{int((ours != theirs).sum())} bytes differ"
    back = ggml_blocks.decode(theirs, type_name, x.shape).reshape(-1)
    assert np.array_equal(back.view(np.uint32), ggml_dequantize(lib, theirs, type_name, x.size).view(np.uint32))


@pytest.mark.parametrize("type_name", BLOCK_TYPES)
def test_fixture_weights_quantise_exactly_as_ggml(type_name):
    lib = libggml()
    reader = gguf.GGUFReader(MODELS["hybrid_tdt_ctc"])
    block = ggml_blocks.BLOCK_VALUES[type_name]
    checked = 0
    for t in reader.tensors:
        shape = tuple(int(n) for n in reversed(t.shape.tolist()))
        if len(shape) != 2 or shape[1] % block:
            continue
        x = np.ascontiguousarray(np.asarray(t.data, dtype=np.float32).reshape(shape))
        assert np.array_equal(ggml_blocks.encode(x, type_name), ggml_quantize(lib, x, type_name)), t.name
        checked += 1
    assert checked > 0


def test_unknown_types_and_partial_blocks_are_refused():
    with pytest.raises(ValueError):
        ggml_blocks.row_bytes("q4_k", 100)
    with pytest.raises(ValueError, match="not whole q4_0 blocks"):
        ggml_blocks.encode(np.zeros((2, 48), np.float32), "q4_0")


def _transcribe_ids(path):
    with Context(str(path)) as ctx:
        return [t.id for t in ctx.transcribe(str(SPEECH)).tokens]


@pytest.mark.parametrize("family", sorted(MODELS))
@pytest.mark.parametrize("type_name", [t for t in OUT_TYPES if t != "f32"])
def test_every_type_loads_and_transcribes(tmp_path, type_name, family):
    src = MODELS[family]
    out = tmp_path / f"model-{type_name}.gguf"
    report = requantize_gguf(src, out, type_name)
    written = {t.name: t.tensor_type.name for t in gguf.GGUFReader(out).tensors}
    assert written["encoder.layers.0.feed_forward1.linear2.weight"] == type_name.upper()  # [64, 256]
    if ggml_blocks.BLOCK_VALUES[type_name] == 256:  # rows of 64 cannot take 256-value blocks
        assert written["encoder.layers.0.feed_forward1.linear1.weight"] == "F32"
        assert any("encoder.layers.0.feed_forward1.linear1.weight stays F32" in k for k in report.kept)
    ids = _transcribe_ids(out)
    assert ids, "a quantised model must still transcribe"
    with Context(str(out)) as ctx:
        ffn = ctx.info["tensor_classes"]["ffn"]
    assert ffn[GGML_NAMES.get(type_name, type_name)] > 0


@pytest.mark.parametrize("type_name", ["q4_k", "q6_k", "q4_0"])
def test_a_quantised_file_quantises_its_remaining_f32_matrices_at_load(tmp_path, type_name):
    """The conv pointwise convolutions, F32 in every quantised file, become Q8_0 at load in a
    K-quant or q4_0 model as in a q8_0 one (q8_all, on by default): the resident weights
    shrink, the transcript stays a transcript; q8_all=False keeps the file's F32."""
    out = tmp_path / f"model-{type_name}.gguf"
    requantize_gguf(MODELS["tdt"], out, type_name)
    written = {t.name: t.tensor_type.name for t in gguf.GGUFReader(out).tensors}
    assert written["encoder.layers.0.conv.pointwise_conv1.weight"] == "F32"
    with Context(str(out)) as ctx:
        at_load = ctx.info["packed_bytes"]
        assert [t.id for t in ctx.transcribe(str(SPEECH)).tokens]
    with Context(str(out), q8_all=False) as ctx:
        as_stored = ctx.info["packed_bytes"]
    # Per layer 3·d² conv pointwise weights go from 4 to 1.125 bytes each (d = 64 here): Q8_0
    # packed for the kernels keeps a float scale per 32 values.
    layers = sum(1 for n in written if n.endswith("conv.pointwise_conv2.weight"))
    f32_bytes = layers * 3 * 64 * 64 * 4
    assert as_stored - at_load == f32_bytes - f32_bytes * 9 // 32


def test_quantize_to_f32_decodes_any_file_as_ggml_does(tmp_path):
    lib = libggml()
    q = tmp_path / "model-q5_k.gguf"
    back = tmp_path / "model-f32.gguf"
    requantize_gguf(MODELS["tdt"], q, "q5_k")
    r = subprocess.run([sys.executable, "-m", "parakeet_cli.main", "quantize", str(q), str(back), "--type", "f32"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    stored = {t.name: t for t in gguf.GGUFReader(q).tensors}
    for t in gguf.GGUFReader(back).tensors:
        assert t.tensor_type == gguf.GGMLQuantizationType.F32, t.name
        s = stored[t.name]
        if s.tensor_type == gguf.GGMLQuantizationType.Q5_K:
            want = ggml_dequantize(lib, np.asarray(s.data).reshape(-1).view(np.uint8), "q5_k", int(t.n_elements))
            assert np.array_equal(np.asarray(t.data).reshape(-1).view(np.uint32), want.view(np.uint32)), t.name


def _rewrite(src, dst, name, new_type):
    """A copy of the GGUF file src with tensor `name` re-encoded as new_type (as one row)."""
    reader = gguf.GGUFReader(src)
    writer = gguf.GGUFWriter(str(dst), "parakeet")
    for key, field in reader.fields.items():
        if key.startswith("GGUF.") or key in ("general.architecture", "general.alignment"):
            continue
        writer.add_key_value(key, field.contents(), field.types[0], sub_type=field.types[-1] if len(field.types) > 1 else None)
    for t in reader.tensors:
        shape = tuple(int(n) for n in reversed(t.shape.tolist()))
        if t.name != name:
            writer.add_tensor(t.name, np.asarray(t.data), raw_dtype=t.tensor_type)
            continue
        raw = ggml_blocks.encode(np.asarray(t.data, np.float32).reshape(1, -1), new_type)
        writer.add_tensor(t.name, raw, raw_dtype=gguf.GGMLQuantizationType[new_type.upper()])
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def test_a_type_the_schema_forbids_is_refused_naming_the_tensor(tmp_path):
    bad = tmp_path / "norm-q4_0.gguf"
    _rewrite(MODELS["tdt"], bad, "encoder.layers.0.norm_out.weight", "q4_0")
    with pytest.raises(BadModel, match="encoder.layers.0.norm_out.weight"):
        Context(str(bad))
