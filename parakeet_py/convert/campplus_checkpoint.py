"""Convert a 3D-Speaker CAM++ speaker encoder into voice-detect.cpp's ``voicedetect`` GGUF.

The input is a ``torch.save`` of CAMPPlus's state_dict (3D-Speaker's ``speakerlab`` and
ModelScope's ``models/audio/sv/DTDNN.py`` name the modules alike: ``head.*`` for the 2-D FCM,
``xvector.{tdnn,block<b>.tdnnd<l>,transit<b>,out_nonlinear,dense}.*``), e.g. the
``campplus_cn_common.bin`` of ``iic/speech_campplus_sv_zh-cn_16k-common``. It is read with the
converter's tensor-only unpickler (no PyTorch).

voice-detect.cpp converts an ONNX export instead, whose exporter folds every BatchNorm that
follows a convolution into it; its file lists the convolutions (weight, bias or "") and the
remaining affine BatchNorms (prefixes) in forward order, plus the final affine-free BatchNorm's
statistics (``voicedetect.campplus.*``). This converter writes that layout from the state dict,
folding the same BatchNorms itself (in float64): each head conv's, the tdnn's, each CAM layer's
``nonlinear2`` into its ``linear1``, and ``out_nonlinear`` into the last transit. A folded
convolution keeps its module's names (``<module>.weight``, ``<module>.bias``), where the ONNX
export has ``onnx::Conv_<n>``; the engine reads the names from the manifest either way.

    from parakeet_py.convert.campplus_checkpoint import convert_campplus
    convert_campplus("campplus_cn_common.bin", "campplus.gguf")
"""

from pathlib import Path
from typing import Dict, List, Optional

import numpy as np

from . import voicedetect_schema as vd
from .errors import CheckpointError, ConversionError, UnsupportedModelError
from .gguf_writer import write_gguf
from .meta_value import MetaValue
from .resnet_gguf import OUT_TYPES, stored_type, tensor_plan
from .torch_checkpoint import TorchCheckpoint
from .voicedetect_meta import speaker_metadata

BN_EPS = 1e-5  # torch.nn.BatchNorm's default, which CAM++ keeps (a state_dict does not store it)
HEAD_STAGES = ("head.layer1", "head.layer2")
# The engine runs CAM++'s fixed head (two stages of two blocks) and its three dense blocks.
HEAD_BLOCKS_PER_STAGE = 2
HEAD_CONVS = 12  # its 3x3 stem and last conv, 4 blocks of two 3x3 convs, and the 2 stride-2 shortcuts
DENSE_BLOCKS = 3
_BN_PARTS = ("weight", "bias", "running_mean", "running_var")
# The final, affine-free BatchNorm of the embedding (DenseLayer's "batchnorm_").
EMB_BN_MEAN = "xvector.dense.nonlinear.batchnorm.running_mean"
EMB_BN_VAR = "xvector.dense.nonlinear.batchnorm.running_var"


def is_campplus_checkpoint(path) -> bool:
    """Whether ``path`` is a torch.save zip holding a CAM++ state_dict."""
    try:
        with open(path, "rb") as stream:
            tensors = TorchCheckpoint(stream).tensors
    except (OSError, CheckpointError):
        return False
    return "head.conv1.weight" in tensors and "xvector.tdnn.linear.weight" in tensors


class _Manifest:
    """The convolutions and BatchNorms in forward order, with the arrays to write."""

    def __init__(self, tensors):
        self.tensors = tensors
        self.conv_weight: List[str] = []
        self.conv_bias: List[str] = []
        self.bn_prefix: List[str] = []
        self.arrays: Dict[str, np.ndarray] = {}

    def has(self, name: str) -> bool:
        return name in self.tensors

    def get(self, name: str) -> np.ndarray:
        if name not in self.tensors:
            raise ConversionError(f"the CAM++ checkpoint has no tensor {name}")
        return self.tensors[name].numpy().astype(np.float64)

    def conv(self, module: str, folded_norm: Optional[str] = None) -> np.ndarray:
        """Adds ``module``'s convolution (with the BatchNorm ``folded_norm`` folded in); returns its weight."""
        w = self.get(module + ".weight")
        b = self.get(module + ".bias") if self.has(module + ".bias") else None
        if folded_norm is not None:
            gamma, beta, mean, var = (self.get(f"{folded_norm}.{part}") for part in _BN_PARTS)
            if gamma.shape != (w.shape[0],):
                raise ConversionError(f"{folded_norm} has {gamma.shape[0]} channels, {module} makes {w.shape[0]}")
            scale = gamma / np.sqrt(var + BN_EPS)
            w = w * scale.reshape((-1,) + (1,) * (w.ndim - 1))
            b = beta - mean * scale + (0.0 if b is None else b * scale)
        self.arrays[module + ".weight"] = w.astype(np.float32)
        self.conv_weight.append(module + ".weight")
        if b is None:
            self.conv_bias.append("")
        else:
            self.arrays[module + ".bias"] = b.astype(np.float32)
            self.conv_bias.append(module + ".bias")
        return w

    def norm(self, prefix: str) -> None:
        for part in _BN_PARTS:
            self.arrays[f"{prefix}.{part}"] = self.get(f"{prefix}.{part}").astype(np.float32)
        self.bn_prefix.append(prefix)


def _count(m: _Manifest, pattern: str, first: int = 1) -> int:
    """How many of pattern.format(first), pattern.format(first + 1), ... the checkpoint holds."""
    n = 0
    while m.has(pattern.format(first + n)):
        n += 1
    return n


