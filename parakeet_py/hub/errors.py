"""The one error a model name can fail with, and the one-line messages for each cause.

Each message names the model, says what was tried and how to fix it, so the CLI prints it as
it is (exit status 1, no traceback).
"""

from __future__ import annotations

import errno
import shutil
from pathlib import Path
from typing import Optional

from ..errors import ERROR_INVALID_ARGUMENT, ParakeetError


class HubError(ParakeetError):
    """A model name could not be turned into a model file: unknown repo or revision, no or
    several model files, a gated repo without a token, an unreachable Hub with nothing cached,
    or a full disk."""

    code = ERROR_INVALID_ARGUMENT


def disk_full(exc: BaseException, where: Path, needed: int) -> bool:
    """Whether ``exc`` (or one of its causes) is a write that failed for want of space: an
    ENOSPC/EDQUOT error, or any OSError while ``where`` has less than ``needed`` bytes free
    (numpy's short writes raise an OSError without an errno)."""
    seen: Optional[BaseException] = exc
    while seen is not None:
        if isinstance(seen, OSError):
            if seen.errno in (errno.ENOSPC, errno.EDQUOT):
                return True
            try:
                return shutil.disk_usage(where).free < needed
            except OSError:
                return False
        seen = seen.__cause__ or seen.__context__
    return False


def disk_full_error(name: str, step: str, where: str) -> HubError:
    return HubError(f"{name}: no space left on the disk of {where} while {step}; free some space "
                    "(`parakeet-cli models --rm NAME`) or set HF_HOME to a larger disk")


__all__ = ["HubError", "disk_full", "disk_full_error"]
