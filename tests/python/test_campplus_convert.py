"""``parakeet-cli convert`` of a 3D-Speaker CAM++ state_dict (``torch.save``, as
``campplus_cn_common.bin``) or ONNX export to voice-detect.cpp's ``voicedetect`` GGUF.

The committed fixture ``tests/data/speaker/campplus_tiny.bin`` (tools/fixtures/
make_campplus_fixtures.py) was converted into ``campplus_tiny.gguf``, on which the engine's parity
tests run; converting it again must give the same file. ``campplus_tiny.onnx`` is the same model
through torch.onnx.export. ``campplus_q8.bin`` is a CAM++ wide enough for q8_0 (kernel-1
convolutions of 32 inputs or more), converted with --type q8_0 into ``campplus_q8.gguf``.
"""

import re
from pathlib import Path

import gguf
import numpy as np
import pytest

from parakeet_py.convert import voicedetect_schema as vd
from parakeet_py.convert.campplus_checkpoint import campplus_manifest, convert_campplus, is_campplus_checkpoint
from parakeet_py.convert.campplus_onnx import convert_campplus_onnx
from parakeet_py.convert.errors import ConversionError, UnsupportedModelError
from parakeet_py.convert.speaker_onnx import speaker_arch
from parakeet_py.convert.torch_checkpoint import TorchCheckpoint

DATA = Path(__file__).resolve().parents[1] / "data" / "speaker"
CHECKPOINT = DATA / "campplus_tiny.bin"
COMMITTED = DATA / "campplus_tiny.gguf"
ONNX = DATA / "campplus_tiny.onnx"
Q8_CHECKPOINT = DATA / "campplus_q8.bin"
Q8_COMMITTED = DATA / "campplus_q8.gguf"


def _manifest(path):
    r = gguf.GGUFReader(str(path))
    return {key: r.get_field(key).contents() for key in (vd.CAMPPLUS_CONV_WEIGHT, vd.CAMPPLUS_CONV_BIAS,
                                                         vd.CAMPPLUS_BN_PREFIX, vd.CAMPPLUS_EMB_BN_MEAN)}


@pytest.fixture(scope="module")
def tensors():
    with open(CHECKPOINT, "rb") as stream:
        t = TorchCheckpoint(stream).tensors
        yield dict(t)


def test_converting_the_fixture_checkpoint_gives_the_committed_file(tmp_path):
    out = tmp_path / "campplus.gguf"
    convert_campplus(CHECKPOINT, out, name="campplus_tiny")
    assert out.read_bytes() == COMMITTED.read_bytes()


def test_q8_0_stores_the_wide_kernel_1_convolutions_as_voice_detect_does(tmp_path):
    out = tmp_path / "campplus-q8_0.gguf"
    convert_campplus(Q8_CHECKPOINT, out, "q8_0", name="campplus_q8")
    assert out.read_bytes() == Q8_COMMITTED.read_bytes()
    types = {t.name: t.tensor_type for t in gguf.GGUFReader(str(out)).tensors}
    q8 = {name for name, t in types.items() if t == gguf.GGMLQuantizationType.Q8_0}
    # Kernel 1, at least 32 by 32, rows of whole 32-value blocks: each layer's linear1 (32 or 64
    # inputs), the transits and the dense; the CAM mask's 16-wide convolutions, the kernel-3 and
    # kernel-5 ones and the head's 4-channel ones stay f32, as do biases and BatchNorms.
    assert q8 == {f"xvector.block{b}.tdnnd1.linear1.weight" for b in (1, 2, 3)} | {
        f"xvector.transit{b}.linear.weight" for b in (1, 2, 3)} | {"xvector.dense.linear.weight"}
    f16 = tmp_path / "campplus-f16.gguf"
    convert_campplus(Q8_CHECKPOINT, f16, "f16")
    types = {t.name: t.tensor_type for t in gguf.GGUFReader(str(f16)).tensors}
    assert {name for name, t in types.items() if t == gguf.GGMLQuantizationType.F16} == q8


