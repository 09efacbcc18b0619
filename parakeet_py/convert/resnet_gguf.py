"""The ``voicedetect`` GGUF of a WeSpeaker ResNet34 (voice-detect.cpp's ``wespeaker_resnet34``
schema), collected from either source form: each convolution with its BatchNorm folded in
(weight and bias under the names given), the blocks in the order they run, the embedding Linear
and the optional embedding mean, then checked and written with the ``voicedetect.resnet.*``
manifest (wespeaker_resnet.py reads checkpoints, wespeaker_onnx.py ONNX exports).

With ``f16`` or ``q8_0`` the matrices voice-detect.cpp's converter would quantise (the embedding
Linear and the kernel-1 convolutions, stored as [out, in] matrices, where both sizes are at least
32 and, for q8_0, ``in`` a multiple of 32) are stored in that type; wider kernels stay f32.
ERes2Net's and CAM++'s converters store their weights by the same rule (stored_type).
"""

from typing import List, Tuple

import numpy as np

from . import quantize
from . import voicedetect_schema as vd
from .errors import ConversionError
from .gguf_writer import GGML_TYPES, TensorPlan, write_gguf
from .meta_value import MetaValue
from .voicedetect_meta import speaker_metadata

OUT_TYPES = ("f32", "f16", "q8_0")
N_MELS = 80  # WeSpeaker's VoxCeleb recipes' fbank, the one voice-detect.cpp computes

Conv = Tuple[str, str]  # (weight name, bias name); ("", "") for no convolution


def stored_type(weight: np.ndarray, out_type: str) -> str:
    """The type a speaker encoder's weight (a Linear's, or a Conv1d's or Conv2d's) is stored in
    for --type `out_type`."""
    out, inp = weight.shape[0], int(np.prod(weight.shape[1:]))
    if out_type == "f32" or any(k != 1 for k in weight.shape[2:]) or min(out, inp) < 32:
        return "f32"
    if out_type == "q8_0" and inp % quantize.QK8_0:
        return "f32"
    return out_type


def tensor_plan(name: str, array: np.ndarray, type_name: str) -> TensorPlan:
    if type_name != "f32":
        array = array.reshape(array.shape[0], -1)  # a quantised 1x1 kernel is stored as its matrix
    data = quantize.encode(array, type_name, name)
    return TensorPlan(name, tuple(array.shape), GGML_TYPES[type_name], data.nbytes, (lambda d=data: d))


class ResnetGguf:
    def __init__(self, out_type: str):
        if out_type not in OUT_TYPES:
            raise ConversionError(f"a ResNet34 speaker encoder is written as {', '.join(OUT_TYPES)}, not {out_type}")
        self.out_type = out_type
        self.plans: List[TensorPlan] = []
        self.blocks: List[Tuple[Conv, Conv, Conv, int]] = []
        self.mean_vec = ""
        self.channels = 0

    def _add(self, name: str, array: np.ndarray, type_name: str) -> None:
        self.plans.append(tensor_plan(name, array, type_name))

    def conv(self, weight_name: str, weight: np.ndarray, bias_name: str, bias: np.ndarray) -> Conv:
        """Adds a folded convolution ([out, in, k, k] and [out])."""
        if weight.ndim != 4 or weight.shape[2] != weight.shape[3] or weight.shape[2] % 2 == 0:
            raise ConversionError(f"{weight_name} has shape {list(weight.shape)}, expected a square odd-kernel Conv2d weight")
        if bias.shape != (weight.shape[0],):
            raise ConversionError(f"{bias_name} has shape {list(bias.shape)}, expected [{weight.shape[0]}]")
        weight = weight.astype(np.float32)
        self._add(weight_name, weight, stored_type(weight, self.out_type))
        self._add(bias_name, bias.astype(np.float32), "f32")
        return weight_name, bias_name

    def block(self, conv1: Conv, conv2: Conv, down: Conv, stride: int, channels: int) -> None:
        """A BasicBlock of `channels` outputs whose conv1 and down convolution have `stride`."""
        self.blocks.append((conv1, conv2, down, stride))
        self.channels = channels

    def embedding_mean(self, name: str, mean: np.ndarray) -> None:
        self.mean_vec = name
        self._add(name, mean.astype(np.float32).reshape(-1), "f32")

    def write(self, path, name: str, stem: Conv, seg: Conv, seg_weight: np.ndarray, seg_bias: np.ndarray,
              var_eps: float) -> int:
        """Adds the embedding Linear ([dim, 2 * C * F'] and [dim]) and writes the file; returns its size."""
        if not self.blocks:
            raise ConversionError("the network has no residual block")
        bins = N_MELS
        for *_, stride in self.blocks:
            bins = (bins - 1) // stride + 1  # a 3x3 conv with padding 1
        pooled = 2 * self.channels * bins
        if seg_weight.ndim != 2 or seg_weight.shape[1] != pooled:
            raise ConversionError(f"{seg[0]} has shape {list(seg_weight.shape)}; {N_MELS} mel bins through these "
                                  f"blocks pool {pooled} values")
        dim = seg_weight.shape[0]
        means = [p for p in self.plans if p.name == self.mean_vec]
        if means and means[0].shape != (dim,):
            raise ConversionError(f"the embedding mean holds {means[0].shape[0]} values, the embedding has {dim}")
        seg_weight = seg_weight.astype(np.float32)
        self._add(seg[0], seg_weight, stored_type(seg_weight, self.out_type))
        self._add(seg[1], seg_bias.astype(np.float32), "f32")
        columns = list(zip(*[(c1[0], c1[1], c2[0], c2[1], d[0], d[1]) for c1, c2, d, _ in self.blocks]))
        keys = (vd.RESNET_CONV1_WEIGHT, vd.RESNET_CONV1_BIAS, vd.RESNET_CONV2_WEIGHT, vd.RESNET_CONV2_BIAS,
                vd.RESNET_DOWN_WEIGHT, vd.RESNET_DOWN_BIAS)
        meta = speaker_metadata(name, vd.ARCH_RESNET34, dim, N_MELS) + [
            MetaValue(vd.RESNET_STEM_WEIGHT, "str", stem[0]),
            MetaValue(vd.RESNET_STEM_BIAS, "str", stem[1]),
            *(MetaValue(key, "str[]", list(values)) for key, values in zip(keys, columns)),
            MetaValue(vd.RESNET_STRIDE, "i32[]", [stride for *_, stride in self.blocks]),
            MetaValue(vd.RESNET_SEG_WEIGHT, "str", seg[0]),
            MetaValue(vd.RESNET_SEG_BIAS, "str", seg[1]),
            MetaValue(vd.RESNET_MEAN_VEC, "str", self.mean_vec),
            MetaValue(vd.RESNET_VAR_EPS, "f32", float(var_eps)),
        ]
        return write_gguf(path, meta, self.plans, architecture=vd.ARCHITECTURE)
