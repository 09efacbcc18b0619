"""Lists of recordings: a batch job's inputs and ``parakeet-cli bench``'s manifest (the one
parser of both), each recording with a unique ``id``.

Accepted inputs (any mix, in order):

* a JSONL manifest (``.jsonl``/``.json``, one object per line) or a Parquet manifest
  (``.parquet``, needs pyarrow) with a ``path`` column (or NeMo's ``audio_filepath``), an
  optional ``id`` and any other columns, which are passed through to the output;
* a plain list (any other file): one audio path per line; blank lines and lines whose first
  non-blank character is ``#`` are skipped; a TAB after the path starts an optional reference
  transcript (the ``reference`` column);
* a directory (searched recursively for audio files) or a glob pattern.

Relative paths in a manifest or list are relative to that file's folder, or, when nothing is
there but the path exists relative to the current directory, to that. A row without an ``id``
takes its path as its id. Ids must be unique in a batch job (:func:`read_inputs`): the output
is keyed by them and resume skips them.
"""

from __future__ import annotations

import glob
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional

from ..errors import InvalidArgument

#: File endings a directory or glob is searched for (what the decoders read: libsndfile's
#: formats, then FFmpeg's; the decoder itself is chosen from the content, not the ending).
AUDIO_EXTENSIONS = (".wav", ".flac", ".ogg", ".oga", ".opus", ".mp3", ".aiff", ".aif", ".au", ".caf", ".w64",
                    ".m4a", ".mp4", ".mov", ".webm", ".mka", ".mkv", ".mpeg", ".mpg", ".mpga", ".amr")
PATH_COLUMNS = ("path", "audio_filepath")  # the second: NeMo manifests
MANIFEST_SUFFIXES = (".jsonl", ".json", ".parquet")
# Where a row's reference transcript is: a plain list's TAB column, or NeMo's "text".
REFERENCE_COLUMNS = ("reference", "text")


class ManifestError(InvalidArgument, ValueError):
    """The inputs cannot be used (unreadable, a row without a path, no entries, duplicate ids)."""


@dataclass(frozen=True)
class Entry:
    """One recording to transcribe: its id, its path and the manifest's other columns; ``line``
    is its 1-based line in a list or JSONL manifest (None otherwise; not part of equality)."""

    id: str
    path: str
    extra: Dict[str, Any] = field(default_factory=dict)
    line: Optional[int] = field(default=None, compare=False)

    @property
    def reference(self) -> Optional[str]:
        """The reference transcript (a ``reference`` or NeMo ``text`` column), if the row has one."""
        for column in REFERENCE_COLUMNS:
            if self.extra.get(column) is not None:
                return str(self.extra[column])
        return None


def _resolve(path: str, base: Optional[Path]) -> str:
    if base is None or os.path.isabs(path) or "://" in path:
        return path
    resolved = str(base / path)
    # A path that only exists relative to the current directory (a list written elsewhere for
    # this folder) is taken from there.
    if not os.path.exists(resolved) and os.path.exists(path):
        return os.path.abspath(path)
    return resolved


def entry_from_row(row: Dict[str, Any], base: Optional[Path], where: str, line: Optional[int] = None) -> Entry:
    """A manifest row (dict) → an Entry; the path column is ``path`` or ``audio_filepath``."""
    column = next((c for c in PATH_COLUMNS if row.get(c) not in (None, "")), None)
    if column is None:
        raise ManifestError(f"{where}: no 'path' (or 'audio_filepath') value")
    path = _resolve(str(row[column]), base)
    extra = {k: v for k, v in row.items() if k not in ("id", column)}
    ident = row.get("id")
    return Entry(id=str(ident) if ident not in (None, "") else path, path=path, extra=extra, line=line)


def row_id(row: Dict[str, Any], base: Optional[Path]) -> Optional[str]:
    """The id :func:`entry_from_row` gives ``row`` (its path resolved against ``base`` when it
    has no id), or None for a row without a path, which is never done."""
    try:
        return entry_from_row(row, base, "").id
    except ManifestError:
        return None


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
            entries.append(entry_from_row(row, path.parent, f"{path}:{number}", number))
    return entries


def _read_parquet(path: Path) -> List[Entry]:
    try:
        import pyarrow.parquet as pq
    except ImportError as e:
        raise ManifestError(f"{path}: reading Parquet needs pyarrow (pip install 'parakeet[ray]' or pyarrow)") from e
    rows = pq.read_table(path).to_pylist()
    return [entry_from_row(row, path.parent, f"{path}: row {i}") for i, row in enumerate(rows)]


def parse_list(text: str, base: Optional[Path]) -> List[Entry]:
    """The entries of a plain list's ``text`` (see the module docstring for the format); relative
    paths are resolved against ``base``."""
    entries = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip("\r\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        path, tab, reference = line.partition("\t")
        path = path.strip()
        if not path:
            raise ManifestError(f"line {number}: no audio path before the TAB")
        resolved = _resolve(path, base)
        extra = {"reference": reference.strip()} if tab else {}
        entries.append(Entry(id=resolved, path=resolved, extra=extra, line=number))
    return entries


def _read_list(path: Path) -> List[Entry]:
    return parse_list(path.read_text(encoding="utf-8"), path.parent)


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
