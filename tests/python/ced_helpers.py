"""The CED sound-tagger fixtures (tests/data/ced, tools/fixtures/make_ced_fixtures.py)."""

import wave
from pathlib import Path

import numpy as np

CED = Path(__file__).resolve().parents[1] / "data" / "ced"
MODEL = CED / "ced-test.gguf"


def clip_path(name: str) -> Path:
    return CED / f"clip_{name}.wav"


def clip(name: str) -> np.ndarray:
    """A fixture clip's samples (16 kHz, 16-bit) as float32 in [-1, 1)."""
    with wave.open(str(clip_path(name))) as w:
        return np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float32) / 32768.0


def reference_scores(name: str) -> np.ndarray:
    """The PyTorch reference's class probabilities of a clip."""
    return np.fromfile(CED / f"clip_{name}.scores.f32", "<f4")
