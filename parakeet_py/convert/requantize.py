"""GGUF → GGUF: re-encode the matmul weights of a parakeet GGUF file in another type.

Every metadata key (but the file type) is copied unchanged. ``out_type`` f32 decodes every
tensor to F32 (so any file can be read back as plain floats, bit for bit as ggml decodes it).
Any other type re-encodes the allowlisted matmul weights that fit its blocks
(:func:`quantize.storage_decision`), from whatever type they are stored in (a quantised source
is decoded first, so going from one quantised type to another loses precision twice); every
other tensor is copied as it is stored, as parakeet.cpp's ``quantize`` does. The report lists
the allowlisted weights that kept their type and why.
"""

import time
from pathlib import Path
from typing import List

import gguf
import numpy as np

from . import gguf_schema as schema
from . import quantize
from .errors import ConversionError
from . import ggml_blocks
from .gguf_writer import ARCHITECTURE, FILE_TYPES, GGML_TYPES, TYPE_NAMES, TensorPlan, write_gguf
from .meta_value import MetaValue, copied_meta, field_value
from .convert import summarise_metadata
from .report import ConversionReport

# Written by the writer itself (architecture), or meaningless once the file is rewritten.
_NOT_COPIED = {schema.GENERAL_ARCHITECTURE, "general.alignment", schema.GENERAL_FILE_TYPE}


def requantize_gguf(in_path, out_path, out_type: str = "q8_0") -> ConversionReport:
    """Rewrite the parakeet GGUF ``in_path`` to ``out_path`` with its matmul weights as ``out_type``."""
    if out_type not in quantize.OUT_TYPES:
        raise ConversionError(f"unknown output type {out_type!r} (choose from {', '.join(quantize.OUT_TYPES)})")
    start = time.perf_counter()
    in_path, out_path = Path(in_path), Path(out_path)
    if in_path.resolve() == out_path.resolve():
        raise ConversionError("the output must be a different file from the input")
    try:
        reader = gguf.GGUFReader(in_path)
    except (OSError, ValueError) as e:
        raise ConversionError(f"{in_path} is not a readable GGUF file: {e}") from e
    arch_field = reader.get_field(schema.GENERAL_ARCHITECTURE)
    arch_name = field_value(arch_field) if arch_field is not None else None
    if arch_name != ARCHITECTURE:
        raise ConversionError(f"{in_path} is not a parakeet GGUF file (general.architecture = {arch_name!r})")

    metadata: List[MetaValue] = [MetaValue(schema.GENERAL_FILE_TYPE, "u32", int(FILE_TYPES[out_type]))]
    for key, field in reader.fields.items():
        if key.startswith("GGUF.") or key in _NOT_COPIED:
            continue
        metadata.append(copied_meta(key, field))

    for t in reader.tensors:
        if t.tensor_type not in TYPE_NAMES:
            raise ConversionError(f"tensor '{t.name}' has type {t.tensor_type.name}, which this tool cannot read")
    plans = [_plan(t, out_type) for t in reader.tensors]
    kept = [why for t in reader.tensors if (why := quantize.storage_decision(t.name, _shape(t), out_type)[1])]
    size = write_gguf(out_path, metadata, plans)
    counts: dict = {}
    for p in plans:
        counts[p.ggml_type.name] = counts.get(p.ggml_type.name, 0) + 1
    arch_value = next((m.value[0] for m in metadata if m.key == schema.ARCH), "")
    name_value = next((m.value[0] for m in metadata if m.key == schema.GENERAL_NAME), "")
    summary = summarise_metadata([MetaValue(m.key, m.kind, m.value[0] if m.kind == "raw" else m.value) for m in metadata])
    return ConversionReport(
        input=str(in_path), output=str(out_path), out_type=out_type, arch=arch_value, name=name_value,
        n_tensors=len(plans), type_counts=counts, skipped=[], bytes_written=size,
        seconds=time.perf_counter() - start, metadata=summary, kept=kept,
    )


def _shape(t) -> tuple:
    return tuple(int(n) for n in reversed(t.shape.tolist()))  # ggml ne → numpy order


def _plan(t, out_type: str) -> TensorPlan:
    shape = _shape(t)
    raw = t.data
    source = TYPE_NAMES[t.tensor_type]
    target = "f32" if out_type == "f32" else quantize.storage_type(t.name, shape, out_type)
    if target == source or (target == "f32" and out_type != "f32"):
        # The same type, or a tensor this type does not apply to: copied as stored.
        return TensorPlan(t.name, shape, t.tensor_type, int(t.n_bytes), lambda: np.asarray(raw).reshape(-1).view(np.uint8))

    def produce() -> np.ndarray:
        values = np.asarray(raw).reshape(-1).view(np.uint8)
        x = ggml_blocks.decode(values, source, shape) if source != "f32" else np.asarray(raw).reshape(shape)
        return quantize.encode(x.astype(np.float32, copy=False), target, t.name)

    return TensorPlan(t.name, shape, GGML_TYPES[target], quantize.encoded_nbytes(shape, target), produce)
