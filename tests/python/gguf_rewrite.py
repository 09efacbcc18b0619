"""Copies a GGUF file with some metadata changed, for tests of how the library treats model
files it must refuse (a key set to a bad value, a bad general.alignment)."""

from pathlib import Path
from typing import Any, Dict, Iterable, Optional

import gguf

from parakeet_py.convert.meta_value import field_value


def rewrite_gguf(src: Path, dst: Path, changes: Dict[str, Any], alignment: Optional[int] = None,
                 drop: Iterable[str] = (), array_types: Optional[Dict[str, Any]] = None,
                 added: Optional[Dict[str, Any]] = None) -> Path:
    """Writes ``src`` to ``dst`` with the keys in ``changes`` given new values (same types), and
    the data section aligned to ``alignment`` (stored as general.alignment) when given; the keys
    in ``drop`` left out, the arrays in ``array_types`` stored with that element type
    (GGUFValueType), and ``added`` keys ((value, GGUFValueType)) appended."""
    reader = gguf.GGUFReader(src)
    arch = field_value(reader.get_field("general.architecture"))
    writer = gguf.GGUFWriter(dst, arch)
    if alignment is not None:
        writer.data_alignment = alignment
        writer.add_uint32("general.alignment", alignment)
    for key, field in reader.fields.items():
        if key.startswith("GGUF.") or key in ("general.architecture", "general.alignment") or key in drop:
            continue
        value = changes.get(key, field_value(field))
        sub = field.types[1] if len(field.types) > 1 else None
        sub = (array_types or {}).get(key, sub)
        writer.add_key_value(key, value, field.types[0], sub_type=sub)
    for key, (value, vtype) in (added or {}).items():
        writer.add_key_value(key, value, vtype)
    for t in reader.tensors:
        writer.add_tensor(t.name, t.data, raw_dtype=t.tensor_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return dst
