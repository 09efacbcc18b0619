"""Convert an ONNX export of 3D-Speaker's CAM++ (``torch.onnx.export`` of CAMPPlus, the form
voice-detect.cpp's converter reads, e.g. the zh-cn 16k-common model's ONNX) into the
``voicedetect`` GGUF, read with the ``onnx`` package only.

The exporter folds every BatchNorm that follows a convolution into it (the convolution's
initialisers then have names like ``onnx::Conv_1012``) and keeps the others as
BatchNormalization nodes: the dense layers' ``nonlinear1`` and the transits' ``nonlinear``
(initialisers under their module names) and the embedding's affine-free one (its scale and bias
are constants). Conv and BatchNormalization nodes come in forward order, so the manifest is the
list of Conv nodes (weight, bias or "") and of the affine BatchNorms' prefixes; every
initialiser they name is written verbatim. The engine checks the topology when it loads.

    from parakeet_py.convert.campplus_onnx import convert_campplus_onnx
    convert_campplus_onnx("campplus.onnx", "campplus.gguf")
"""

from pathlib import Path
from typing import Dict, Optional

import numpy as np

from .campplus_checkpoint import check_out_type, write_campplus
from .errors import UnsupportedModelError
from .speaker_onnx import load_onnx

_BN_PARTS = ("weight", "bias", "running_mean", "running_var")


def convert_campplus_onnx(onnx_path, gguf_path, out_type: str = "f32", name: Optional[str] = None) -> int:
    """Write the voicedetect GGUF of the CAM++ ONNX export at ``onnx_path``; returns its size."""
    from onnx import numpy_helper

    check_out_type(out_type)
    graph = load_onnx(onnx_path).graph
    initialisers: Dict[str, np.ndarray] = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    arrays: Dict[str, np.ndarray] = {}

    def take(key: str) -> None:
        if key not in initialisers:
            raise UnsupportedModelError(f"{onnx_path}: {key} is computed in the graph, not a stored weight")
        arrays[key] = np.ascontiguousarray(initialisers[key], dtype=np.float32)

    conv_weight, conv_bias = [], []
    for node in graph.node:
        if node.op_type != "Conv":
            continue
        take(node.input[1])
        conv_weight.append(node.input[1])
        bias = node.input[2] if len(node.input) > 2 else ""
        if bias:
            take(bias)
        conv_bias.append(bias)
    norms, embedding, eps = [], None, 1e-5
    for node in graph.node:
        if node.op_type != "BatchNormalization":
            continue
        eps = next((a.f for a in node.attribute if a.name == "epsilon"), eps)
        scale, mean, var = node.input[1], node.input[3], node.input[4]
        prefix = scale[: -len(".weight")]
        if scale in initialisers and [prefix + "." + p for p in _BN_PARTS] == list(node.input[1:5]):
            for key in node.input[1:5]:
                take(key)
            norms.append(prefix)
        elif embedding is None and scale not in initialisers:  # the affine-free embedding BatchNorm
            take(mean)
            take(var)
            embedding = (mean, var)
        else:
            raise UnsupportedModelError(f"{onnx_path}: BatchNormalization over {scale} is neither an affine "
                                        "module's nor the affine-free embedding's, which CAM++ has")
    if not conv_weight or embedding is None:
        raise UnsupportedModelError(f"{onnx_path}: no CAM++ convolutions or no embedding BatchNorm")
    return write_campplus(gguf_path, name if name is not None else Path(onnx_path).stem, conv_weight, conv_bias,
                          norms, embedding[0], embedding[1], eps, arrays, out_type)
