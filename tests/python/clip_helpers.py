"""Clips cut from the fixture speech at seeded places and lengths, for the tests of the
batched passes (many short clips of different lengths that say something)."""

from functools import lru_cache
from typing import List

import numpy as np

from data_helpers import CONVERSATION, SPEECH
from parakeet_py import load_audio

RATE = 16000


@lru_cache(maxsize=1)
def fixture_speech() -> np.ndarray:
    """The fixture speech and conversation, one after the other (16 kHz)."""
    return np.concatenate([load_audio(SPEECH), load_audio(CONVERSATION)])


def cut_speech(rng: np.random.Generator, count: int, lo: float, hi: float) -> List[np.ndarray]:
    """``count`` copies of stretches of :func:`fixture_speech`, each lo..hi seconds long."""
    speech = fixture_speech()
    clips = []
    for _ in range(count):
        n = int(rng.uniform(lo, hi) * RATE)
        at = int(rng.integers(0, speech.size - n))
        clips.append(speech[at:at + n].copy())
    return clips
