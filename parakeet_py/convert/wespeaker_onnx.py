"""Convert WeSpeaker's ONNX export of a ResNet34 (``voxceleb_resnet34_LM.onnx``, the file
voice-detect.cpp's converter takes) into the ``voicedetect`` GGUF, read with the onnx package.

The export has every BatchNorm folded into the Conv before it, under opaque initializer names
(``onnx::Conv_369``), which are kept. The graph is walked for the structure: the first Conv is
the stem; each residual ``Add`` of a 3x3 Conv (the block's conv2) and the shortcut closes a
block, whose conv1 is the Conv under the Relu that feeds conv2 and whose shortcut is a 1x1 Conv
or the block's input; the ``Gemm`` is the embedding Linear, a ``Sub`` of a constant after it the
embedding mean, and the constant added before the pooling's ``Sqrt`` its variance floor.

    from parakeet_py.convert.wespeaker_onnx import convert_wespeaker_onnx
    convert_wespeaker_onnx("voxceleb_resnet34_LM.onnx", "resnet34.gguf")
"""

from pathlib import Path
from typing import Dict, Optional

from .errors import UnsupportedModelError
from .resnet_gguf import Conv, ResnetGguf
from .speaker_onnx import attrs, check_conv, constants, embedding_linear, load_onnx, variance_floor


def convert_wespeaker_onnx(onnx_path, gguf_path, out_type: str = "f32", name: Optional[str] = None) -> int:
    """Write the voicedetect GGUF of the WeSpeaker ResNet ONNX export ``onnx_path``; returns its size."""
    out = ResnetGguf(out_type)
    graph = load_onnx(onnx_path).graph
    init = constants(graph)
    producer = {o: n for n in graph.node for o in n.output}
    convs = [n for n in graph.node if n.op_type == "Conv"]
    if not convs:
        raise UnsupportedModelError(f"{onnx_path} has no convolution: not a speaker ResNet")
    written: Dict[str, Conv] = {}

    def conv(node) -> Conv:
        """The Conv `node`'s tensors, checked and added once."""
        if node.output[0] in written:
            return written[node.output[0]]
        check_conv(onnx_path, node, init, need_bias=True)
        written[node.output[0]] = out.conv(node.input[1], init[node.input[1]], node.input[2], init[node.input[2]])
        return written[node.output[0]]

    def stride(node) -> int:
        return attrs(node).get("strides", [1])[0]

    stem = conv(convs[0])
    for add in (n for n in graph.node if n.op_type == "Add"):
        ends = [producer.get(i) for i in add.input]
        conv2 = next((p for p in ends if p is not None and p.op_type == "Conv" and attrs(p)["kernel_shape"][0] == 3), None)
        if conv2 is None:
            continue  # the pooling's var + eps
        relu = producer.get(conv2.input[0])
        conv1 = producer.get(relu.input[0]) if relu is not None and relu.op_type == "Relu" else None
        if conv1 is None or conv1.op_type != "Conv":
            raise UnsupportedModelError(f"{onnx_path}: the block ending in {add.name} does not start with Conv -> Relu")
        shortcut = ends[1] if ends[0] is conv2 else ends[0]
        has_down = shortcut is not None and shortcut.op_type == "Conv"
        if has_down and stride(shortcut) != stride(conv1):
            raise UnsupportedModelError(f"{onnx_path}: block {add.name}'s shortcut and conv1 have different strides")
        c1, c2 = conv(conv1), conv(conv2)
        out.block(c1, c2, conv(shortcut) if has_down else ("", ""), stride(conv1), init[conv2.input[1]].shape[0])

    seg = embedding_linear(onnx_path, graph, init)
    final = producer.get(graph.output[0].name)
    if final is not None and final.op_type == "Sub" and final.input[1] in init:
        out.embedding_mean(final.input[1], init[final.input[1]])
    return out.write(gguf_path, name if name is not None else Path(onnx_path).stem, stem,
                     (seg.input[1], seg.input[2]), init[seg.input[1]], init[seg.input[2]],
                     variance_floor(onnx_path, graph, init))
