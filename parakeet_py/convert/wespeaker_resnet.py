"""Convert a WeSpeaker ResNet34 speaker encoder checkpoint into voice-detect.cpp's ``voicedetect`` GGUF.

A WeSpeaker checkpoint (``avg_model.pt``: a ``torch.save`` of ``wespeaker.models.resnet.ResNet``'s
state_dict, the training head under ``projection.`` beside it) is read with the converter's
tensor-only unpickler (no PyTorch). Every BatchNorm is folded into the convolution before it, as
the ONNX export voice-detect.cpp converts has them: the folded weight keeps the convolution's
name and its bias is ``<conv>.bias``. The block list is written as the ``voicedetect.resnet.*``
manifest; a block with a shortcut convolution has stride 2 (WeSpeaker's layers 2-4 open so),
the others stride 1. A ``mean_vec.npy`` beside the checkpoint (WeSpeaker's embedding mean, which
its ONNX export subtracts) is stored as ``mean_vec``.

With ``f16`` or ``q8_0`` the matrices voice-detect.cpp's converter would quantise (``seg_1`` and
the 1x1 shortcut convolutions, stored as [out, in] matrices, where both sizes are at least 32
and, for q8_0, ``in`` a multiple of 32) are stored in that type; the 3x3 convolutions stay f32.

    from parakeet_py.convert.wespeaker_resnet import convert_wespeaker_resnet
    convert_wespeaker_resnet("voxceleb_resnet34_LM/avg_model.pt", "resnet34.gguf")
"""

import re
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import numpy as np

from . import quantize
from . import voicedetect_schema as vd
from .errors import ConversionError, UnsupportedModelError
from .gguf_writer import GGML_TYPES, TensorPlan, write_gguf
from .meta_value import MetaValue
from .torch_checkpoint import TorchCheckpoint
from .voicedetect_meta import speaker_metadata

OUT_TYPES = ("f32", "f16", "q8_0")
N_MELS = 80  # WeSpeaker's VoxCeleb recipes' fbank, the one voice-detect.cpp computes
BN_EPS = 1e-5  # torch.nn.BatchNorm2d's default, which WeSpeaker keeps
VAR_EPS = 1e-8  # the statistics pooling's variance floor in the ONNX export voice-detect.cpp reads
_BLOCK = re.compile(r"^(layer\d+\.\d+)\.conv1\.weight$")


def _fold(tensors: Dict[str, np.ndarray], conv: str, bn: str) -> Tuple[np.ndarray, np.ndarray]:
    """The weight and bias of Conv2d ``conv`` (no bias) followed by BatchNorm2d ``bn`` in eval mode."""
    for name in (f"{conv}.weight", f"{bn}.weight", f"{bn}.bias", f"{bn}.running_mean", f"{bn}.running_var"):
        if name not in tensors:
            raise ConversionError(f"the checkpoint has no tensor {name}")
    w = tensors[f"{conv}.weight"].astype(np.float64)
    if w.ndim != 4 or w.shape[2] != w.shape[3] or w.shape[2] % 2 == 0:
        raise ConversionError(f"{conv}.weight has shape {list(w.shape)}, expected a square odd-kernel Conv2d weight")
    scale = tensors[f"{bn}.weight"].astype(np.float64) / np.sqrt(tensors[f"{bn}.running_var"].astype(np.float64) + BN_EPS)
    bias = tensors[f"{bn}.bias"] - tensors[f"{bn}.running_mean"] * scale
    return (w * scale[:, None, None, None]).astype(np.float32), bias.astype(np.float32)


def _stored_type(weight: np.ndarray, out_type: str) -> str:
    """voice-detect.cpp's quantisation rule: matrices (1x1 kernels) of at least 32 by 32."""
    out, inp = weight.shape[0], int(np.prod(weight.shape[1:]))
    if out_type == "f32" or weight.ndim == 4 and weight.shape[2] != 1 or min(out, inp) < 32:
        return "f32"
    if out_type == "q8_0" and inp % quantize.QK8_0:
        return "f32"
    return out_type


def _plan(name: str, array: np.ndarray, type_name: str) -> TensorPlan:
    if type_name != "f32":
        array = array.reshape(array.shape[0], -1)  # a quantised 1x1 kernel is stored as its matrix
    data = quantize.encode(array, type_name, name)
    return TensorPlan(name, tuple(array.shape), GGML_TYPES[type_name], data.nbytes, (lambda d=data: d))


def _pooled_bins(n_mels: int, strides: List[int]) -> int:
    for s in strides:
        n_mels = (n_mels - 1) // s + 1  # a 3x3 conv with padding 1
    return n_mels


