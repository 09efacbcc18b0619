"""3D-Speaker's ERes2Net speaker encoder through parakeet_py and ``parakeet-cli convert``: the
committed ONNX export (tests/data/speaker/eres2net_tiny.onnx, tools/fixtures/
make_2d_speaker_fixtures.py) converts to the committed eres2net_tiny.gguf, whose embeddings match
the PyTorch reference's (eres2net_ref.gguf) in f32 and come close in q8_0; graphs and files the
engine cannot run are refused with a message that says why."""

import re

import gguf
import numpy as np
import pytest
from click.testing import CliRunner

from parakeet_py import SpeakerEncoder
from parakeet_py.convert import voicedetect_schema as vd
from parakeet_py.convert.eres2net_onnx import convert_eres2net_onnx
from parakeet_py.convert.errors import UnsupportedModelError
from speaker_2d_helpers import DATA, assert_embeds_like_pytorch, clip
from speaker_2d_helpers import keys as _keys
from speaker_2d_helpers import tensors as _tensors

ONNX = DATA / "eres2net_tiny.onnx"
COMMITTED = DATA / "eres2net_tiny.gguf"


def _clip(name):
    return clip("eres2net", name)


def test_converting_the_onnx_export_gives_the_committed_file(tmp_path):
    from parakeet_cli.main import cli

    out = tmp_path / "eres2net_tiny.gguf"
    r = CliRunner().invoke(cli, ["convert", str(ONNX), str(out)])
    assert r.exit_code == 0, r.output
    assert "ERes2Net" in r.output
    keys = _keys(out)
    assert keys == _keys(COMMITTED)
    got, want = _tensors(out), _tensors(COMMITTED)
    assert list(got) == list(want) and all(np.array_equal(got[k], want[k]) for k in want)
    assert keys[vd.ARCH] == "eres2net" and keys[vd.EMBEDDING_DIM] == 192 and len(keys[vd.ERES2NET_CONV_WEIGHT]) == 96
    assert keys[vd.ERES2NET_CONV_BIAS].count("") == 3  # the fusion downsamplers have no BatchNorm
    assert keys[vd.ERES2NET_M_CHANNELS] == 2 and keys[vd.ERES2NET_VAR_EPS] == pytest.approx(1e-8)


@pytest.mark.parametrize("name", ["speech", "conversation"])
def test_embedding_matches_pytorch(name):
    assert_embeds_like_pytorch(COMMITTED, "eres2net", name, "voicedetect:eres2net:eres2net_tiny:192", 192)


def test_a_q8_0_file_embeds_close_to_pytorch(tmp_path):
    out = tmp_path / "eres2net-q8_0.gguf"
    convert_eres2net_onnx(ONNX, out, "q8_0")
    assert {t.name: t.tensor_type for t in gguf.GGUFReader(str(out)).tensors}["seg_1.weight"] == \
        gguf.GGMLQuantizationType.Q8_0
    pcm, want = _clip("speech")
    with SpeakerEncoder(out) as enc:
        assert float(enc.embed(pcm, sample_rate=16000) @ want) >= 0.999


def test_another_topology_is_refused(tmp_path):
    import onnx

    model = onnx.load(str(ONNX))
    conv = next(n for n in model.graph.node if n.op_type == "Conv" and "layer4" in n.name)
    model.graph.node.remove(conv)
    onnx.save(model, str(tmp_path / "short.onnx"))
    with pytest.raises(UnsupportedModelError, match="has 95 convolutions, 3D-Speaker's ERes2Net .* has 96"):
        convert_eres2net_onnx(tmp_path / "short.onnx", tmp_path / "o.gguf")


def _stride_at(index, stride):
    """The committed conv_stride list with convolution `index` given `stride`."""
    strides = list(_keys(COMMITTED)[vd.ERES2NET_CONV_STRIDE])
    strides[index] = stride
    return {vd.ERES2NET_CONV_STRIDE: strides}


@pytest.mark.parametrize("changes, drop, message", [
    # The list runs stem, then block 1's conv1, its two chunk convolutions, conv3 and shortcut.
    (_stride_at(2, 2), (), "a block's chunk convolution is not 3x3 with stride 1"),
    (_stride_at(4, 2), (), "a block's strides do not match: its first and shortcut convolutions take them"),
    (_stride_at(5, 2), (), "a block's strides do not match"),
    ({vd.ERES2NET_NUM_BLOCKS: [3, 4, 6, 2]}, (), "has shape [16, 32, 1, 1], expected [16, 16, 1, 1]"),
    ({vd.ERES2NET_NUM_BLOCKS: [3, 4, 6, 4]}, (), "layer3_downsample.weight has shape [32, 16, 3, 3], expected [32, 32"),
    ({vd.ERES2NET_SCALE: 4}, (), "a block's first convolution gives 2 channels, not a multiple of the scale 4"),
    ({vd.FBANK_N_MELS: 64}, (), "the pooled statistics of 64 mel bins have 512 values"),
    ({}, (vd.ERES2NET_CONV_STRIDE,), "missing key voicedetect.eres2net.conv_stride"),
])
def test_files_the_engine_cannot_run_are_refused_at_load(tmp_path, changes, drop, message):
    from gguf_rewrite import rewrite_gguf
    from parakeet_py.errors import ParakeetError

    bad = rewrite_gguf(COMMITTED, tmp_path / "bad.gguf", changes, drop=drop)
    with pytest.raises(ParakeetError, match=re.escape(message)):
        SpeakerEncoder(bad)


def test_a_list_short_of_a_convolution_is_refused_at_load(tmp_path):
    from gguf_rewrite import rewrite_gguf
    from parakeet_py.errors import ParakeetError

    keys = _keys(COMMITTED)
    short = {k: keys[k][:-1] for k in (vd.ERES2NET_CONV_WEIGHT, vd.ERES2NET_CONV_BIAS, vd.ERES2NET_CONV_STRIDE)}
    bad = rewrite_gguf(COMMITTED, tmp_path / "bad.gguf", short)
    with pytest.raises(ParakeetError, match="lists 95 convolutions, the network runs more"):
        SpeakerEncoder(bad)
