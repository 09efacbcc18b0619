"""The WeSpeaker ResNet34 speaker encoder through parakeet_py and ``parakeet-cli convert``: the
committed checkpoint (tests/data/speaker/wespeaker_tiny, tools/fixtures/
make_2d_speaker_fixtures.py) converts to the committed resnet34_tiny.gguf, whose embeddings
match the PyTorch reference's (resnet34_ref.gguf) in f32 and come close in f16 / q8_0; the same
network's ONNX export (resnet34_tiny.onnx) converts to a file that embeds the same; checkpoints,
ONNX graphs and files the engine cannot run are refused with a message that says why."""

import re
import shutil

import gguf
import numpy as np
import pytest
from click.testing import CliRunner

from parakeet_py import SpeakerEncoder
from parakeet_py.convert import voicedetect_schema as vd
from parakeet_py.convert.errors import ConversionError, UnsupportedModelError
from parakeet_py.convert.torch_checkpoint import TorchCheckpoint
from parakeet_py.convert.wespeaker_onnx import convert_wespeaker_onnx
from parakeet_py.convert.wespeaker_resnet import convert_wespeaker_resnet, convert_wespeaker_tensors
from speaker_2d_helpers import DATA, assert_embeds_like_pytorch, clip
from speaker_2d_helpers import keys as _keys
from speaker_2d_helpers import tensors as _tensors

CHECKPOINT = DATA / "wespeaker_tiny" / "avg_model.pt"
COMMITTED = DATA / "resnet34_tiny.gguf"
ONNX = DATA / "resnet34_tiny.onnx"
FAMILY = "voicedetect:wespeaker_resnet34:wespeaker_tiny:256"


def _clip(name):
    return clip("resnet34", name)


def test_converting_the_checkpoint_gives_the_committed_file(tmp_path):
    out = tmp_path / "resnet.gguf"
    convert_wespeaker_resnet(CHECKPOINT, out, name="wespeaker_tiny")
    assert _keys(out) == _keys(COMMITTED)
    got, want = _tensors(out), _tensors(COMMITTED)
    assert list(got) == list(want)
    assert all(np.array_equal(got[k], want[k]) for k in want)
    keys = _keys(out)
    assert keys[vd.ARCH] == "wespeaker_resnet34" and keys[vd.EMBEDDING_DIM] == 256
    assert keys[vd.RESNET_STRIDE] == [1, 1, 1, 2, 1, 1, 1, 2, 1, 1, 1, 1, 1, 2, 1, 1]
    assert keys[vd.RESNET_DOWN_WEIGHT][3] == "layer2.0.shortcut.0.weight" and keys[vd.RESNET_DOWN_WEIGHT][0] == ""
    assert keys[vd.RESNET_MEAN_VEC] == "mean_vec"


@pytest.mark.parametrize("name", ["speech", "conversation"])
def test_embedding_matches_pytorch(name):
    assert_embeds_like_pytorch(COMMITTED, "resnet34", name, FAMILY, 256)


@pytest.mark.parametrize("out_type, seg_type", [("f16", gguf.GGMLQuantizationType.F16),
                                                ("q8_0", gguf.GGMLQuantizationType.Q8_0)])
def test_quantised_files_embed_close_to_pytorch(tmp_path, out_type, seg_type):
    out = tmp_path / f"resnet-{out_type}.gguf"
    convert_wespeaker_resnet(CHECKPOINT, out, out_type)
    types = {t.name: t.tensor_type for t in gguf.GGUFReader(str(out)).tensors}
    assert types["seg_1.weight"] == seg_type and types["layer1.0.conv1.weight"] == gguf.GGMLQuantizationType.F32
    pcm, want = _clip("speech")
    with SpeakerEncoder(out) as enc:
        assert float(enc.embed(pcm, sample_rate=16000) @ want) >= 0.999


def test_cli_converts_a_wespeaker_checkpoint(tmp_path):
    from parakeet_cli.main import cli

    out = tmp_path / "cli.gguf"
    r = CliRunner().invoke(cli, ["convert", str(CHECKPOINT), str(out), "--name", "wespeaker_tiny"])
    assert r.exit_code == 0, r.output
    assert "ResNet34 speaker encoder" in r.output
    assert _tensors(out).keys() == _tensors(COMMITTED).keys()


