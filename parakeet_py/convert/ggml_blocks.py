"""ggml's tensor encodings, computed by libparakeet (``parakeet_capi_ggml_quantize`` /
``parakeet_capi_ggml_dequantize``): byte for byte what ggml's reference quantisers write and bit
for bit what its dequantisers read, for f32, f16, q4_0, q4_1, q5_0, q5_1, q8_0, q4_K, q5_K and
q6_K. The converter and ``parakeet-cli quantize`` write every quantised tensor through here, so
the files hold the bytes that ggml and the engine agree on (tests/python/test_ggml_blocks.py
checks them against ggml's own library).

Rows are encoded in parallel chunks: the library call releases the GIL, and the K-quants'
scale searches cost about a microsecond per value.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Tuple

import gguf
import numpy as np

from .. import _native
from .gguf_writer import GGML_TYPES

# ggml type ids, values per block and bytes per block, by the lower-case names our tools take
# (ggml itself spells the K-quants q4_K); gguf-py's enum values are ggml's ids.
TYPE_IDS = {name: int(t) for name, t in GGML_TYPES.items()}
BLOCK_VALUES = {name: gguf.GGML_QUANT_SIZES[t][0] for name, t in GGML_TYPES.items()}
BLOCK_BYTES = {name: gguf.GGML_QUANT_SIZES[t][1] for name, t in GGML_TYPES.items()}
_CHUNK_VALUES = 1 << 20


def row_bytes(type_name: str, n_values: int) -> int:
    """Bytes of ``n_values`` values (a whole number of blocks) of ``type_name``."""
    _, lib = _native.load_or_raise()
    size = int(lib.parakeet_capi_ggml_row_bytes(TYPE_IDS[type_name], n_values))
    if size == 0 and n_values:
        raise ValueError(f"{n_values} values are not whole {type_name} blocks of {BLOCK_VALUES[type_name]}")
    return size


def _threads() -> int:
    return max(1, min(8, os.cpu_count() or 1))


def encode(x: np.ndarray, type_name: str) -> np.ndarray:
    """float32 ``[..., K]`` (K a multiple of the block) → uint8 ``[..., row_bytes(K)]``."""
    ffi, lib = _native.load_or_raise()
    x = np.ascontiguousarray(x, dtype=np.float32)
    k = x.shape[-1] if x.ndim else 1
    rows = x.reshape(-1, k)
    out = np.empty((rows.shape[0], row_bytes(type_name, k)), dtype=np.uint8)
    per_chunk = max(1, _CHUNK_VALUES // max(k, 1))

    def run(r0: int) -> None:
        src, dst = rows[r0:r0 + per_chunk], out[r0:r0 + per_chunk]
        _native.check_status(lib.parakeet_capi_ggml_quantize(
            TYPE_IDS[type_name], ffi.from_buffer("float[]", src), src.size,
            ffi.from_buffer("uint8_t[]", dst, require_writable=True), dst.size))

    starts = range(0, rows.shape[0], per_chunk)
    if len(starts) == 1:  # most tensors: no pool to start
        run(0)
    else:
        with ThreadPoolExecutor(_threads()) as pool:
            list(pool.map(run, starts))
    return out.reshape(*x.shape[:-1], out.shape[-1]) if x.ndim else out.reshape(-1)


def decode(raw: np.ndarray, type_name: str, shape: Tuple[int, ...]) -> np.ndarray:
    """The float32 values of a tensor of ``shape`` stored as ``type_name`` in ``raw``."""
    ffi, lib = _native.load_or_raise()
    raw = np.ascontiguousarray(raw, dtype=np.uint8).reshape(-1)
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    out = np.empty(n, dtype=np.float32)
    _native.check_status(lib.parakeet_capi_ggml_dequantize(
        TYPE_IDS[type_name], ffi.from_buffer("uint8_t[]", raw), raw.size, n,
        ffi.from_buffer("float[]", out, require_writable=True)))
    return out.reshape(shape)
