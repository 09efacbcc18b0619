"""Find and download a name's model file with ``huggingface_hub``, so that ``HF_ENDPOINT``,
``HF_HOME``, ``HF_TOKEN`` and ``HF_HUB_OFFLINE`` mean what they mean for every Hub client,
downloads resume and show huggingface_hub's progress bar, and the files land in its cache.

Which file: the name's PATH, else the repo's single model file (``.nemo`` or ``.gguf``; ``.onnx``
or ``.gguf`` for a VAD; aliases.SOURCE_SUFFIXES), listed by the Hub's model API; a checkpoint
comes with the files its converter reads beside it (aliases.COMPANIONS: SpeechBrain's
``hyperparams.yaml``, CED's ``config.json``), from the same commit. Offline, or when the Hub cannot be
reached, the listing is the cached snapshot of the revision (the cache layout huggingface_hub
documents: ``refs/<revision>`` holds the commit, ``snapshots/<commit>/`` the files).
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional, Tuple

import huggingface_hub
from huggingface_hub import constants
from huggingface_hub.errors import (EntryNotFoundError, GatedRepoError, HfHubHTTPError, LocalEntryNotFoundError,
                                    OfflineModeIsEnabled, RepositoryNotFoundError, RevisionNotFoundError)

from .aliases import COMPANIONS, SOURCE_SUFFIXES
from .errors import HubError, disk_full, disk_full_error
from .names import HubName

# How many of a repo's files an error message lists.
_LISTED = 6


def repo_folder(repo_id: str) -> Path:
    """The repo's folder in huggingface_hub's cache (``$HF_HUB_CACHE/models--OWNER--REPO``)."""
    return Path(constants.HF_HUB_CACHE) / ("models--" + repo_id.replace("/", "--"))


def fetch(name: HubName, kind: str, shown: str) -> Path:
    """The local path of ``name``'s model file: downloaded (resuming a partial download) or,
    offline and when the Hub cannot be reached, taken from the cache. Raises HubError."""
    filename = name.path or _single_model_file(name, kind, shown)
    source = _download(name, filename, name.revision, shown)
    commit = place_in_snapshot(source)[0]
    folder = filename.rpartition("/")[0]
    for companion in COMPANIONS.get(filename.rpartition("/")[2].lower(), ()):
        _download(name, f"{folder}/{companion}" if folder else companion, commit, shown)  # lands beside it
    return source


def place_in_snapshot(source: Path) -> Tuple[str, str]:
    """(commit, the file's path in its repo) of a downloaded file, ``.../snapshots/<commit>/<path>``."""
    parts = source.parts
    at = len(parts) - 1 - parts[::-1].index("snapshots")
    return parts[at + 1], "/".join(parts[at + 2:])


def _download(name: HubName, filename: str, revision: Optional[str], shown: str) -> Path:
    try:
        return Path(huggingface_hub.hf_hub_download(name.repo_id, filename, revision=revision))
    except Exception as e:  # every failure becomes one line; the Hub's own message is in __cause__
        raise download_error(e, name, shown, filename) from e


def download_error(e: Exception, name: HubName, shown: str, filename: Optional[str] = None) -> HubError:
    """The one-line HubError for a failed huggingface_hub call about ``name``."""
    endpoint = constants.ENDPOINT
    revision = name.revision or "main"
    if isinstance(e, GatedRepoError):  # before RepositoryNotFoundError: it is one
        token = "the token given has no access to it" if huggingface_hub.get_token() else "no token is set"
        return HubError(f"{shown}: {name.repo_id} is a gated repo and {token}; accept its terms at "
                        f"{endpoint}/{name.repo_id}, then set HF_TOKEN (or run `hf auth login`)")
    if isinstance(e, RepositoryNotFoundError):
        return HubError(f"{shown}: no model repo {name.repo_id} on {endpoint}; check the name (a private repo "
                        "needs HF_TOKEN)")
    if isinstance(e, RevisionNotFoundError):
        return HubError(f"{shown}: {name.repo_id} has no revision {revision!r}; name a branch, tag or commit "
                        f"that {endpoint}/{name.repo_id} has")
    if isinstance(e, (LocalEntryNotFoundError, OfflineModeIsEnabled)):
        return not_cached_error(shown)
    if isinstance(e, EntryNotFoundError):
        return HubError(f"{shown}: {name.repo_id}@{revision} has no file {filename}; see the repo's files at "
                        f"{endpoint}/{name.repo_id}")
    if disk_full(e, Path(constants.HF_HUB_CACHE), 1):
        return disk_full_error(shown, "downloading", constants.HF_HUB_CACHE)
    if isinstance(e, HfHubHTTPError):
        return HubError(f"{shown}: the Hub at {endpoint} answered {e.response.status_code} for {name.repo_id}; "
                        "try again later")
    return HubError(f"{shown}: the download from {endpoint} failed ({type(e).__name__}: {e}); run the same "
                    "command again to resume it")


def not_cached_error(shown: str) -> HubError:
    if constants.HF_HUB_OFFLINE:
        return HubError(f"{shown}: not in the cache ({constants.HF_HUB_CACHE}) and HF_HUB_OFFLINE is set; "
                        "unset it once to download the model")
    return HubError(f"{shown}: cannot reach the Hub at {constants.ENDPOINT} and the model is not in the cache "
                    f"({constants.HF_HUB_CACHE}); check the network (or HF_ENDPOINT) and run again")


def _single_model_file(name: HubName, kind: str, shown: str) -> str:
    suffixes = SOURCE_SUFFIXES[kind]
    files = _repo_files(name, shown)
    models = sorted(f for f in files if f.lower().endswith(suffixes))
    wanted = " or ".join(suffixes)
    if not models:
        listed = ", ".join(sorted(files)[:_LISTED]) or "none"
        raise HubError(f"{shown}: {name.repo_id} has no {wanted} file (its files: {listed}); "
                       "name a repo that holds a model")
    if len(models) > 1:
        more = f" and {len(models) - _LISTED} more" if len(models) > _LISTED else ""
        raise HubError(f"{shown}: {name.repo_id} has {len(models)} model files "
                       f"({', '.join(models[:_LISTED])}{more}); name one, e.g. {name.repo_id}/{models[0]}")
    return models[0]


def _repo_files(name: HubName, shown: str) -> List[str]:
    """The revision's files: from the Hub, else (offline, unreachable) from the cache."""
    if not constants.HF_HUB_OFFLINE:
        try:
            info = huggingface_hub.HfApi().model_info(name.repo_id, revision=name.revision)
            return [s.rfilename for s in info.siblings or []]
        except (RepositoryNotFoundError, RevisionNotFoundError) as e:
            raise download_error(e, name, shown) from e
        except Exception:  # unreachable or failing Hub: what the cache holds decides
            pass
    cached = cached_files(name)
    if cached is None:
        raise not_cached_error(shown)
    return cached


def cached_files(name: HubName) -> Optional[List[str]]:
    """The cached files of the name's revision (None: that revision is not cached)."""
    folder = repo_folder(name.repo_id)
    revision = name.revision or "main"
    ref = folder / "refs" / revision
    commit = ref.read_text().strip() if ref.is_file() else revision
    snapshot = folder / "snapshots" / commit
    if not snapshot.is_dir():
        return None
    return [p.relative_to(snapshot).as_posix() for p in snapshot.rglob("*") if p.is_file()]


__all__ = ["fetch", "download_error", "repo_folder", "cached_files", "place_in_snapshot"]
