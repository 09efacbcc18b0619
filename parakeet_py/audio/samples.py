"""Sample conversions shared by every audio path: integers to float32 in [-1, 1], and the
mixdown of [frames, channels] blocks to mono."""

from __future__ import annotations

import numpy as np


def as_float(array: np.ndarray) -> np.ndarray:
    """A real array → float32 samples (integers scaled to [-1, 1])."""
    kind = array.dtype.kind
    if kind == "f":
        return array.astype(np.float32, copy=False)
    # In float64, in place: exact for every integer width up to 32 bits, one temporary.
    half = float(2 ** (8 * array.dtype.itemsize - 1))
    wide = array.astype(np.float64)
    if kind == "u":
        wide -= half
    wide /= half
    return wide.astype(np.float32)


def mono(block: np.ndarray) -> np.ndarray:
    """A float32 block, 1-D or [n, channels] averaged over channels."""
    if block.ndim == 1:
        return block
    return block[:, 0] if block.shape[1] == 1 else block.mean(axis=1, dtype=np.float32)


# Audio is decoded, converted, mixed down and resampled this many frames at a time, so a long
# input is never held twice over (as float64 and float32, as stereo and mono, or at two rates):
# only the source, the one output array and a block.
BLOCK_FRAMES = 1 << 18
