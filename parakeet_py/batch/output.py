"""Writing a batch job's rows as they finish, so that a crash loses only the rows in flight.

* ``.jsonl``: each row is one ``write()`` of one whole line to a file opened for appending, and
  the file is fsync'ed every few seconds and at the end. A process killed at any moment leaves
  whole lines plus at most one torn last line, which ``--resume`` cuts off.
* ``.parquet``: a Parquet file cannot be appended to, so rows go to a JSONL journal beside it
  (``OUT.journal.jsonl``, written as above); at the end the journal (and, on resume, the rows
  of the earlier Parquet file) are streamed into a temporary file of this run's own name,
  which is fsync'ed, renamed over ``OUT`` (atomic), the folder fsync'ed, and only then the
  journal removed. A crash leaves the old ``OUT`` untouched and the journal.

Resume reads the ids already written (the file, the journal) and the job skips them. A
corrupt line (a bad sector, a stray write) is dropped and counted, and its file done again;
with ``retry_errors`` the error rows are dropped too, so their files are done again.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from typing import Any, Dict, Iterator, List, Optional, Set

from ..errors import InvalidArgument

SYNC_SECONDS = 5.0
PARQUET_ROWS_PER_GROUP = 10_000


class OutputError(InvalidArgument):
    """The output cannot be written (it exists without --resume/--overwrite, or is unreadable)."""


def output_format(path: str) -> str:
    """"jsonl" or "parquet", from the output's extension."""
    lower = path.lower()
    if lower.endswith((".jsonl", ".json")):
        return "jsonl"
    if lower.endswith(".parquet"):
        return "parquet"
    raise OutputError(f"{path}: the output must end in .jsonl or .parquet")


def _cut_torn_line(path: str) -> None:
    """Truncate ``path`` after its last newline (a line torn by a crash is dropped)."""
    with open(path, "rb+") as f:
        size = f.seek(0, os.SEEK_END)
        end = size
        while end > 0:
            step = min(1 << 16, end)
            f.seek(end - step)
            chunk = f.read(step)
            newline = chunk.rfind(b"\n")
            if newline >= 0:
                end = end - step + newline + 1
                break
            end -= step
        if end != size:
            f.truncate(end)


def jsonl_rows(path: str) -> Iterator[Dict[str, Any]]:
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.endswith("\n") and line.strip():
                yield json.loads(line)


def _parse_row(line: bytes) -> Optional[Dict[str, Any]]:
    """A line of an output as a row, or None when it is not one (corrupt)."""
    try:
        row = json.loads(line)
    except (UnicodeDecodeError, ValueError):
        return None
    return row if isinstance(row, dict) and isinstance(row.get("id"), str) else None


def unique_tmp(path: str) -> str:
    """A temporary name beside ``path`` that no other run (or a crashed one) can hold."""
    return f"{path}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp"


def durable_replace(tmp: str, path: str) -> None:
    """Put the finished file ``tmp`` in place as ``path`` so that a power cut leaves either the
    old file or the whole new one: its data on disk first, then the rename, then the folder."""
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    folder = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


def _resume_rows(path: str, retry_errors: bool) -> "tuple[Set[str], int]":
    """Reads a JSONL output to resume it: (ids kept, corrupt lines dropped). When it drops
    anything (a corrupt line; an error row, with ``retry_errors``) it rewrites the file without."""
    kept: List[bytes] = []
    done: Set[str] = set()
    dropped_errors = False
    corrupt = 0
    with open(path, "rb") as f:
        for line in f:
            if not line.strip():
                continue
            row = _parse_row(line)
            if row is None:
                corrupt += 1
            elif retry_errors and row.get("error") is not None:
                dropped_errors = True
            else:
                done.add(row["id"])
                kept.append(line)
    if corrupt or dropped_errors:
        tmp = unique_tmp(path)
        with open(tmp, "wb") as out:
            out.writelines(kept)
        durable_replace(tmp, path)
    return done, corrupt


def _parquet_rows_by_error(path: str) -> "tuple[Set[str], Set[str]]":
    """(every id, the ids of error rows) of a finished Parquet output."""
    import pyarrow.parquet as pq

    table = pq.read_table(path, columns=["id", "error"])
    ids, errors = table.column("id").to_pylist(), table.column("error").to_pylist()
    return set(ids), {i for i, e in zip(ids, errors) if e is not None}


