"""What the model cache holds (``parakeet-cli models``) and freeing it (``models --rm``)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Dict, List

from huggingface_hub import constants

from . import cache
from .aliases import ALIASES
from .download import repo_folder
from .errors import HubError


def cached_models() -> List[Dict[str, Any]]:
    """One record per cached model file: name, file, commit, revision, kind, type, gguf, bytes."""
    return cache.records(Path(constants.HF_HUB_CACHE))


def remove(text: str) -> List[str]:
    """Remove ``OWNER/REPO`` (or an alias) from the cache: the downloads and every conversion;
    ``OWNER/REPO:TYPE`` removes only the conversions to TYPE. Returns the removed paths."""
    base, _, out_type = text.partition(":")
    for aliases in ALIASES.values():
        base = aliases.get(base.lower(), base)
    folder = repo_folder(base)
    if not out_type:
        if not folder.is_dir():
            raise HubError(f"{text}: not in the cache ({constants.HF_HUB_CACHE}); `parakeet-cli models` lists it")
        shutil.rmtree(folder)
        return [str(folder)]
    removed = []
    for record in cached_models():
        if record["name"] == base and record["type"] == out_type.lower():
            for path in (Path(record["gguf"]), Path(record["record"])):
                path.unlink()
                removed.append(str(path))
            Path(record["gguf"] + ".lock").unlink(missing_ok=True)  # the conversion's lock file
    if not removed:
        raise HubError(f"{text}: no {out_type} conversion of {base} in the cache; `parakeet-cli models` lists them")
    return removed


__all__ = ["cached_models", "remove"]
