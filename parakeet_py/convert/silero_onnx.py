"""Convert Silero VAD v6's official ONNX file (the ``silero-vad`` package's ``silero_vad.onnx``)
into a GGUF file of parakeet.cpp's ``silero_vad`` schema, which libparakeet loads as a VAD model.

The ONNX holds both networks (16 kHz in the top-level ``If``'s then-branch, 8 kHz in its
else-branch); every weight is a ``Constant`` whose output name ends in ``__<torch name>``. Only
the ``onnx`` package reads the file: no onnxruntime and none of Silero's code.

    from parakeet_py.convert.silero_onnx import convert_silero_onnx
    convert_silero_onnx("silero_vad.onnx", "silero-vad-f32.gguf", out_type="f32")
"""

import hashlib
from pathlib import Path
from typing import Dict, List

import numpy as np

from .errors import ConversionError
from .gguf_writer import GGML_TYPES, TensorPlan, write_gguf
from .meta_value import MetaValue

ARCHITECTURE = "silero_vad"
OUT_TYPES = ("f32", "f16")

# Per rate: the ONNX branch, the GGUF tensor prefix and the framing keys the engine checks.
_RATES = {
    16000: dict(branch="then_branch", prefix="vad16k.", chunk=512, context=64, n_fft=256, hop=128, pad=64),
    8000: dict(branch="else_branch", prefix="vad8k.", chunk=256, context=32, n_fft=128, hop=64, pad=32),
}
_CHANNELS = [128, 64, 64, 128]
_STRIDES = [1, 2, 2, 1]
_HIDDEN = 128
# The 15 torch names of one branch, in the order they are written.
TENSOR_NAMES = (["stft.forward_basis_buffer"]
                + [f"encoder.{i}.reparam_conv.{p}" for i in range(4) for p in ("weight", "bias")]
                + [f"decoder.rnn.{p}" for p in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
                + ["decoder.decoder.2.weight", "decoder.decoder.2.bias"])
# What --type f16 may store in f16 (parakeet.cpp's f16 file: every conv and LSTM weight). The
# STFT basis and every bias stay f32.
_F16_NAMES = {n for n in TENSOR_NAMES if n.endswith(("weight", "weight_ih", "weight_hh"))}
# ... except this one by default: rounding encoder.1's weights to f16 alone moves the
# probabilities by up to 1.3e-2 on the test speech (each other weight by under 2e-3), so it stays
# f32 (+48 KB). KEEP_F32=() writes parakeet.cpp's layout.
KEEP_F32 = ("encoder.1.reparam_conv.weight",)


def _branch_weights(model, branch: str) -> Dict[str, np.ndarray]:
    from onnx import numpy_helper

    for node in model.graph.node:
        if node.op_type != "If":
            continue
        for attr in node.attribute:
            if attr.name != branch:
                continue
            found = {}
            for sub in attr.g.node:
                if sub.op_type == "Constant" and "__" in sub.output[0]:
                    torch_name = sub.output[0].rsplit("__", 1)[1]
                    if torch_name in TENSOR_NAMES:
                        found[torch_name] = numpy_helper.to_array(sub.attribute[0].t).astype(np.float32)
            return found
    return {}


def convert_silero_onnx(onnx_path, gguf_path, out_type: str = "f32", version: str = "",
                        keep_f32=KEEP_F32) -> int:
    """Write ``gguf_path`` from Silero's ONNX at ``onnx_path``; returns the file size.

    Raises ConversionError when the file is not Silero VAD v6's two-branch ONNX."""
    if out_type not in OUT_TYPES:
        raise ConversionError(f"unknown type {out_type!r} for a Silero VAD file (known: {', '.join(OUT_TYPES)})")
    try:
        import onnx
    except ImportError as e:  # pragma: no cover - onnx is a declared dependency
        raise ConversionError("converting an ONNX file needs the 'onnx' package (pip install onnx)") from e
    raw = Path(onnx_path).read_bytes()
    try:
        model = onnx.load_from_string(raw)
    except Exception as e:
        raise ConversionError(f"{onnx_path} is not an ONNX file: {e}") from e

    metadata: List[MetaValue] = [
        MetaValue("general.name", "str", "silero-vad"),
        MetaValue("general.license", "str", "MIT"),
        MetaValue("general.url", "str", "https://github.com/snakers4/silero-vad"),
        MetaValue("silero_vad.source.sha256", "str", hashlib.sha256(raw).hexdigest()),
        MetaValue("silero_vad.sample_rates", "i32[]", [8000, 16000]),
        MetaValue("silero_vad.encoder.n_layers", "u32", 4),
        MetaValue("silero_vad.encoder.strides", "i32[]", _STRIDES),
        MetaValue("silero_vad.encoder.channels", "i32[]", _CHANNELS),
        MetaValue("silero_vad.encoder.kernel", "u32", 3),
        MetaValue("silero_vad.lstm.hidden", "u32", _HIDDEN),
    ]
    if version:
        metadata.append(MetaValue("silero_vad.source.version", "str", version))
    plans: List[TensorPlan] = []
    for rate, r in _RATES.items():
        for key, value in (("chunk_samples", r["chunk"]), ("context_samples", r["context"]),
                           ("stft.n_fft", r["n_fft"]), ("stft.hop", r["hop"]),
                           ("stft.right_reflect_pad", r["pad"])):
            metadata.append(MetaValue(f"silero_vad.{rate}.{key}", "u32", value))
        weights = _branch_weights(model, r["branch"])
        missing = [n for n in TENSOR_NAMES if n not in weights]
        if missing:
            raise ConversionError(f"{onnx_path} is not Silero VAD v6's ONNX: its {rate} Hz branch lacks "
                                  f"{', '.join(missing)}")
        for name in TENSOR_NAMES:
            array = weights[name]
            half = out_type == "f16" and name in _F16_NAMES and name not in keep_f32
            data = array.astype(np.float16) if half else array
            plans.append(TensorPlan(r["prefix"] + name, tuple(array.shape), GGML_TYPES["f16" if half else "f32"],
                                    data.nbytes, (lambda d=data: d)))
    return write_gguf(gguf_path, metadata, plans, architecture=ARCHITECTURE)
