"""One GGUF metadata key as the converter writes it: the value type that the config readers
(nemo_config, prompt_config, streaming_config, sortformer_config) produce and gguf_writer writes.
It has a module of its own so that the readers can share it without importing each other."""

from dataclasses import dataclass
from typing import Any

import gguf

from .errors import ConversionError


@dataclass(frozen=True)
class MetaValue:
    """One GGUF key: ``kind`` is u32, i32, f32, bool, str, i32[], str[], or raw (a value copied
    from another file, ``(value, GGUFValueType, sub_type)``)."""

    key: str
    kind: str
    value: Any


def field_value(field) -> Any:
    """A ``gguf.GGUFReader`` field's value as plain Python (str, int, float, bool or a list of them)."""
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


def copied_meta(key: str, field) -> MetaValue:
    """``field`` of another GGUF file, to be written under ``key`` with its own value type."""
    sub = field.types[1] if len(field.types) > 1 else None
    return MetaValue(key, "raw", (field_value(field), field.types[0], sub))
