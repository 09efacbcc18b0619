"""GGUF → GGUF: shrink the allowlisted F32/F16 matmul weights of a parakeet GGUF file.

Every metadata key and every other tensor is copied unchanged; only tensors that
:func:`quantize.storage_type` would store as ``out_type`` are re-encoded, and only towards a
smaller type (F32 → F16 or Q8_0, F16 → Q8_0). Tensors already in another quantised type are
copied as they are.
"""

import time
from pathlib import Path
from typing import Any, List

import gguf
import numpy as np

from . import gguf_schema as schema
from . import quantize
from .errors import ConversionError
from .gguf_writer import ARCHITECTURE, FILE_TYPES, GGML_TYPES, TensorPlan, write_gguf
from .nemo_config import MetaValue
from .convert import summarise_metadata
from .report import ConversionReport

_T = gguf.GGMLQuantizationType
_SHRINKS = {("f32", _T.F16), ("f32", _T.Q8_0), ("f16", _T.Q8_0)}  # (source kind, target type)
# Written by the writer itself (architecture), or meaningless once the file is rewritten.
_NOT_COPIED = {schema.GENERAL_ARCHITECTURE, "general.alignment", schema.GENERAL_FILE_TYPE}


def _field_value(field) -> Any:
    """A ReaderField's value as plain Python (str, int, float, bool or a list of them)."""
    vtype = field.types[0]
    if vtype == gguf.GGUFValueType.ARRAY:
        if len(field.types) != 2:
            raise ConversionError(f"metadata '{field.name}' is a nested array, which cannot be copied")
        if field.types[1] == gguf.GGUFValueType.STRING:
            return [bytes(field.parts[i]).decode("utf-8") for i in field.data]
        return [field.parts[i].tolist()[0] for i in field.data]
    if vtype == gguf.GGUFValueType.STRING:
        return bytes(field.parts[field.data[0]]).decode("utf-8")
    return field.parts[field.data[0]].tolist()[0]


def requantize_gguf(in_path, out_path, out_type: str = "q8_0") -> ConversionReport:
    """Rewrite the parakeet GGUF ``in_path`` to ``out_path`` with its matmul weights as ``out_type``."""
    if out_type not in ("f16", "q8_0"):
        raise ConversionError(f"requantising can only shrink weights: choose f16 or q8_0, not {out_type!r}")
    start = time.perf_counter()
    in_path, out_path = Path(in_path), Path(out_path)
    if in_path.resolve() == out_path.resolve():
        raise ConversionError("the output must be a different file from the input")
    try:
        reader = gguf.GGUFReader(in_path)
    except (OSError, ValueError) as e:
        raise ConversionError(f"{in_path} is not a readable GGUF file: {e}") from e
    arch_field = reader.get_field(schema.GENERAL_ARCHITECTURE)
    arch_name = _field_value(arch_field) if arch_field is not None else None
    if arch_name != ARCHITECTURE:
        raise ConversionError(f"{in_path} is not a parakeet GGUF file (general.architecture = {arch_name!r})")

    metadata: List[MetaValue] = [MetaValue(schema.GENERAL_FILE_TYPE, "u32", int(FILE_TYPES[out_type]))]
    for key, field in reader.fields.items():
        if key.startswith("GGUF.") or key in _NOT_COPIED:
            continue
        sub = field.types[1] if len(field.types) > 1 else None
        metadata.append(MetaValue(key, "raw", (_field_value(field), field.types[0], sub)))

    plans = [_plan(t, out_type) for t in reader.tensors]
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
        seconds=time.perf_counter() - start, metadata=summary,
    )


def _plan(t, out_type: str) -> TensorPlan:
    shape = tuple(int(n) for n in reversed(t.shape.tolist()))  # ggml ne → numpy order
    raw = t.data

    def passthrough() -> np.ndarray:
        return np.asarray(raw).reshape(-1).view(np.uint8)

    source = {_T.F32: "f32", _T.F16: "f16"}.get(t.tensor_type)
    target = GGML_TYPES[quantize.storage_type(t.name, shape, out_type)] if source else t.tensor_type
    if source is None or (source, target) not in _SHRINKS:
        return TensorPlan(t.name, shape, t.tensor_type, int(t.n_bytes), passthrough)

    def produce() -> np.ndarray:
        x = np.asarray(raw).reshape(shape).astype(np.float32)
        return quantize.encode_f16(x, t.name) if target == _T.F16 else quantize.encode_q8_0(x)

    kind = "f16" if target == _T.F16 else "q8_0"
    return TensorPlan(t.name, shape, target, quantize.encoded_nbytes(shape, kind), produce)