def convert_wespeaker_resnet(ckpt_path, gguf_path, out_type: str = "f32", name: Optional[str] = None) -> int:
    """Write the voicedetect GGUF of the WeSpeaker ResNet checkpoint ``ckpt_path``; returns its size."""
    if out_type not in OUT_TYPES:
        raise ConversionError(f"a ResNet34 speaker encoder is written as {', '.join(OUT_TYPES)}, not {out_type}")
    ckpt_path = Path(ckpt_path)
    try:
        with open(ckpt_path, "rb") as stream:
            tensors = {k: t.numpy() for k, t in TorchCheckpoint(stream).tensors.items()}
    except OSError as e:
        raise ConversionError(f"cannot read {ckpt_path}: {e}") from e
    if "conv1.weight" not in tensors or "seg_1.weight" not in tensors:
        raise UnsupportedModelError(f"{ckpt_path} is not a WeSpeaker ResNet checkpoint (no conv1.weight and seg_1.weight)")
    if "seg_2.weight" in tensors:
        raise UnsupportedModelError(f"{ckpt_path}: a second embedding layer (two_emb_layer) cannot run on the engine, "
                                    "which takes the embedding from seg_1 as voice-detect.cpp does")
    if any(k.endswith(".conv3.weight") for k in tensors):
        raise UnsupportedModelError(f"{ckpt_path}: bottleneck blocks (ResNet50 and up) are not supported, only BasicBlocks")
    blocks = sorted((m.group(1) for m in map(_BLOCK.match, tensors) if m),
                    key=lambda b: tuple(int(x) for x in re.findall(r"\d+", b)))
    if not blocks:
        raise UnsupportedModelError(f"{ckpt_path} has no residual block (layer<i>.<j>.conv1.weight)")

    plans: List[TensorPlan] = []

    def add_conv(conv: str, bn: str) -> Tuple[str, str]:
        w, b = _fold(tensors, conv, bn)
        plans.append(_plan(f"{conv}.weight", w, _stored_type(w, out_type)))
        plans.append(_plan(f"{conv}.bias", b, "f32"))
        return f"{conv}.weight", f"{conv}.bias"

    stem = add_conv("conv1", "bn1")
    manifest: Dict[str, list] = {k: [] for k in (vd.RESNET_CONV1_WEIGHT, vd.RESNET_CONV1_BIAS, vd.RESNET_CONV2_WEIGHT,
                                                 vd.RESNET_CONV2_BIAS, vd.RESNET_DOWN_WEIGHT, vd.RESNET_DOWN_BIAS)}
    strides = []
    for block in blocks:
        for key, value in zip((vd.RESNET_CONV1_WEIGHT, vd.RESNET_CONV1_BIAS), add_conv(f"{block}.conv1", f"{block}.bn1")):
            manifest[key].append(value)
        for key, value in zip((vd.RESNET_CONV2_WEIGHT, vd.RESNET_CONV2_BIAS), add_conv(f"{block}.conv2", f"{block}.bn2")):
            manifest[key].append(value)
        down = add_conv(f"{block}.shortcut.0", f"{block}.shortcut.1") if f"{block}.shortcut.0.weight" in tensors else ("", "")
        manifest[vd.RESNET_DOWN_WEIGHT].append(down[0])
        manifest[vd.RESNET_DOWN_BIAS].append(down[1])
        strides.append(2 if down[0] else 1)

    seg = tensors["seg_1.weight"].astype(np.float32)
    channels = tensors[f"{blocks[-1]}.conv2.weight"].shape[0]
    pooled = 2 * channels * _pooled_bins(N_MELS, strides)
    if seg.ndim != 2 or seg.shape[1] != pooled:
        raise ConversionError(f"seg_1.weight has shape {list(seg.shape)}; {N_MELS} mel bins through these blocks "
                              f"pool {pooled} values")
    dim = seg.shape[0]
    plans.append(_plan("seg_1.weight", seg, _stored_type(seg, out_type)))
    plans.append(_plan("seg_1.bias", tensors["seg_1.bias"].astype(np.float32), "f32"))
    mean_vec = ""
    mean_path = ckpt_path.with_name("mean_vec.npy")
    if mean_path.is_file():
        mv = np.load(mean_path).astype(np.float32).reshape(-1)
        if mv.shape != (dim,):
            raise ConversionError(f"{mean_path} holds {mv.size} values, the embedding has {dim}")
        mean_vec = "mean_vec"
        plans.append(_plan(mean_vec, mv, "f32"))

    meta = speaker_metadata(name if name is not None else ckpt_path.parent.name, vd.ARCH_RESNET34, dim, N_MELS) + [
        MetaValue(vd.RESNET_STEM_WEIGHT, "str", stem[0]),
        MetaValue(vd.RESNET_STEM_BIAS, "str", stem[1]),
        *(MetaValue(key, "str[]", values) for key, values in manifest.items()),
        MetaValue(vd.RESNET_STRIDE, "i32[]", strides),
        MetaValue(vd.RESNET_SEG_WEIGHT, "str", "seg_1.weight"),
        MetaValue(vd.RESNET_SEG_BIAS, "str", "seg_1.bias"),
        MetaValue(vd.RESNET_MEAN_VEC, "str", mean_vec),
        MetaValue(vd.RESNET_VAR_EPS, "f32", VAR_EPS),
    ]
    return write_gguf(gguf_path, meta, plans, architecture=vd.ARCHITECTURE)
