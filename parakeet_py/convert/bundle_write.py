"""Writes a ``parakeet-bundle`` GGUF: several model files in one, each stored under its
component's name with its licence keys and hashes (bundle_schema, docs/bundles.md)."""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Sequence

import gguf
import numpy as np

from . import bundle_schema as bs
from .errors import ConversionError
from .gguf_writer import TensorPlan, write_gguf
from .meta_value import MetaValue, copied_meta, field_value

# The kind a source file holds, from its general.architecture (parakeet: asr, or diar when
# parakeet.arch is "diarization").
_KIND_OF_ARCHITECTURE = {"silero_vad": "vad", "ced": "ced", "voicedetect": "voice"}


@dataclass
class ComponentSource:
    """One model file to bundle as component ``name``; ``kind`` None: told from the file.
    ``info``: the user's per-component keys (bundle_schema.USER_FIELDS)."""

    name: str
    path: Path
    kind: "str | None" = None
    info: Dict[str, str] = field(default_factory=dict)


def _open(src: ComponentSource) -> "gguf.GGUFReader":
    try:
        return gguf.GGUFReader(src.path)
    except (OSError, ValueError) as e:
        raise ConversionError(f"{src.path} is not a readable GGUF file: {e}") from e


def _kind(src: ComponentSource, reader) -> str:
    """The component's kind: the file's own (from general.architecture), which a kind the user
    gave must match; the user's for an architecture the writer does not know."""
    arch_field = reader.get_field("general.architecture")
    arch = field_value(arch_field) if arch_field is not None else None
    if arch == bs.ARCHITECTURE:
        raise ConversionError(f"{src.path} is itself a bundle; bundle its model files instead")
    if arch == "parakeet":
        sub = reader.get_field("parakeet.arch")
        detected = "diar" if sub is not None and field_value(sub) == "diarization" else "asr"
    else:
        detected = _KIND_OF_ARCHITECTURE.get(arch)
    if src.kind is not None and detected is not None and src.kind != detected:
        raise ConversionError(f"{src.path} holds a {detected} model (general.architecture {arch!r}), not {src.kind}")
    if src.kind is None and detected is None:
        raise ConversionError(f"{src.path}: cannot tell its kind from general.architecture {arch!r}; "
                              f"give it as {src.name}=PATH:KIND ({', '.join(bs.KINDS)})")
    return src.kind or detected


def _check(sources: Sequence[ComponentSource]) -> None:
    if not sources:
        raise ConversionError("a bundle needs at least one component")
    seen = set()
    for s in sources:
        if (why := bs.name_error(s.name)):
            raise ConversionError(why)
        if s.name in seen:
            raise ConversionError(f"component {s.name!r} is given twice")
        seen.add(s.name)
        if s.kind is not None and s.kind not in bs.KINDS:
            raise ConversionError(f"component {s.name!r}: unknown kind {s.kind!r} (kinds: {', '.join(bs.KINDS)})")
        unknown = set(s.info) - set(bs.USER_FIELDS)
        if unknown:
            raise ConversionError(f"component {s.name!r}: unknown keys {sorted(unknown)}")
        missing = [f for f in bs.USER_FIELDS if not s.info.get(f)]
        if missing:  # the format requires them: a bundle must carry each model's licence terms
            raise ConversionError(f"component {s.name!r} needs a non-empty {', '.join(missing)}")


def _raw_plan(name: str, t) -> TensorPlan:
    shape = tuple(int(n) for n in reversed(t.shape.tolist()))  # ggml ne → numpy order
    raw = t.data
    return TensorPlan(name, shape, t.tensor_type, int(t.n_bytes), lambda: np.asarray(raw).reshape(-1).view(np.uint8))


def _component(src: ComponentSource, metadata: List[MetaValue], plans: List[TensorPlan], long_names: bool) -> None:
    """Appends the component's prefixed keys and tensors and its bundle keys."""
    reader = _open(src)
    kind = _kind(src, reader)
    prefix = src.name + "."
    for key, f in reader.fields.items():
        if not key.startswith("GGUF.") and key != "general.alignment":  # the bundle's alignment rules
            metadata.append(copied_meta(prefix + key, f))
    for t in reader.tensors:
        if not long_names and len((prefix + t.name).encode("utf-8")) > bs.MAX_TENSOR_NAME:
            raise ConversionError(f"tensor name {prefix + t.name!r} is longer than {bs.MAX_TENSOR_NAME} bytes "
                                  f"(ggml's limit); use a shorter component name than {src.name!r}, or allow "
                                  "long names for a bundle only this library reads")
        plans.append(_raw_plan(prefix + t.name, t))
    content = bs.content_sha256((t.name, t.tensor_type, t.shape.tolist(), t.data) for t in reader.tensors)
    values = dict(src.info, kind=kind, source_sha256=bs.file_sha256(src.path), content_sha256=content)
    metadata.extend(MetaValue(bs.component_key(src.name, f), "str", values.get(f, "")) for f in bs.FIELDS)


def write_bundle(out_path, sources: Sequence[ComponentSource], long_names: bool = False) -> int:
    """Writes the bundle of ``sources`` (in order) to ``out_path``; returns its size in bytes.

    ``long_names`` allows prefixed tensor names over 63 bytes: this library reads them, but
    parakeet.cpp (ggml) does not. Our Sortformer files have 62-byte names, so no prefix fits."""
    _check(sources)
    out = Path(out_path).resolve()
    if any(Path(s.path).resolve() == out for s in sources):
        raise ConversionError("the bundle must be a different file from its components")
    names = [s.name for s in sources]
    metadata = [
        MetaValue("general.name", "str", "parakeet bundle: " + ", ".join(names)),
        MetaValue("general.license", "str", "other"),
        MetaValue("general.license.name", "str", "per-component"),
        MetaValue(bs.VERSION_KEY, "u32", bs.VERSION),
        MetaValue(bs.COMPONENTS_KEY, "str[]", names),
    ]
    plans: List[TensorPlan] = []
    for s in sources:
        _component(s, metadata, plans, long_names)
    return write_gguf(out_path, metadata, plans, architecture=bs.ARCHITECTURE)
