"""parakeet_py.SpeakerEncoder on the committed CAM++ fixture (tests/data/speaker/campplus_tiny.gguf,
docs/fixtures.md): the embeddings against ModelScope's modules in PyTorch (and a q8_0 file's,
campplus_q8.gguf), the fingerprint, files
whose campplus manifest the engine cannot follow refused at load with a clear message, and the
model as a bundle's component."""

import re
from pathlib import Path

import gguf
import numpy as np
import pytest

from parakeet_py import SpeakerEncoder
from parakeet_py.convert import voicedetect_schema as vd

DATA = Path(__file__).resolve().parents[1] / "data" / "speaker"
MODEL = DATA / "campplus_tiny.gguf"


def reference(clip):
    tensors = {t.name: np.array(t.data) for t in gguf.GGUFReader(str(DATA / f"ref_{clip}.gguf")).tensors}
    return tensors["pcm"].astype(np.float32), tensors["embedding"]


def manifest(key):
    return list(gguf.GGUFReader(str(MODEL)).get_field(key).contents())


@pytest.mark.parametrize("clip", ["campplus_speech", "campplus_conversation"])
@pytest.mark.parametrize("source", ["state_dict", "onnx"])
def test_embedding_matches_pytorch(tmp_path, clip, source):
    """The committed conversion of the state_dict, and our conversion of the ONNX export (the
    layout voice-detect.cpp's files have: the exporter's BatchNorm folding and names)."""
    from parakeet_py.convert.campplus_onnx import convert_campplus_onnx

    model = MODEL
    if source == "onnx":
        model = tmp_path / "onnx.gguf"
        convert_campplus_onnx(DATA / "campplus_tiny.onnx", model)
    pcm, want = reference(clip)
    with SpeakerEncoder(model) as enc:
        got = enc.embed(pcm, sample_rate=16000)
        assert enc.family == "voicedetect:campplus:campplus_tiny:192"
    assert got.shape == (192,)
    assert float(got @ want) >= 0.9999
    assert np.abs(got - want).max() <= 1e-4


def test_a_q8_0_file_embeds_close_to_pytorch():
    """campplus_q8.gguf: a CAM++ whose kernel-1 convolutions are stored as q8_0 (test_campplus_convert.py)."""
    pcm, want = reference("campplus_q8_speech")
    with SpeakerEncoder(DATA / "campplus_q8.gguf") as enc:
        got = enc.embed(pcm, sample_rate=16000)
    # Close to PyTorch's f32, and not its bits: the quantised products ran (measured 0.99972).
    assert 0.999 <= float(got @ want) < 0.99999


def _refusals():
    weights, biases, norms = (manifest(k) for k in (vd.CAMPPLUS_CONV_WEIGHT, vd.CAMPPLUS_CONV_BIAS,
                                                    vd.CAMPPLUS_BN_PREFIX))
    swapped = [weights[1], weights[0]] + weights[2:]
    return [
        ({vd.CAMPPLUS_CONV_WEIGHT: weights[:-1], vd.CAMPPLUS_CONV_BIAS: biases[:-1]}, (),
         "voicedetect.campplus.conv_weight ends before the dense convolution"),
        ({vd.CAMPPLUS_CONV_BIAS: biases[:-1]}, (), "voicedetect.campplus.conv_bias lists 56 biases for 57 convolutions"),
        ({vd.CAMPPLUS_BN_PREFIX: norms + [norms[0]]}, (),
         "the campplus manifest lists 57 convolutions and 14 BatchNorms, CAM++ used 57 and 13"),
        ({vd.CAMPPLUS_CONV_WEIGHT: swapped}, (), "head.layer1.0.conv1.weight has shape [4, 4, 3, 3], expected [4, 1, 3, 3]"),
        ({vd.CAMPPLUS_BN_PREFIX: ["xvector.block1.tdnnd9.nonlinear1.batchnorm"] + norms[1:]}, (),
         "missing tensor xvector.block1.tdnnd9.nonlinear1.batchnorm."),
        ({vd.FBANK_N_MELS: 64}, (), "xvector.tdnn.linear.weight has shape [16, 40, 5], expected [16, 32, 5]"),
        ({}, (vd.CAMPPLUS_EMB_BN_MEAN,), "missing key voicedetect.campplus.emb_bn_mean"),
        ({}, (vd.CAMPPLUS_BN_PREFIX,), "missing key voicedetect.campplus.bn_prefix"),
    ]


@pytest.mark.parametrize("case", range(len(_refusals())))
def test_files_the_encoder_cannot_run_are_refused_at_load(tmp_path, case):
    from gguf_rewrite import rewrite_gguf
    from parakeet_py.errors import ParakeetError

    changes, drop, message = _refusals()[case]
    bad = rewrite_gguf(MODEL, tmp_path / "bad.gguf", changes, drop=drop)
    with pytest.raises(ParakeetError, match=re.escape(message)):
        SpeakerEncoder(bad)


def test_a_bundled_campplus_embeds_as_its_source_file(tmp_path):
    from bundle_helpers import licence_info
    from parakeet_py.convert.bundle_write import ComponentSource, write_bundle

    out = tmp_path / "voice.gguf"
    write_bundle(out, [ComponentSource("voice", MODEL, None, licence_info("voice"))])
    pcm, _ = reference("campplus_speech")
    with SpeakerEncoder(out) as bundled, SpeakerEncoder(MODEL) as plain:
        assert np.array_equal(bundled.embed(pcm, sample_rate=16000), plain.embed(pcm, sample_rate=16000))
        assert bundled.family == plain.family and bundled.identity == plain.identity
