"""Bundles of the committed fixture models for the bundle tests (built per test session, never
committed): the licence options every component needs, and an independent content hash."""

import hashlib
import struct
from pathlib import Path

import gguf
import numpy as np

from data_helpers import MODEL, NEMO_DIR

ASR = MODEL  # the hybrid TDT + CTC fixture
DIAR = NEMO_DIR / "sortformer_offline" / "model.gguf"
FIELDS = ("license", "license_url", "source", "attribution", "changes")


def licence_args(*names):
    """--license NAME=..., --license-url NAME=..., ... for every component in ``names``."""
    args = []
    for name in names:
        for field in FIELDS:
            args += [f"--{field.replace('_', '-')}", f"{name}={field} of {name}"]
    return args


def licence_info(name):
    return {field: f"{field} of {name}" for field in FIELDS}


def content_hash(path: Path) -> str:
    """The format's content_sha256 of a plain model file, written out here from docs/bundles.md."""
    h = hashlib.sha256()
    for t in gguf.GGUFReader(path).tensors:
        dims = [int(d) for d in t.shape]
        h.update(t.name.encode() + b"\0" + struct.pack("<II", int(t.tensor_type), len(dims)))
        h.update(b"".join(struct.pack("<Q", d) for d in dims))
        h.update(np.asarray(t.data).tobytes())
    return h.hexdigest()
