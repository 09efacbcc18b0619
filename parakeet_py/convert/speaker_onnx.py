"""Reading the ONNX exports of the speaker encoders with the onnx package: which network a file
holds (WeSpeaker's ResNet34, 3D-Speaker's ERes2Net or CAM++), and, for the 2-D ResNets, its
constants, node attributes and the statistics pooling's variance floor."""

from typing import Dict, Optional

import numpy as np

from .errors import ConversionError, UnsupportedModelError


def load_onnx(path):
    import onnx

    try:
        return onnx.load(str(path))
    except Exception as e:  # onnx raises DecodeError and others for a file that is not a model
        raise ConversionError(f"cannot read the ONNX model {path}: {e}") from e


def attrs(node) -> Dict[str, object]:
    import onnx

    return {a.name: list(a.ints) if a.ints else onnx.helper.get_attribute_value(a) for a in node.attribute}


def speaker_arch(path) -> Optional[str]:
    """The voicedetect.arch of the speaker encoder in ``path``: ``campplus`` (CAM++'s weights are
    stored under its ``xvector.*`` module names), ``eres2net`` (2-D convs and AFF's Tanh),
    ``wespeaker_resnet34`` (2-D convs), or None (no 2-D convolution: Silero's VAD, say)."""
    graph = load_onnx(path).graph
    if any(i.name.startswith("xvector.") for i in graph.initializer):
        return "campplus"
    nodes = graph.node
    if not any(n.op_type == "Conv" and len(attrs(n).get("kernel_shape", [])) == 2 for n in nodes):
        return None
    return "eres2net" if any(n.op_type == "Tanh" for n in nodes) else "wespeaker_resnet34"


def check_conv(path, node, values: Dict[str, np.ndarray], need_bias: bool) -> None:
    """Refuses a Conv the engine does not run: weights not constant (a BatchNorm not folded),
    groups, dilation, other than (k - 1) / 2 padding, unequal strides."""
    a = attrs(node)
    k = a.get("kernel_shape", [0])[0]
    if node.input[1] not in values or (need_bias or len(node.input) > 2) and (len(node.input) < 3 or node.input[2] not in values):
        raise UnsupportedModelError(f"{path}: Conv {node.name} has no constant weight and bias (is the BatchNorm folded in?)")
    if a.get("group", 1) != 1 or any(d != 1 for d in a.get("dilations", [1])) or \
            any(p != (k - 1) // 2 for p in a.get("pads", [0])) or len(set(a.get("strides", [1]))) != 1:
        raise UnsupportedModelError(f"{path}: Conv {node.name} has attributes the engine does not run "
                                    f"({a}; only groups 1, dilation 1, padding (k - 1) / 2, equal strides)")


def constants(graph) -> Dict[str, np.ndarray]:
    """The graph's initializers and Constant nodes' values, by name."""
    from onnx import numpy_helper

    values = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    for n in graph.node:
        if n.op_type == "Constant" and "value" in attrs(n):
            values[n.output[0]] = numpy_helper.to_array(attrs(n)["value"])
    return values


def variance_floor(path, graph, values: Dict[str, np.ndarray]) -> float:
    """The constant added to the variance before the pooling's Sqrt."""
    producer = {o: n for n in graph.node for o in n.output}
    sqrt = next((n for n in graph.node if n.op_type == "Sqrt"), None)
    floor = producer.get(sqrt.input[0]) if sqrt is not None else None
    eps = [values[i] for i in floor.input if i in values] if floor is not None and floor.op_type == "Add" else []
    if len(eps) != 1 or np.size(eps[0]) != 1:
        raise UnsupportedModelError(f"{path}: no constant variance floor added before the pooling's Sqrt")
    return float(eps[0])


def embedding_linear(path, graph, values: Dict[str, np.ndarray]):
    """The graph's one Gemm (transB, constant weight and bias): the embedding Linear."""
    gemms = [n for n in graph.node if n.op_type == "Gemm"]
    if len(gemms) != 1 or attrs(gemms[0]).get("transB", 0) != 1 or any(i not in values for i in gemms[0].input[1:3]):
        raise UnsupportedModelError(f"{path}: expected one Gemm (transB, constant weight and bias) as the embedding")
    return gemms[0]
