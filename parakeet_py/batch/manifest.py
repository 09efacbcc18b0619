"""A batch job's inputs: which recordings to transcribe, each with a unique ``id``.

Accepted inputs (any mix, in order):

* a JSONL manifest (``.jsonl``/``.json``, one object per line) or a Parquet manifest
  (``.parquet``, needs pyarrow) with a ``path`` column (or NeMo's ``audio_filepath``), an
  optional ``id`` and any other columns, which are passed through to the output;
* a plain list (any other file): one audio path per line, ``#`` comments and blank lines skipped;
* a directory (searched recursively for audio files) or a glob pattern.

Relative paths in a manifest or list are relative to that file's folder. A row without an
``id`` takes its path as its id. Ids must be unique: the output is keyed by them and resume
skips them.
"""

from __future__ import annotations

import glob
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional

from ..errors import ParakeetError

#: File endings a directory or glob is searched for (what libsndfile commonly reads).
AUDIO_EXTENSIONS = (".wav", ".flac", ".ogg", ".opus", ".mp3", ".aiff", ".aif", ".au", ".caf", ".w64")
PATH_COLUMNS = ("path", "audio_filepath")  # the second: NeMo manifests
MANIFEST_SUFFIXES = (".jsonl", ".json", ".parquet")


class ManifestError(ParakeetError):
    """The inputs cannot be used (unreadable, a row without a path, duplicate ids)."""


@dataclass(frozen=True)
class Entry:
    """One recording to transcribe: its id, its path and the manifest's other columns."""

    id: str
    path: str
    extra: Dict[str, Any] = field(default_factory=dict)


def _resolve(path: str, base: Optional[Path]) -> str:
    if base is None or os.path.isabs(path) or "://" in path:
        return path
    return str(base / path)


def entry_from_row(row: Dict[str, Any], base: Optional[Path], where: str) -> Entry:
    """A manifest row (dict) → an Entry; the path column is ``path`` or ``audio_filepath``."""
    column = next((c for c in PATH_COLUMNS if row.get(c) not in (None, "")), None)
    if column is None:
        raise ManifestError(f"{where}: no 'path' (or 'audio_filepath') value")
    path = _resolve(str(row[column]), base)
    extra = {k: v for k, v in row.items() if k not in ("id", column)}
    ident = row.get("id")
    return Entry(id=str(ident) if ident not in (None, "") else path, path=path, extra=extra)


def _read_jsonl(path: Path) -> List[Entry]:
    entries = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise ManifestError(f"{path}:{number}: not JSON: {e}") from e
            if not isinstance(row, dict):
                raise ManifestError(f"{path}:{number}: a JSON object per line is expected")
            entries.append(entry_from_row(row, path.parent, f"{path}:{number}"))
    return entries


def _read_parquet(path: Path) -> List[Entry]:
    try:
        import pyarrow.parquet as pq
    except ImportError as e:
        raise ManifestError(f"{path}: reading Parquet needs pyarrow (pip install 'parakeet[ray]' or pyarrow)") from e
    rows = pq.read_table(path).to_pylist()
    return [entry_from_row(row, path.parent, f"{path}: row {i}") for i, row in enumerate(rows)]


def _read_list(path: Path) -> List[Entry]:
    entries = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            resolved = _resolve(line, path.parent)
            entries.append(Entry(id=resolved, path=resolved))
    return entries


def _audio_files(paths: Iterable[str]) -> List[Entry]:
    found = sorted(p for p in paths if os.path.isfile(p) and p.lower().endswith(AUDIO_EXTENSIONS))
    return [Entry(id=p, path=p) for p in found]


def read_one(spec: str) -> List[Entry]:
    """The entries of one input (see the module docstring for what ``spec`` may be)."""
    path = Path(spec)
    try:
        if path.is_dir():
            return _audio_files(glob.glob(os.path.join(spec, "**", "*"), recursive=True))
        if path.is_file():
            suffix = path.suffix.lower()
            if suffix == ".parquet":
                return _read_parquet(path)
            if suffix in (".jsonl", ".json"):
                return _read_jsonl(path)
            if suffix in AUDIO_EXTENSIONS:
                return [Entry(id=spec, path=spec)]
            return _read_list(path)
    except (OSError, UnicodeDecodeError) as e:
        raise ManifestError(f"cannot read {spec}: {e}") from e
    if glob.has_magic(spec):
        return _audio_files(glob.glob(spec, recursive=True))
    raise ManifestError(f"{spec}: no such file or directory")


def read_inputs(specs: Iterable[str]) -> List[Entry]:
    """Every entry of ``specs``, in order; raises ManifestError on a duplicate id or no entries."""
    entries: List[Entry] = []
    for spec in specs:
        entries.extend(read_one(spec))
    seen = set()
    for e in entries:
        if e.id in seen:
            raise ManifestError(f"duplicate id {e.id!r}: ids must be unique (give the manifest an 'id' column)")
        seen.add(e.id)
    if not entries:
        raise ManifestError("no inputs: the manifests, lists, directories or globs held no audio files")
    return entries
