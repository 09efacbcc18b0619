"""The converted GGUF files, kept beside huggingface_hub's download of their source.

``models--OWNER--REPO/parakeet/<source>-c<converter>-<type>.gguf``: ``<source>`` is the
downloaded file's hash (the name huggingface_hub gives its blob: the sha256 of an LFS file),
``<converter>`` a hash of the converter's code, ``<type>`` the GGUF type. A new revision (new
bytes) or a new converter gives a new key, so it converts again; the same key converts nothing.
Removing the repo from huggingface_hub's cache (``hf cache delete``) removes its conversions.

Two processes converting the same key take turns on a lock file; the converters write a
temporary sibling and rename it into place, so a half-written file is never taken for a model.
Beside each model a ``.json`` record says which name it came from (``parakeet-cli models``).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import uuid
from pathlib import Path
from typing import Any, Callable, Dict, List

from filelock import FileLock

FOLDER = "parakeet"
# A blob name is the file's sha256 (LFS) or git sha1: its first 16 hex digits make the key.
_KEY_DIGITS = 16


@functools.lru_cache(maxsize=1)
def converter_version() -> str:
    """A hash of the converter's source files: any change to the converter converts again."""
    digest = hashlib.sha256()
    for path in sorted((Path(__file__).resolve().parents[1] / "convert").glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:8]


def source_key(source: Path) -> str:
    """The downloaded file's hash: its blob's name in huggingface_hub's cache, else its sha256."""
    real = source.resolve()
    if real.parent.name == "blobs":
        return real.name[:_KEY_DIGITS]
    digest = hashlib.sha256()
    with open(real, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:_KEY_DIGITS]


def converted_path(repo_folder: Path, source: Path, out_type: str) -> Path:
    return repo_folder / FOLDER / f"{source_key(source)}-c{converter_version()}-{out_type}.gguf"


def convert_once(target: Path, convert: Callable[[Path], Any]) -> None:
    """Make ``target`` with ``convert(target)`` unless it exists. The lock makes a second
    process wait for the first one's file instead of converting too."""
    if target.exists():
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target) + ".lock"):
        if not target.exists():  # else another process made it while this one waited
            convert(target)  # the converters write a temporary sibling and rename it: atomic


def remember(model: Path, repo_folder: Path, record: Dict[str, Any]) -> None:
    """Write the record of a cached model (``<model stem>.json`` in the repo's parakeet folder)."""
    folder = repo_folder / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (model.stem + ".json")
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.part")
    tmp.write_text(json.dumps({**record, "gguf": str(model)}, indent=1))
    os.replace(tmp, path)


def records(hub_cache: Path) -> List[Dict[str, Any]]:
    """Every cached model's record whose GGUF is still there, with its ``bytes`` and ``record``
    path."""
    found = []
    for path in sorted(hub_cache.glob(f"models--*/{FOLDER}/*.json")):
        try:
            record = json.loads(path.read_text())
            size = Path(record["gguf"]).stat().st_size
        except (OSError, ValueError, KeyError, TypeError):
            continue  # a record of a removed model, or not ours
        found.append({**record, "bytes": size, "record": str(path)})
    return found


__all__ = ["converter_version", "source_key", "converted_path", "convert_once", "remember", "records", "FOLDER"]
