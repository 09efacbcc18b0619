"""Convert 3D-Speaker's ERes2Net ONNX export (the file voice-detect.cpp's converter takes, e.g.
sherpa-onnx's 3dspeaker ERes2Net base) into the ``voicedetect`` GGUF, read with the onnx package.

As voice-detect.cpp does: the export has every BatchNorm folded into the Conv before it, and
torch.onnx writes the Convs in the order the forward runs them, so the manifest is that flat list
(weight, bias or "" for the BatchNorm-less fusion downsamplers, stride) with 3D-Speaker's fixed
topology (stages of [3, 4, 6, 3] blocks, scale 2); the engine replays the forward over it
(libparakeet/src/model/speaker/eres2net.h). A graph with another number of Convs is refused. The
``Gemm`` is the embedding Linear and the constant added before the pooling's ``Sqrt`` its
variance floor. Types: resnet_gguf.py (1x1 convolutions and the Linear may be f16 / q8_0).

    from parakeet_py.convert.eres2net_onnx import convert_eres2net_onnx
    convert_eres2net_onnx("eres2net_base.onnx", "eres2net.gguf")
"""

from pathlib import Path
from typing import List, Optional

from . import voicedetect_schema as vd
from .errors import ConversionError, UnsupportedModelError
from .gguf_writer import TensorPlan, write_gguf
from .meta_value import MetaValue
from .resnet_gguf import N_MELS, OUT_TYPES, stored_type, tensor_plan
from .speaker_onnx import attrs, check_conv, constants, embedding_linear, load_onnx, variance_floor
from .voicedetect_meta import speaker_metadata

NUM_BLOCKS = [3, 4, 6, 3]
SCALE = 2
RELU_CLAMP = 20.0  # 3D-Speaker's ReLU is Hardtanh(0, 20)


def _conv_count(num_blocks: List[int], scale: int) -> int:
    """Convs of the forward: the stem; per block conv1, `scale` 3x3s, conv3 (and AFF's two per
    chunk after the first in stages 3-4), a shortcut in each stage's first block; 3 downsamplers
    and 3 AFFs."""
    blocks = sum(n * (2 + scale + (2 * (scale - 1) if s >= 2 else 0)) + 1 for s, n in enumerate(num_blocks))
    return 1 + blocks + 3 + 3 * 2


def convert_eres2net_onnx(onnx_path, gguf_path, out_type: str = "f32", name: Optional[str] = None) -> int:
    """Write the voicedetect GGUF of the ERes2Net ONNX export ``onnx_path``; returns its size."""
    if out_type not in OUT_TYPES:
        raise ConversionError(f"an ERes2Net speaker encoder is written as {', '.join(OUT_TYPES)}, not {out_type}")
    graph = load_onnx(onnx_path).graph
    values = constants(graph)
    convs = [n for n in graph.node if n.op_type == "Conv"]
    if len(convs) != _conv_count(NUM_BLOCKS, SCALE):
        raise UnsupportedModelError(f"{onnx_path} has {len(convs)} convolutions, 3D-Speaker's ERes2Net "
                                    f"(stages {NUM_BLOCKS}, scale {SCALE}) has {_conv_count(NUM_BLOCKS, SCALE)}")
    plans: List[TensorPlan] = []
    weights, biases, strides = [], [], []
    for node in convs:
        check_conv(onnx_path, node, values, need_bias=False)
        w = values[node.input[1]].astype("float32")
        plans.append(tensor_plan(node.input[1], w, stored_type(w, out_type)))
        bias = node.input[2] if len(node.input) > 2 else ""
        if bias:
            plans.append(tensor_plan(bias, values[bias].astype("float32"), "f32"))
        weights.append(node.input[1])
        biases.append(bias)
        strides.append(int(attrs(node).get("strides", [1])[0]))
    seg = embedding_linear(onnx_path, graph, values)
    seg_w = values[seg.input[1]].astype("float32")
    plans.append(tensor_plan(seg.input[1], seg_w, stored_type(seg_w, out_type)))
    plans.append(tensor_plan(seg.input[2], values[seg.input[2]].astype("float32"), "f32"))
    meta = speaker_metadata(name if name is not None else Path(onnx_path).stem, vd.ARCH_ERES2NET, seg_w.shape[0],
                            N_MELS) + [
        MetaValue(vd.ERES2NET_CONV_WEIGHT, "str[]", weights),
        MetaValue(vd.ERES2NET_CONV_BIAS, "str[]", biases),
        MetaValue(vd.ERES2NET_CONV_STRIDE, "i32[]", strides),
        MetaValue(vd.ERES2NET_NUM_BLOCKS, "i32[]", NUM_BLOCKS),
        MetaValue(vd.ERES2NET_M_CHANNELS, "u32", int(values[weights[0]].shape[0])),
        MetaValue(vd.ERES2NET_SCALE, "u32", SCALE),
        MetaValue(vd.ERES2NET_SEG_WEIGHT, "str", seg.input[1]),
        MetaValue(vd.ERES2NET_SEG_BIAS, "str", seg.input[2]),
        MetaValue(vd.ERES2NET_RELU_CLAMP, "f32", RELU_CLAMP),
        MetaValue(vd.ERES2NET_VAR_EPS, "f32", variance_floor(onnx_path, graph, values)),
    ]
    return write_gguf(gguf_path, meta, plans, architecture=vd.ARCHITECTURE)
