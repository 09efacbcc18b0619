"""Model names: ``OWNER/REPO[/PATH][@REVISION][:TYPE]`` and the short aliases of known models.

    parse_name("nvidia/parakeet-tdt-0.6b-v3:f32", "asr")
    → HubName(repo_id="nvidia/parakeet-tdt-0.6b-v3", path=None, revision=None, out_type="f32")

The parser only reads the text; whether the repo exists is the Hub's to say. A string that
looks like a file path (``./x``, ``/x``, ``~/x``, ``dir/model.gguf``) is never a name, so a
mistyped path is reported as a missing file, not looked up on the Hub.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from ..errors import InvalidArgument
from .aliases import ALIASES, KINDS, PACKAGE_VAD_NAMES

SYNTAX = "OWNER/REPO[/PATH][@REVISION][:TYPE]"

# The Hub's repo id rules: letters, digits, '-', '_', '.'; no leading or trailing '-' or '.'.
_PART = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9_])?"
_REPO_ID = re.compile(rf"^{_PART}/{_PART}$")
# File names that mark a path, not a repo name, when they are the second component.
_MODEL_SUFFIXES = (".gguf", ".nemo", ".onnx")
_TYPE = re.compile(r"^[A-Za-z0-9_]+$")


@dataclass(frozen=True)
class HubName:
    """One parsed name: a repo, the file in it (None: the repo's single model file), the
    revision (None: the default branch) and the GGUF type a source file is converted to
    (None: the kind's default)."""

    repo_id: str
    path: Optional[str] = None
    revision: Optional[str] = None
    out_type: Optional[str] = None

    def __str__(self) -> str:
        return (self.repo_id + (f"/{self.path}" if self.path else "") + (f"@{self.revision}" if self.revision else "")
                + (f":{self.out_type}" if self.out_type else ""))


def looks_like_path(text: str) -> bool:
    """True for text that names a file rather than a Hub repo."""
    if text.startswith((".", "/", "~", "\\")) or "\\" in text or re.match(r"^[A-Za-z]:", text):
        return True
    parts = text.split("@", 1)[0].split(":", 1)[0].split("/")
    return len(parts) == 1 or (len(parts) == 2 and parts[1].lower().endswith(_MODEL_SUFFIXES))


def is_model_name(text: str, kind: str) -> bool:
    """True for a name (or alias) of ``kind``, malformed ones included (their error comes at load)."""
    if kind == "vad" and text.partition(":")[0].lower() in PACKAGE_VAD_NAMES:
        return True
    try:
        return parse_name(text, kind) is not None
    except InvalidArgument:
        return True


def parse_name(text: str, kind: str) -> Optional[HubName]:
    """The :class:`HubName` of ``text`` (an alias of ``kind`` or the full syntax), None when
    ``text`` is not a name (a path); raises InvalidArgument for a name with an empty or
    malformed @REVISION or :TYPE."""
    if kind not in KINDS:
        raise InvalidArgument(f"unknown model kind {kind!r} (known: {', '.join(KINDS)})")
    base, colon, out_type = text.partition(":")
    base = ALIASES[kind].get(base.lower(), base)
    rest, at, revision = base.partition("@")
    parts = rest.split("/", 2)
    if len(parts) < 2 or not _REPO_ID.match("/".join(parts[:2])) or looks_like_path(base):
        return None
    if (at and not revision) or (colon and not _TYPE.match(out_type)):
        raise InvalidArgument(f"{text!r}: a model name is {SYNTAX} (an empty or malformed @REVISION or :TYPE)")
    path = parts[2] if len(parts) == 3 and parts[2] else None
    return HubName("/".join(parts[:2]), path, revision or None, out_type.lower() or None)


__all__ = ["HubName", "parse_name", "is_model_name", "looks_like_path", "SYNTAX"]