def test_the_manifest_lists_every_convolution_and_batchnorm_in_forward_order():
    r = gguf.GGUFReader(str(COMMITTED))
    field = lambda key: r.get_field(key).contents()  # noqa: E731
    weights, biases, norms = field(vd.CAMPPLUS_CONV_WEIGHT), field(vd.CAMPPLUS_CONV_BIAS), field(vd.CAMPPLUS_BN_PREFIX)
    # The fixture's CAM++ has 3 + 4 + 3 CAM layers: 12 head convs, the tdnn, 4 per layer, 3 transits, the dense.
    assert len(weights) == len(biases) == 12 + 1 + 4 * 10 + 3 + 1
    assert len(norms) == 10 + 3
    assert field(vd.ARCH) == "campplus" and field(vd.EMBEDDING_DIM) == 192 and field(vd.FBANK_N_MELS) == 80
    assert weights[:4] == ["head.conv1.weight", "head.layer1.0.conv1.weight", "head.layer1.0.conv2.weight",
                           "head.layer1.0.shortcut.0.weight"]
    assert weights[13:17] == [f"xvector.block1.tdnnd1.{m}.weight" for m in
                              ("linear1", "cam_layer.linear_local", "cam_layer.linear1", "cam_layer.linear2")]
    # The folded BatchNorms give their convolution a bias; the others keep none.
    assert biases[0] == "head.conv1.bias" and biases[12] == "xvector.tdnn.linear.bias"
    assert biases[13:17] == ["xvector.block1.tdnnd1.linear1.bias", "", "xvector.block1.tdnnd1.cam_layer.linear1.bias",
                             "xvector.block1.tdnnd1.cam_layer.linear2.bias"]
    assert [b for w, b in zip(weights, biases) if ".transit" in w] == ["", "", "xvector.transit3.linear.bias"]
    assert biases[-1] == "" and weights[-1] == "xvector.dense.linear.weight"
    assert norms[0] == "xvector.block1.tdnnd1.nonlinear1.batchnorm" and norms[-1] == "xvector.transit3.nonlinear.batchnorm"
    names = {t.name for t in r.tensors}
    assert "xvector.block1.tdnnd1.nonlinear2.batchnorm.running_mean" not in names  # folded away
    assert {field(vd.CAMPPLUS_EMB_BN_MEAN), field(vd.CAMPPLUS_EMB_BN_VAR)} <= names


@pytest.mark.parametrize("drop, error, message", [
    ("xvector.block3.", UnsupportedModelError, "this CAM++ has 2 dense blocks, the engine runs 3"),
    ("head.layer2.1.", UnsupportedModelError, "this CAM++ head has 1 blocks in head.layer2, the engine runs 2"),
    ("xvector.block1.tdnnd2.nonlinear2.batchnorm.running_var", ConversionError,
     "the CAM++ checkpoint has no tensor xvector.block1.tdnnd2.nonlinear2.batchnorm.running_var"),
])
def test_checkpoints_the_engine_cannot_run_are_refused(tensors, drop, error, message):
    kept = {name: t for name, t in tensors.items() if not name.startswith(drop)}
    with pytest.raises(error, match=re.escape(message)):
        campplus_manifest(kept)


def test_the_onnx_export_gives_the_manifest_of_its_graph(tmp_path):
    out = tmp_path / "campplus.gguf"
    convert_campplus_onnx(ONNX, out, name="campplus_tiny")
    got, want = _manifest(out), _manifest(COMMITTED)
    # The exporter folded the same BatchNorms: the same affine ones remain, the same convolutions
    # have biases, under its own names for the folded ones.
    assert got[vd.CAMPPLUS_BN_PREFIX] == want[vd.CAMPPLUS_BN_PREFIX]
    assert got[vd.CAMPPLUS_EMB_BN_MEAN] == want[vd.CAMPPLUS_EMB_BN_MEAN]
    assert [b == "" for b in got[vd.CAMPPLUS_CONV_BIAS]] == [b == "" for b in want[vd.CAMPPLUS_CONV_BIAS]]
    assert got[vd.CAMPPLUS_CONV_WEIGHT][0].startswith("onnx::Conv_")
    assert got[vd.CAMPPLUS_CONV_WEIGHT][14] == "xvector.block1.tdnnd1.cam_layer.linear_local.weight"
    assert gguf.GGUFReader(str(out)).get_field("general.name").contents() == "campplus_tiny"


