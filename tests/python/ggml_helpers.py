"""ggml itself, as the oracle for our GGUF files and block types: ``libggml-base.so`` from
parakeet.cpp's wheel (``tools/setup.sh`` runs ``bench/setup_parakeet_cpp.sh``, which installs it
under ``.cache/pcpp``), called through ctypes.

CI always has the wheel, so there a missing library fails the test; elsewhere it skips.
"""

from __future__ import annotations

import ctypes
import os
import sys

import numpy as np

from data_helpers import ROOT
from setup_checks import missing
from parakeet_py.convert import ggml_blocks

LIBGGML = ROOT / ".cache" / "pcpp" / "venv" / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / \
    "site-packages" / "parakeet" / "lib" / "libggml-base.so"
#: Our type names where ggml spells them otherwise.
GGML_NAMES = {"q4_k": "q4_K", "q5_k": "q5_K", "q6_k": "q6_K"}


def libggml() -> ctypes.CDLL:
    """The library, with the signatures the tests call declared."""
    if not LIBGGML.exists():
        missing(str(LIBGGML), "bash bench/setup_parakeet_cpp.sh")
    lib = ctypes.CDLL(str(LIBGGML))
    lib.ggml_quantize_chunk.restype = ctypes.c_size_t
    lib.ggml_quantize_chunk.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                                        ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p]
    return lib


def ggml_quantize(lib: ctypes.CDLL, x: np.ndarray, type_name: str) -> np.ndarray:
    """The rows of float32 matrix x as ggml's reference quantiser encodes them (no importance matrix)."""
    rows, k = x.shape
    out = np.zeros((rows, ggml_blocks.row_bytes(type_name, k)), np.uint8)
    lib.ggml_quantize_chunk(ggml_blocks.TYPE_IDS[type_name], x.ctypes.data, out.ctypes.data, 0, rows, k, None)
    return out


def ggml_dequantize(lib: ctypes.CDLL, raw: np.ndarray, type_name: str, n: int) -> np.ndarray:
    """The first n values of the blocks in raw, as ggml decodes them."""
    fn = getattr(lib, "dequantize_row_" + GGML_NAMES.get(type_name, type_name))
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
    out = np.zeros(n, np.float32)
    fn(np.ascontiguousarray(raw).ctypes.data, out.ctypes.data, n)
    return out


class _TensorHead(ctypes.Structure):
    """The first fields of ggml's ``struct ggml_tensor`` (ggml.h): its type and dimensions."""
    _fields_ = [("type", ctypes.c_int), ("buffer", ctypes.c_void_p), ("ne", ctypes.c_int64 * 4),
                ("nb", ctypes.c_size_t * 4)]


class _GgufInitParams(ctypes.Structure):
    _fields_ = [("no_alloc", ctypes.c_bool), ("ctx", ctypes.POINTER(ctypes.c_void_p))]


class _GgmlInitParams(ctypes.Structure):
    _fields_ = [("mem_size", ctypes.c_size_t), ("mem_buffer", ctypes.c_void_p), ("no_alloc", ctypes.c_bool)]


def _declare_gguf(lib: ctypes.CDLL) -> None:
    tensor = ctypes.POINTER(_TensorHead)
    for name, restype, argtypes in (
            ("gguf_init_from_file", ctypes.c_void_p, [ctypes.c_char_p, _GgufInitParams]),
            ("gguf_init_empty", ctypes.c_void_p, []),
            ("gguf_set_kv", None, [ctypes.c_void_p, ctypes.c_void_p]),
            ("gguf_get_n_tensors", ctypes.c_int64, [ctypes.c_void_p]),
            ("gguf_get_tensor_name", ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_int64]),
            ("gguf_add_tensor", None, [ctypes.c_void_p, tensor]),
            ("gguf_write_to_file", ctypes.c_bool, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_bool]),
            ("gguf_free", None, [ctypes.c_void_p]),
            ("ggml_init", ctypes.c_void_p, [_GgmlInitParams]),
            ("ggml_free", None, [ctypes.c_void_p]),
            ("ggml_get_tensor", tensor, [ctypes.c_void_p, ctypes.c_char_p]),
            ("ggml_new_tensor", tensor, [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_int64)]),
            ("ggml_set_name", tensor, [tensor, ctypes.c_char_p]),
            ("ggml_get_data", ctypes.c_void_p, [tensor]),
            ("ggml_n_dims", ctypes.c_int, [tensor]),
            ("ggml_nbytes", ctypes.c_size_t, [tensor])):
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, argtypes


def quantize_as_parakeet_cpp(lib: ctypes.CDLL, src, dst, type_name: str, quantisable) -> list:
    """Writes GGUF file ``src`` to ``dst`` the way parakeet.cpp's ``parakeet-cli quantize`` does:
    ggml loads it, every tensor with ``quantisable(name)`` that is F32, 2-D, at least 32 by 32
    and made of whole blocks is quantised with ``ggml_quantize_chunk`` (no importance matrix),
    the rest and every key are copied as they are, and ggml's own writer stores the file (which
    drops each tensor's trailing size-1 ne dimensions). Returns the names it quantised."""
    _declare_gguf(lib)
    data_ctx = ctypes.c_void_p()
    source = lib.gguf_init_from_file(str(src).encode(), _GgufInitParams(False, ctypes.pointer(data_ctx)))
    assert source, f"ggml cannot read {src}"
    out = lib.gguf_init_empty()
    quant_ctx = lib.ggml_init(_GgmlInitParams(2 * os.path.getsize(src) + (1 << 20), None, False))
    block = ggml_blocks.BLOCK_VALUES[type_name]
    quantised = []
    try:
        lib.gguf_set_kv(out, source)
        for i in range(lib.gguf_get_n_tensors(source)):
            name = lib.gguf_get_tensor_name(source, i)
            t = lib.ggml_get_tensor(data_ctx, name)
            ne0, ne1 = t.contents.ne[0], t.contents.ne[1]
            if (quantisable(name.decode()) and t.contents.type == ggml_blocks.TYPE_IDS["f32"]
                    and lib.ggml_n_dims(t) == 2 and ne0 >= 32 and ne1 >= 32 and ne0 % block == 0):
                q = lib.ggml_new_tensor(quant_ctx, ggml_blocks.TYPE_IDS[type_name], 2, t.contents.ne)
                lib.ggml_set_name(q, name)
                written = lib.ggml_quantize_chunk(ggml_blocks.TYPE_IDS[type_name], lib.ggml_get_data(t),
                                                  lib.ggml_get_data(q), 0, ne1, ne0, None)
                assert written == lib.ggml_nbytes(q), name
                t = q
                quantised.append(name.decode())
            lib.gguf_add_tensor(out, t)
        assert lib.gguf_write_to_file(out, str(dst).encode(), False), f"ggml could not write {dst}"
    finally:
        lib.ggml_free(quant_ctx)
        lib.gguf_free(out)
        lib.gguf_free(source)
        lib.ggml_free(data_ctx)
    return quantised