def test_the_onnx_export_converts_to_a_file_that_embeds_the_same(tmp_path):
    from parakeet_cli.main import cli

    out = tmp_path / "onnx.gguf"
    r = CliRunner().invoke(cli, ["convert", str(ONNX), str(out), "--type", "q8_0"])
    assert r.exit_code == 0, r.output
    keys = _keys(out)
    assert keys["general.name"] == "resnet34_tiny" and keys[vd.RESNET_STEM_WEIGHT].startswith("onnx::Conv_")
    assert keys[vd.RESNET_STRIDE] == _keys(COMMITTED)[vd.RESNET_STRIDE]
    assert keys[vd.RESNET_MEAN_VEC] == "mean_vec" and keys[vd.RESNET_VAR_EPS] == pytest.approx(1e-8)
    assert keys[vd.RESNET_SEG_WEIGHT] == "net.seg_1.weight"
    f32 = tmp_path / "onnx-f32.gguf"
    convert_wespeaker_onnx(ONNX, f32)
    for name in ("speech", "conversation"):
        assert_embeds_like_pytorch(f32, "resnet34", name, "voicedetect:wespeaker_resnet34:resnet34_tiny:256", 256)
    with SpeakerEncoder(out) as enc:
        assert float(enc.embed(_clip("speech")[0], sample_rate=16000) @ _clip("speech")[1]) >= 0.999


def test_onnx_graphs_the_engine_cannot_run_are_refused(tmp_path):
    import onnx

    model = onnx.load(str(ONNX))
    conv = next(n for n in model.graph.node if n.op_type == "Conv" and "layer2" in n.name)
    next(a for a in conv.attribute if a.name == "dilations").ints[:] = [2, 2]
    onnx.save(model, str(tmp_path / "dilated.onnx"))
    with pytest.raises(UnsupportedModelError, match="only groups 1, dilation 1"):
        convert_wespeaker_onnx(tmp_path / "dilated.onnx", tmp_path / "o.gguf")
    (tmp_path / "junk.onnx").write_bytes(b"not a model")
    with pytest.raises(ConversionError, match="cannot read the ONNX model"):
        convert_wespeaker_onnx(tmp_path / "junk.onnx", tmp_path / "o.gguf")
    assert not (tmp_path / "o.gguf").exists()


def _state(drop=(), add=()):
    """The fixture checkpoint's tensors with some left out or added."""
    with open(CHECKPOINT, "rb") as f:
        sd = {k: t.numpy() for k, t in TorchCheckpoint(f).tensors.items() if k not in drop}
    sd.update({name: np.zeros(shape, np.float32) for name, shape in add})
    return sd


def test_checkpoints_the_engine_cannot_run_are_refused(tmp_path):
    out = tmp_path / "o.gguf"
    with pytest.raises(UnsupportedModelError, match="two_emb_layer"):
        convert_wespeaker_tensors(_state(add=[("seg_2.weight", (256, 256))]), out, "f32", "x")
    with pytest.raises(UnsupportedModelError, match="bottleneck blocks"):
        convert_wespeaker_tensors(_state(add=[("layer1.0.conv3.weight", (8, 2, 1, 1))]), out, "f32", "x")
    with pytest.raises(ConversionError, match="no tensor layer1.0.bn2.running_var"):
        convert_wespeaker_tensors(_state(drop=["layer1.0.bn2.running_var"]), out, "f32", "x")
    with pytest.raises(ConversionError, match="holds 192 values, the embedding has 256"):
        convert_wespeaker_tensors(_state(), out, "f32", "x", mean_vec=np.zeros(192, np.float32))
    shutil.copy(CHECKPOINT, tmp_path / "avg_model.pt")
    np.save(tmp_path / "mean_vec.npy", np.zeros(192, np.float32))  # beside the checkpoint: read
    with pytest.raises(ConversionError, match="holds 192 values, the embedding has 256"):
        convert_wespeaker_resnet(tmp_path / "avg_model.pt", out)
    assert not out.exists()
    with pytest.raises(UnsupportedModelError, match="not a WeSpeaker ResNet checkpoint"):
        convert_wespeaker_resnet(DATA / "spkrec_tiny" / "embedding_model.ckpt", out)


@pytest.mark.parametrize("changes, drop, message", [
    ({vd.FBANK_N_MELS: 64}, (), "the pooled statistics of 64 mel bins have 256 values"),
    ({vd.EMBEDDING_DIM: 192}, (), "seg_1.weight gives 256-value embeddings"),
    ({vd.RESNET_STRIDE: [1] * 15 + [2]}, (), "block 15 changes the shape of its input and has no down convolution"),
    ({}, (vd.RESNET_CONV2_BIAS,), "missing key voicedetect.resnet.conv2_bias"),
    ({vd.RESNET_SEG_WEIGHT: "seg_9.weight"}, (), "missing tensor seg_9.weight"),
    ({vd.RESNET_CONV1_WEIGHT: ["layer1.0.conv2.weight"] + ["conv1.weight"] * 15}, (),
     "conv1.weight has shape [2, 1, 3, 3], expected [2, 2, 3, 3]"),
])
def test_files_the_engine_cannot_run_are_refused_at_load(tmp_path, changes, drop, message):
    from gguf_rewrite import rewrite_gguf
    from parakeet_py.errors import ParakeetError

    bad = rewrite_gguf(COMMITTED, tmp_path / "bad.gguf", changes, drop=drop)
    with pytest.raises(ParakeetError, match=re.escape(message)):
        SpeakerEncoder(bad)
