"""Which tensors may be stored in a smaller type, and their encodings.

Only the 2-D weights the engine feeds straight into a matrix product may be halved or
quantised (the FFN and attention projections, the subsampling output projection and the
joint's encoder/prediction projections), and only when both dimensions are at least 32 and
the row length is a whole number of the type's blocks (32 values; 256 for the K-quants
q4_k, q5_k and q6_k). Such a tensor that does not fit stays F32 (in the 110M model
``joint.pred.weight``, 640 long, under the K-quants): the report says which and why.
Everything else (norms, biases, convolutions, the LSTM, embeddings, the joint output layer,
the CTC head, the mel filterbank) stays F32, exactly as in the published parakeet.cpp files
and as parakeet.cpp's ``quantize`` tool decides.

f16 and q8_0 are encoded here in numpy; the 4- to 6-bit types by libparakeet
(:mod:`.ggml_blocks`), byte for byte as ggml's reference quantisers.

Q8_0 must be bit-identical to ggml's ``quantize_row_q8_0_ref``: per block of 32 values,
``d = max|x| / 127`` (float32), ``id = 1/d`` (0 when d is 0), ``q = roundf(x * id)``
(half away from zero), ``d`` stored as IEEE half (round to nearest even). A block is
34 bytes: ``d`` (2 bytes, little-endian) then the 32 signed bytes.
"""

import re
from typing import Optional, Tuple

import numpy as np

from . import ggml_blocks
from . import gguf_schema as schema
from .errors import ConversionError

OUT_TYPES = tuple(ggml_blocks.TYPE_IDS)  # f32, f16, q8_0, q6_k ... q4_0: the writer's types
QK8_0 = 32
Q8_0_BLOCK_BYTES = 2 + QK8_0
MIN_DIM = 32

_Q8_0_BLOCK = np.dtype([("d", "<f2"), ("qs", "i1", (QK8_0,))])

_MATMUL_WEIGHTS = re.compile(schema.QUANTISABLE_WEIGHTS)


def is_matmul_weight(name: str) -> bool:
    """True for the weights on the quantisation allowlist (by name only)."""
    return _MATMUL_WEIGHTS.fullmatch(name) is not None


def storage_type(name: str, shape: Tuple[int, ...], out_type: str) -> str:
    """The type tensor ``name`` of numpy ``shape`` is stored as when converting to ``out_type``.

    ``shape`` is in numpy/torch order, so ``shape[-1]`` is the row length K (ggml's ne0).
    """
    return storage_decision(name, shape, out_type)[0]


def storage_decision(name: str, shape: Tuple[int, ...], out_type: str) -> Tuple[str, Optional[str]]:
    """``(type, why_kept)``: the storage type, and for an allowlisted weight that cannot take
    ``out_type`` the reason it stays F32 (None otherwise)."""
    if out_type not in OUT_TYPES:
        raise ConversionError(f"unknown output type {out_type!r} (choose from {', '.join(OUT_TYPES)})")
    if out_type == "f32" or not is_matmul_weight(name):
        return "f32", None
    # f16 keeps the 32-value rule of the published converter, though halves have no blocks.
    block = max(QK8_0, ggml_blocks.BLOCK_VALUES[out_type])
    if len(shape) != 2:
        return "f32", f"{name} stays F32: it has {len(shape)} dimensions, {out_type} needs 2"
    if min(shape) < MIN_DIM:
        return "f32", f"{name} stays F32: shape {list(shape)} has a dimension below {MIN_DIM}"
    if shape[1] % block != 0:
        return "f32", (f"{name} stays F32: its row length {shape[1]} is not a multiple of the "
                       f"{block}-value {out_type} block")
    return out_type, None


def encoded_nbytes(shape: Tuple[int, ...], type_name: str) -> int:
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if type_name not in ggml_blocks.BLOCK_BYTES:
        raise ValueError(type_name)
    return n // ggml_blocks.BLOCK_VALUES[type_name] * ggml_blocks.BLOCK_BYTES[type_name]


def encode(x: np.ndarray, type_name: str, name: str = "tensor") -> np.ndarray:
    """float32 ``x`` in the bytes of ``type_name`` (f32: ``x`` itself)."""
    if type_name == "f32":
        return np.asarray(x, dtype=np.float32)
    if type_name == "f16":
        return encode_f16(x, name)
    if type_name == "q8_0":
        return encode_q8_0(x)
    return ggml_blocks.encode(x, type_name)


def encode_f16(x: np.ndarray, name: str = "tensor") -> np.ndarray:
    """float32 → IEEE half (round to nearest even, as ggml's F16C path and numpy both do)."""
    x = np.asarray(x, dtype=np.float32)
    with np.errstate(over="ignore"):  # overflow is reported below, with the tensor's name
        h = x.astype("<f2")
    if np.isinf(h).any() and not np.isinf(x[np.isinf(h)]).all():
        raise ConversionError(f"'{name}' has values beyond the float16 range (|x| > 65504); use f32 or q8_0")
    return h


def encode_q8_0(x: np.ndarray) -> np.ndarray:
    """float32 [..., K] (K a multiple of 32) → uint8 [..., K/32*34], ggml's Q8_0 byte layout."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    if x.ndim == 0 or x.shape[-1] % QK8_0:
        raise ValueError(f"q8_0 needs a row length divisible by {QK8_0}, got shape {x.shape}")
    blocks = x.reshape(-1, QK8_0)
    amax = np.abs(blocks).max(axis=1, keepdims=True)
    d = amax / np.float32(127)
    with np.errstate(divide="ignore"):
        inv = np.where(d == 0, np.float32(0), np.float32(1) / d).astype(np.float32)
    v = (blocks * inv).astype(np.float64)  # the float32 product, widened so |v| + 0.5 is exact
    q = np.sign(v) * np.floor(np.abs(v) + 0.5)  # roundf: half away from zero
    out = np.empty(blocks.shape[0], dtype=_Q8_0_BLOCK)
    out["d"] = d[:, 0].astype(np.float16)
    out["qs"] = q.astype(np.int8)
    return out.view(np.uint8).reshape(*x.shape[:-1], x.shape[-1] // QK8_0 * Q8_0_BLOCK_BYTES)


def decode_q8_0(raw: np.ndarray, shape: Tuple[int, ...]) -> np.ndarray:
    """Inverse of :func:`encode_q8_0` up to rounding: ``d * q`` per element, float32."""
    blocks = np.ascontiguousarray(raw, dtype=np.uint8).reshape(-1).view(_Q8_0_BLOCK)
    x = blocks["d"].astype(np.float32)[:, None] * blocks["qs"].astype(np.float32)
    return x.reshape(shape)
