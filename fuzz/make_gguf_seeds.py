#!/usr/bin/env python3
"""Writes the seed inputs of fuzz_gguf into fuzz/corpus/fuzz_gguf/.

Small valid GGUF files that between them use every metadata value type, nested arrays, each
tensor type the reader supports (f32, f16 and every ggml block type: one file each), a custom
alignment and version 2, so the
fuzzer starts from inputs that reach every part of the parser. Written with `struct` alone, to
need nothing beyond Python. The files carry no .gguf suffix because the repository ignores
*.gguf outside tests/data.

Usage: python3 fuzz/make_gguf_seeds.py
"""
import struct

from seed_corpus import write_seeds

U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)
SCALAR_FORMAT = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32: "<f",
                 BOOL: "<B", U64: "<Q", I64: "<q", F64: "<d"}
GGML_F32, GGML_F16, GGML_Q8_0 = 0, 1, 8
# ggml block types: (name, type id, values per block, bytes per block).
BLOCK_TYPES = [("q4_0", 2, 32, 18), ("q4_1", 3, 32, 20), ("q5_0", 6, 32, 22), ("q5_1", 7, 32, 24),
               ("q8_0", 8, 32, 34), ("q4_k", 12, 256, 144), ("q5_k", 13, 256, 176), ("q6_k", 14, 256, 210)]


def gguf_string(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def value(vtype, v):
    if vtype == STRING:
        return gguf_string(v)
    if vtype == ARRAY:
        elem_type, items = v
        return struct.pack("<IQ", elem_type, len(items)) + b"".join(value(elem_type, x) for x in items)
    return struct.pack(SCALAR_FORMAT[vtype], v)


def gguf(kvs, tensors, version=3, alignment=32):
    """kvs: [(key, type, value)]; tensors: [(name, ggml_type, ne, data bytes)]."""
    out = struct.pack("<IIQQ", 0x46554747, version, len(tensors), len(kvs))
    for key, vtype, v in kvs:
        out += gguf_string(key) + struct.pack("<I", vtype) + value(vtype, v)
    offset, blobs = 0, []
    for name, ttype, ne, data in tensors:
        out += gguf_string(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", d) for d in ne)
        out += struct.pack("<IQ", ttype, offset)
        blobs.append((offset, data))
        offset = (offset + len(data) + alignment - 1) // alignment * alignment
    if not tensors:
        return out
    out += b"\0" * (-len(out) % alignment)
    data_start = len(out)
    out += b"\0" * offset
    out = bytearray(out)
    for off, data in blobs:
        out[data_start + off:data_start + off + len(data)] = data
    return bytes(out)


def pattern(n, start):
    return bytes((start + 7 * i) & 0xFF for i in range(n))


SEEDS = {
    "parakeet_tdt_small": gguf(
        [("general.architecture", STRING, "parakeet"),
         ("parakeet.arch", STRING, "tdt"),
         ("parakeet.encoder.d_model", U32, 176),
         ("parakeet.encoder.n_layers", I32, 2),
         ("parakeet.preprocessor.preemph", F32, 0.97),
         ("parakeet.encoder.xscaling", BOOL, 1),
         ("parakeet.tokenizer.pieces", ARRAY, (STRING, ["<unk>", "\u2581the", "s"])),
         ("parakeet.tdt.durations", ARRAY, (I32, [0, 1, 2, 3, 4]))],
        [("encoder.layers.0.norm.weight", GGML_F32, [5], pattern(20, 1)),
         ("encoder.layers.0.ff.weight", GGML_F16, [3, 2], pattern(12, 2)),
         ("joint.enc.weight", GGML_Q8_0, [64, 2], pattern(136, 3))]),
    "every_value_type": gguf(
        [("general.alignment", U32, 64),
         ("u8", U8, 9), ("i8", I8, -9), ("u16", U16, 999), ("i16", I16, -999),
         ("u64", U64, 1 << 40), ("i64", I64, -(1 << 40)), ("f64", F64, 0.125),
         ("bools", ARRAY, (BOOL, [1, 0, 1])),
         ("nested", ARRAY, (ARRAY, [(STRING, ["x"]), (F64, [2.5])]))],
        [("a", GGML_Q8_0, [32], pattern(34, 4)),
         ("b", GGML_F32, [1, 1, 1, 3], pattern(12, 5))],
        alignment=64),
    "version2_scalar": gguf([], [("scalar", GGML_F32, [], pattern(4, 6))], version=2),
}
# One matrix of two rows of two blocks per block type (bytes of a pattern: scales and values of
# every size, some halves NaN or infinite, which decoding must survive).
for _name, _type, _values, _bytes in BLOCK_TYPES:
    SEEDS[f"type_{_name}"] = gguf([("general.architecture", STRING, "parakeet")],
                                  [("joint.enc.weight", _type, [2 * _values, 2], pattern(4 * _bytes, _type))])



def bundle(components, extra_kvs=(), extra_tensors=(), version=1, listed=None):
    """A parakeet-bundle of ``components`` [(name, kind)], each a small Silero-like model stored
    under "<name>." with its per-component keys; ``listed`` overrides the names listed."""
    names = [n for n, _ in components] if listed is None else listed
    kvs = [("general.architecture", STRING, "parakeet-bundle"),
           ("parakeet.bundle.version", U32, version),
           ("parakeet.bundle.components", ARRAY, (STRING, names))]
    tensors = []
    for i, (name, kind) in enumerate(components):
        kvs.append((f"{name}.general.architecture", STRING, "silero_vad"))
        for field in ("kind", "license", "license_url", "source", "attribution", "changes"):
            kvs.append((f"parakeet.bundle.{name}.{field}", STRING, kind if field == "kind" else "x"))
        tensors.append((f"{name}.vad16k.out.weight", GGML_F32, [4], pattern(16, i)))
    return gguf(kvs + list(extra_kvs), tensors + list(extra_tensors))


# Bundles (docs/bundles.md): a valid one, and one of each header fault the bundle reader refuses.
SEEDS.update({
    "bundle_two": bundle([("vad", "vad"), ("x", "ced")]),
    "bundle_version2": bundle([("vad", "vad")], version=2),
    "bundle_bad_name": bundle([("Vad", "vad")]),
    "bundle_reserved_name": bundle([("general", "vad")]),
    "bundle_listed_twice": bundle([("vad", "vad")], listed=["vad", "vad"]),
    "bundle_nothing_under_prefix": bundle([("vad", "vad")], listed=["vad", "b"],
                                          extra_kvs=[(f"parakeet.bundle.b.{f}", STRING, "x") for f in
                                                     ("kind", "license", "license_url", "source", "attribution",
                                                      "changes")]),
    "bundle_missing_key": bundle([("vad", "vad")], listed=["vad", "b"]),
    "bundle_tensor_outside": bundle([("vad", "vad")], extra_tensors=[("loose.weight", GGML_F32, [1], pattern(4, 9))]),
})

if __name__ == "__main__":
    write_seeds("fuzz_gguf", SEEDS)
