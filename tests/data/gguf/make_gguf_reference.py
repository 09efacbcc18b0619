#!/usr/bin/env python3
"""Writes reference_writer.gguf with the `gguf` package (ggml's own Python writer), so that
test_gguf_reference.cpp can check the C++ reader against an independent implementation of the
format: every metadata type, nested arrays, a custom alignment, and f32 / f16 / q8_0 tensors
whose values the C++ test recomputes from the formulas below.

Usage: .venv/bin/python tests/data/gguf/make_gguf_reference.py   (needs `pip install gguf`)
"""
import importlib.metadata
import os

import gguf
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PATH = os.path.join(HERE, "reference_writer.gguf")


def main():
    w = gguf.GGUFWriter(PATH, arch="parakeet")  # writes general.architecture
    w.add_custom_alignment(64)
    w.add_uint8("t.u8", 200)
    w.add_int8("t.i8", -5)
    w.add_uint16("t.u16", 60000)
    w.add_int16("t.i16", -30000)
    w.add_uint32("parakeet.encoder.d_model", 176)
    w.add_int32("t.i32", -7)
    w.add_float32("parakeet.preprocessor.preemph", 0.97)
    w.add_bool("parakeet.encoder.xscaling", True)
    w.add_string("parakeet.arch", "tdt")
    w.add_uint64("t.u64", 2**63 + 5)
    w.add_int64("t.i64", -(2**40))
    w.add_float64("t.f64", 1.0 / 3.0)
    w.add_array("parakeet.tokenizer.pieces", ["<unk>", "\u2581the", "s", ""])
    w.add_array("parakeet.tdt.durations", [0, 1, 2, 3, 4])
    w.add_array("t.floats", [0.5, -1.25])
    w.add_array("t.nested", [[1, 2], [3]])

    # f32 [2, 3] (ne = [3, 2]): value i * 0.5 - 1 at flat index i.
    w.add_tensor("encoder.w", (np.arange(6, dtype=np.float32) * 0.5 - 1).reshape(2, 3))
    # f16 [5]: value i - 2.
    w.add_tensor("encoder.h", np.arange(5, dtype=np.float16) - np.float16(2))
    # q8_0 [2, 64] (ne = [64, 2]): sin(i) quantised by ggml's reference rounding.
    src = np.sin(np.arange(128, dtype=np.float32)).reshape(2, 64)
    q = gguf.quantize(src, gguf.GGMLQuantizationType.Q8_0)
    w.add_tensor("joint.enc.weight", q, raw_dtype=gguf.GGMLQuantizationType.Q8_0)
    # f32 [1]: a single element.
    w.add_tensor("one", np.array([42.0], dtype=np.float32))

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print(f"wrote {PATH} ({os.path.getsize(PATH)} bytes) with gguf {importlib.metadata.version('gguf')}")


if __name__ == "__main__":
    main()
