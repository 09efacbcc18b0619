"""The ``parakeet-bundle`` GGUF layout (parakeet.cpp's, docs/bundles.md): key names, component
names and kinds, and the content hash. Shared by the bundle writer and its verifier."""

import hashlib
import re
import struct
from typing import Iterable

import numpy as np

ARCHITECTURE = "parakeet-bundle"
VERSION = 1
VERSION_KEY = "parakeet.bundle.version"
COMPONENTS_KEY = "parakeet.bundle.components"
#: The per-component keys, parakeet.bundle.<name>.<field>, all strings.
FIELDS = ("kind", "license", "license_url", "source", "attribution", "changes", "source_sha256", "content_sha256")
#: What the builder lets the user set per component (the rest it computes).
USER_FIELDS = ("license", "license_url", "source", "attribution", "changes")
#: The component kinds a bundle names (the library loads asr, vad, diar and ced).
KINDS = ("asr", "vad", "diar", "ced", "voice")
#: ggml's longest tensor name (GGML_MAX_NAME 64 with its NUL): prefixed names must fit.
MAX_TENSOR_NAME = 63

_NAME = re.compile(r"[a-z][a-z0-9_]{0,31}")
_RESERVED = ("general", "parakeet", "bundle")


def component_key(name: str, field: str) -> str:
    return f"parakeet.bundle.{name}.{field}"


def name_error(name: str) -> str:
    """Why ``name`` cannot name a component, or "" when it can."""
    if not _NAME.fullmatch(name):
        return f"bad component name {name!r} (names are [a-z][a-z0-9_]{{0,31}})"
    if name in _RESERVED:
        return f"component name {name!r} is reserved (general, parakeet and bundle are)"
    return ""


def content_sha256(tensors: Iterable) -> str:
    """sha256 over a component's tensors in file order, each as its unprefixed name, a NUL,
    u32 ggml type, u32 dimension count, u64 dimensions (ggml order) and data. ``tensors`` yields
    (name, ggml type, dims, data bytes)."""
    h = hashlib.sha256()
    for name, ggml_type, dims, data in tensors:
        h.update(name.encode("utf-8") + b"\0")
        h.update(struct.pack("<II", int(ggml_type), len(dims)))
        h.update(struct.pack(f"<{len(dims)}Q", *(int(d) for d in dims)))
        h.update(memoryview(np.ascontiguousarray(data).reshape(-1).view(np.uint8)))
    return h.hexdigest()


def file_sha256(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