def test_an_onnx_graph_that_is_not_campplus_is_refused(tmp_path):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    def write(nodes, initialisers):
        graph = helper.make_graph(nodes, "small", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 8, 8])],
                                  [helper.make_tensor_value_info(nodes[-1].output[0], TensorProto.FLOAT, None)],
                                  [numpy_helper.from_array(a, name) for name, a in initialisers.items()])
        path = tmp_path / "small.onnx"
        onnx.save(helper.make_model(graph), str(path))
        return path

    conv = helper.make_node("Conv", ["x", "xvector.conv.weight"], ["y"])
    weights = {"xvector.conv.weight": np.ones((4, 1, 3, 3), np.float32)}
    path = write([conv], weights)
    assert speaker_arch(path) == "campplus"
    with pytest.raises(UnsupportedModelError, match=re.escape("no CAM++ convolutions or no embedding BatchNorm")):
        convert_campplus_onnx(path, tmp_path / "out.gguf")
    # An affine-free BatchNorm (its scale and bias constants) after the one convolution.
    constants = [helper.make_node("Constant", [], [n], value=numpy_helper.from_array(np.full(4, v, np.float32)))
                 for n, v in (("ones", 1.0), ("zeros", 0.0))]
    norm = helper.make_node("BatchNormalization", ["y", "ones", "zeros", "mean", "var"], ["z"])
    statistics = {"mean": np.zeros(4, np.float32), "var": np.ones(4, np.float32)}
    path = write([conv] + constants + [norm], {**weights, **statistics})
    with pytest.raises(UnsupportedModelError, match="1 convolutions are too few for a CAM"):
        convert_campplus_onnx(path, tmp_path / "out.gguf")
    assert not (tmp_path / "out.gguf").exists()


def test_only_campplus_files_are_taken_for_one(tmp_path):
    assert is_campplus_checkpoint(CHECKPOINT)
    assert not is_campplus_checkpoint(DATA / "spkrec_tiny" / "embedding_model.ckpt")
    (tmp_path / "junk.bin").write_bytes(b"not a checkpoint")
    assert not is_campplus_checkpoint(tmp_path / "junk.bin")
    # Each speaker ONNX export is told apart from the others by what is inside it.
    archs = {p.name: speaker_arch(p) for p in (ONNX, DATA / "resnet34_tiny.onnx", DATA / "eres2net_tiny.onnx")}
    assert archs == {"campplus_tiny.onnx": "campplus", "resnet34_tiny.onnx": "wespeaker_resnet34",
                     "eres2net_tiny.onnx": "eres2net"}
    with pytest.raises(ConversionError, match="cannot read the ONNX model"):
        speaker_arch(tmp_path / "junk.bin")


def test_cli_convert_takes_the_checkpoint(tmp_path):
    from parakeet_cli.main import cli
    from test_cli import runner

    out = tmp_path / "campplus.gguf"
    r = runner().invoke(cli, ["convert", str(CHECKPOINT), str(out), "--name", "campplus_tiny", "--json"],
                        catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert '"kind": "voicedetect"' in r.output
    assert out.read_bytes() == COMMITTED.read_bytes()
    r = runner().invoke(cli, ["convert", str(CHECKPOINT), str(tmp_path / "q.gguf"), "--type", "q4_k"])
    assert r.exit_code != 0
    assert "written as f32, f16 or q8_0, not q4_k" in r.output
    r = runner().invoke(cli, ["convert", str(ONNX), str(tmp_path / "onnx.gguf")], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert "CAM++ speaker encoder" in r.output
    assert _manifest(tmp_path / "onnx.gguf")[vd.CAMPPLUS_BN_PREFIX] == _manifest(COMMITTED)[vd.CAMPPLUS_BN_PREFIX]
