"""Convert a WeSpeaker ResNet34 speaker encoder checkpoint into voice-detect.cpp's ``voicedetect`` GGUF.

A WeSpeaker checkpoint (``avg_model.pt``: a ``torch.save`` of ``wespeaker.models.resnet.ResNet``'s
state_dict, the training head under ``projection.`` beside it) is read with the converter's
tensor-only unpickler (no PyTorch). Every BatchNorm is folded into the convolution before it, as
the ONNX export voice-detect.cpp converts has them: the folded weight keeps the convolution's
name and its bias is ``<conv>.bias``. The block list is written as the ``voicedetect.resnet.*``
manifest; a block with a shortcut convolution has stride 2 (WeSpeaker's layers 2-4 open so),
the others stride 1. A ``mean_vec.npy`` beside the checkpoint (WeSpeaker's embedding mean, which
its ONNX export subtracts) is stored as ``mean_vec``. Types: resnet_gguf.py.

    from parakeet_py.convert.wespeaker_resnet import convert_wespeaker_resnet
    convert_wespeaker_resnet("voxceleb_resnet34_LM/avg_model.pt", "resnet34.gguf")
"""

import re
from pathlib import Path
from typing import Dict, Optional, Tuple

import numpy as np

from .errors import ConversionError, UnsupportedModelError
from .resnet_gguf import Conv, ResnetGguf
from .torch_checkpoint import TorchCheckpoint

BN_EPS = 1e-5  # torch.nn.BatchNorm2d's default, which WeSpeaker keeps
VAR_EPS = 1e-8  # the statistics pooling's variance floor in the ONNX export voice-detect.cpp reads
_BLOCK = re.compile(r"^(layer\d+\.\d+)\.conv1\.weight$")


def _fold(tensors: Dict[str, np.ndarray], conv: str, bn: str) -> Tuple[np.ndarray, np.ndarray]:
    """The weight and bias of Conv2d ``conv`` (no bias) followed by BatchNorm2d ``bn`` in eval mode."""
    for name in (f"{conv}.weight", f"{bn}.weight", f"{bn}.bias", f"{bn}.running_mean", f"{bn}.running_var"):
        if name not in tensors:
            raise ConversionError(f"the checkpoint has no tensor {name}")
    w = tensors[f"{conv}.weight"].astype(np.float64)
    scale = tensors[f"{bn}.weight"].astype(np.float64) / np.sqrt(tensors[f"{bn}.running_var"].astype(np.float64) + BN_EPS)
    bias = tensors[f"{bn}.bias"] - tensors[f"{bn}.running_mean"] * scale
    if w.ndim != 4:
        raise ConversionError(f"{conv}.weight has shape {list(w.shape)}, expected a Conv2d weight")
    return (w * scale[:, None, None, None]).astype(np.float32), bias.astype(np.float32)


def convert_wespeaker_resnet(ckpt_path, gguf_path, out_type: str = "f32", name: Optional[str] = None) -> int:
    """Write the voicedetect GGUF of the WeSpeaker ResNet checkpoint ``ckpt_path``; returns its size."""
    ckpt_path = Path(ckpt_path)
    try:
        with open(ckpt_path, "rb") as stream:
            tensors = {k: t.numpy() for k, t in TorchCheckpoint(stream).tensors.items()}
    except OSError as e:
        raise ConversionError(f"cannot read {ckpt_path}: {e}") from e
    mean_path = ckpt_path.with_name("mean_vec.npy")
    return convert_wespeaker_tensors(tensors, gguf_path, out_type, name if name is not None else ckpt_path.parent.name,
                                     np.load(mean_path) if mean_path.is_file() else None, str(ckpt_path))


def convert_wespeaker_tensors(tensors: Dict[str, np.ndarray], gguf_path, out_type: str, name: str,
                              mean_vec: Optional[np.ndarray] = None, source: str = "the checkpoint") -> int:
    """The same from the checkpoint's state_dict as arrays (and the embedding mean, if any)."""
    out = ResnetGguf(out_type)
    if "conv1.weight" not in tensors or "seg_1.weight" not in tensors:
        raise UnsupportedModelError(f"{source} is not a WeSpeaker ResNet checkpoint (no conv1.weight and seg_1.weight)")
    if "seg_2.weight" in tensors:
        raise UnsupportedModelError(f"{source}: a second embedding layer (two_emb_layer) cannot run on the engine, "
                                    "which takes the embedding from seg_1 as voice-detect.cpp does")
    if any(k.endswith(".conv3.weight") for k in tensors):
        raise UnsupportedModelError(f"{source}: bottleneck blocks (ResNet50 and up) are not supported, only BasicBlocks")
    blocks = sorted((m.group(1) for m in map(_BLOCK.match, tensors) if m),
                    key=lambda b: tuple(int(x) for x in re.findall(r"\d+", b)))

    def folded(conv: str, bn: str) -> Conv:
        weight, bias = _fold(tensors, conv, bn)
        return out.conv(f"{conv}.weight", weight, f"{conv}.bias", bias)

    stem = folded("conv1", "bn1")
    for block in blocks:
        conv1, conv2 = folded(f"{block}.conv1", f"{block}.bn1"), folded(f"{block}.conv2", f"{block}.bn2")
        has_down = f"{block}.shortcut.0.weight" in tensors
        down = folded(f"{block}.shortcut.0", f"{block}.shortcut.1") if has_down else ("", "")
        out.block(conv1, conv2, down, 2 if has_down else 1, tensors[f"{block}.conv2.weight"].shape[0])
    if mean_vec is not None:
        out.embedding_mean("mean_vec", mean_vec)
    return out.write(gguf_path, name, stem,
                     ("seg_1.weight", "seg_1.bias"), tensors["seg_1.weight"], tensors["seg_1.bias"], VAR_EPS)