class JsonlWriter:
    """Appends rows to a JSONL file, one atomic line each (thread-safe)."""

    def __init__(self, path: str, *, resume: bool, overwrite: bool, retry_errors: bool = False) -> None:
        self.path = path
        self.done: Set[str] = set()
        self.dropped_lines = 0
        if os.path.exists(path):
            if resume:
                _cut_torn_line(path)
                self.done, self.dropped_lines = _resume_rows(path, retry_errors)
            elif not overwrite:
                raise OutputError(f"{path} exists: pass --resume to continue the job, or --overwrite")
        parent = os.path.dirname(os.path.abspath(path))
        os.makedirs(parent, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | (os.O_TRUNC if not resume else 0)
        self._fd = os.open(path, flags, 0o644)
        self._lock = threading.Lock()
        self._synced = time.monotonic()

    def write(self, row: Dict[str, Any]) -> None:
        data = (json.dumps(row, ensure_ascii=False, default=str) + "\n").encode("utf-8")
        with self._lock:
            view = memoryview(data)
            while view:  # one write() for a regular file; the loop only guards against a short one
                view = view[os.write(self._fd, view):]
            if time.monotonic() - self._synced > SYNC_SECONDS:
                os.fsync(self._fd)
                self._synced = time.monotonic()

    def close(self) -> None:
        with self._lock:
            if self._fd >= 0:
                os.fsync(self._fd)
                os.close(self._fd)
                self._fd = -1


class ParquetWriter:
    """Rows to a journal as they come; one Parquet file, renamed into place, at the end."""

    def __init__(self, path: str, schema: Any, *, resume: bool, overwrite: bool, retry_errors: bool = False) -> None:
        try:
            import pyarrow  # noqa: F401
        except ImportError as e:
            raise OutputError(f"{path}: Parquet output needs pyarrow (pip install 'parakeet[ray]' or pyarrow)") from e
        self.path, self.schema = path, schema
        self.journal_path = path + ".journal.jsonl"
        if not resume and os.path.exists(self.journal_path) and not overwrite:
            raise OutputError(f"{self.journal_path} (an unfinished run) exists: pass --resume or --overwrite")
        if not resume and os.path.exists(path) and not overwrite:
            raise OutputError(f"{path} exists: pass --resume to continue the job, or --overwrite")
        self._previous = path if resume and os.path.exists(path) else None
        self._journal = JsonlWriter(self.journal_path, resume=resume, overwrite=True, retry_errors=retry_errors)
        self.dropped_lines = self._journal.dropped_lines
        previous, previous_errors = _parquet_rows_by_error(path) if self._previous else (set(), set())
        self.done = self._journal.done | (previous - (previous_errors if retry_errors else set()))
        self._written: Set[str] = set()  # ids written to the journal by this run
        self._lock = threading.Lock()

    def write(self, row: Dict[str, Any]) -> None:
        self._journal.write(row)
        with self._lock:
            self._written.add(row["id"])

    def close(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        import pyarrow.compute as pc

        self._journal.close()
        tmp = unique_tmp(self.path)
        with pq.ParquetWriter(tmp, self.schema) as out:
            if self._previous:
                # A row this run wrote again (a retried error) replaces the earlier table's.
                redone = pa.array(sorted(self._journal.done | self._written), pa.string())
                for batch in pq.ParquetFile(self._previous).iter_batches(PARQUET_ROWS_PER_GROUP):
                    table = pa.Table.from_batches([batch]).cast(self.schema)
                    out.write_table(table.filter(pc.invert(pc.is_in(table.column("id"), value_set=redone))))
            chunk: List[Dict[str, Any]] = []
            for row in jsonl_rows(self.journal_path):
                chunk.append(row)
                if len(chunk) == PARQUET_ROWS_PER_GROUP:
                    out.write_table(pa.Table.from_pylist(chunk, schema=self.schema))
                    chunk = []
            if chunk:
                out.write_table(pa.Table.from_pylist(chunk, schema=self.schema))
        durable_replace(tmp, self.path)
        os.remove(self.journal_path)


def open_output(path: str, *, schema: Optional[Any], resume: bool, overwrite: bool, retry_errors: bool = False) -> Any:
    """A JsonlWriter or ParquetWriter for ``path`` (its ``done`` holds the ids already written,
    ``dropped_lines`` the corrupt lines resume dropped)."""
    if output_format(path) == "jsonl":
        return JsonlWriter(path, resume=resume, overwrite=overwrite, retry_errors=retry_errors)
    return ParquetWriter(path, schema, resume=resume, overwrite=overwrite, retry_errors=retry_errors)


def read_rows(path: str) -> List[Dict[str, Any]]:
    """Every row of a finished output: a file, or a directory of part files (a Ray job's)."""
    files = [path]
    if os.path.isdir(path):
        files = sorted(os.path.join(path, f) for f in os.listdir(path)
                       if f.endswith((".parquet", ".json", ".jsonl")))
    rows: List[Dict[str, Any]] = []
    for f in files:
        if f.endswith(".parquet"):
            import pyarrow.parquet as pq

            rows.extend(pq.read_table(f).to_pylist())
        else:
            rows.extend(jsonl_rows(f))
    return rows