def _walk(m: _Manifest) -> None:
    m.conv("head.conv1", "head.bn1")
    for stage in HEAD_STAGES:
        blocks = _count(m, stage + ".{}.conv1.weight", first=0)
        if blocks != HEAD_BLOCKS_PER_STAGE:
            raise UnsupportedModelError(f"this CAM++ head has {blocks} blocks in {stage}, the engine runs "
                                        f"{HEAD_BLOCKS_PER_STAGE}")
        for i in range(blocks):
            p = f"{stage}.{i}"
            m.conv(p + ".conv1", p + ".bn1")
            m.conv(p + ".conv2", p + ".bn2")
            if m.has(p + ".shortcut.0.weight"):
                m.conv(p + ".shortcut.0", p + ".shortcut.1")
    m.conv("head.conv2", "head.bn2")
    m.conv("xvector.tdnn.linear", "xvector.tdnn.nonlinear.batchnorm")
    blocks = _count(m, "xvector.block{}.tdnnd1.linear1.weight")
    if blocks != DENSE_BLOCKS:
        raise UnsupportedModelError(f"this CAM++ has {blocks} dense blocks, the engine runs {DENSE_BLOCKS}")
    for b in range(1, blocks + 1):
        for layer in range(1, _count(m, f"xvector.block{b}.tdnnd{{}}.linear1.weight") + 1):
            p = f"xvector.block{b}.tdnnd{layer}"
            m.norm(p + ".nonlinear1.batchnorm")
            m.conv(p + ".linear1", p + ".nonlinear2.batchnorm")
            m.conv(p + ".cam_layer.linear_local")
            m.conv(p + ".cam_layer.linear1")
            m.conv(p + ".cam_layer.linear2")
        m.norm(f"xvector.transit{b}.nonlinear.batchnorm")
        m.conv(f"xvector.transit{b}.linear", "xvector.out_nonlinear.batchnorm" if b == blocks else None)
    m.conv("xvector.dense.linear")


def campplus_manifest(tensors) -> _Manifest:
    """The manifest and arrays of a CAM++ state_dict (name -> tensor with ``.numpy()``)."""
    m = _Manifest(tensors)
    _walk(m)
    for key in (EMB_BN_MEAN, EMB_BN_VAR):
        m.arrays[key] = m.get(key).astype(np.float32)
    return m


def write_campplus(gguf_path, name: str, conv_weight: List[str], conv_bias: List[str], bn_prefix: List[str],
                   emb_bn_mean: str, emb_bn_var: str, bn_eps: float, arrays: Dict[str, np.ndarray],
                   out_type: str) -> int:
    """Write a CAM++ voicedetect GGUF: the manifest (forward order) and the arrays it names, the
    convolution weights in the type resnet_gguf.stored_type gives for `out_type` (the kernel-1
    ones of at least 32 by 32 in f16 or q8_0, as voice-detect.cpp quantises), all else f32;
    returns the file size. The sizes come from the head's first convolution (its channels) and
    the tdnn (the 13th convolution: the head has 12)."""
    if len(conv_weight) < HEAD_CONVS + 6:  # the tdnn, a CAM layer's four, a transit and the dense at least
        raise UnsupportedModelError(f"{len(conv_weight)} convolutions are too few for a CAM++")
    channels = arrays[conv_weight[0]].shape[0]
    tdnn_in = arrays[conv_weight[HEAD_CONVS]].shape[1]
    if tdnn_in % channels:
        raise ConversionError(f"the tdnn takes {tdnn_in} features, not a multiple of the head's {channels} channels")
    n_mels = 8 * tdnn_in // channels  # the head halves the frequency axis three times
    embedding_dim = arrays[conv_weight[-1]].shape[0]
    metadata = speaker_metadata(name, vd.ARCH_CAMPPLUS, embedding_dim, n_mels) + [
        MetaValue(vd.CAMPPLUS_CONV_WEIGHT, "str[]", conv_weight),
        MetaValue(vd.CAMPPLUS_CONV_BIAS, "str[]", conv_bias),
        MetaValue(vd.CAMPPLUS_BN_PREFIX, "str[]", bn_prefix),
        MetaValue(vd.CAMPPLUS_EMB_BN_MEAN, "str", emb_bn_mean),
        MetaValue(vd.CAMPPLUS_EMB_BN_VAR, "str", emb_bn_var),
        MetaValue(vd.CAMPPLUS_BN_EPS, "f32", float(bn_eps)),
    ]
    weights = set(conv_weight)
    plans = [tensor_plan(key, a, stored_type(a, out_type) if key in weights else "f32") for key, a in arrays.items()]
    return write_gguf(gguf_path, metadata, plans, architecture=vd.ARCHITECTURE)


def convert_campplus(ckpt_path, gguf_path, out_type: str = "f32", name: Optional[str] = None) -> int:
    """Write the voicedetect GGUF of the CAM++ state_dict at ``ckpt_path``; returns its size."""
    check_out_type(out_type)
    ckpt_path = Path(ckpt_path)
    with open(ckpt_path, "rb") as stream:
        m = campplus_manifest(TorchCheckpoint(stream).tensors)
    return write_campplus(gguf_path, name if name is not None else ckpt_path.stem, m.conv_weight, m.conv_bias,
                          m.bn_prefix, EMB_BN_MEAN, EMB_BN_VAR, BN_EPS, m.arrays, out_type)


def check_out_type(out_type: str) -> None:
    if out_type not in OUT_TYPES:
        raise ConversionError(f"a CAM++ speaker encoder is written as {', '.join(OUT_TYPES[:-1])} or {OUT_TYPES[-1]}, "
                              f"not {out_type}")
