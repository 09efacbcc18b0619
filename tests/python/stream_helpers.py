"""What the streaming tests share: a time limit per test, the fixture models, feeding a
stream in given cuts and joining its updates."""

from __future__ import annotations

import contextlib
import signal
from typing import Iterator, List, Sequence, Tuple

import numpy as np
import pytest

from data_helpers import LONG, MODELS, SPEECH  # noqa: F401 (the streaming tests take them from here)
from parakeet_py import InvalidArgument

# Small windows so that the fixture clips span many chunks (0.4 s chunks, 1.2 s left, 0.4 s right).
SMALL = {"chunk": 0.4, "left": 1.2, "right": 0.4}
# The same window as the server's --realtime-window / --sse-window value ("left,chunk,right").
SMALL_WINDOW = f"{SMALL['left']},{SMALL['chunk']},{SMALL['right']}"


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raises TimeoutError in the main thread once ``seconds`` have passed (checked between C
    calls: a running call finishes first)."""
    def expired(signum, frame):  # type: ignore[no-untyped-def]
        raise TimeoutError(f"the test ran over its {seconds:g} s limit")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def per_test_limit(seconds: float):  # type: ignore[no-untyped-def]
    """An autouse fixture bounding every test of the module that assigns it
    (``_bounded = per_test_limit(120)``) with time_limit."""
    @pytest.fixture(autouse=True)
    def _bounded():  # type: ignore[no-untyped-def]
        with time_limit(seconds):
            yield
    return _bounded


def cuts(n: int, sizes: Sequence[int]) -> Iterator[Tuple[int, int]]:
    """[begin, end) ranges covering n samples, cut by ``sizes`` in turn."""
    begin, k = 0, 0
    while begin < n:
        end = min(n, begin + sizes[k % len(sizes)])
        yield begin, end
        begin, k = end, k + 1


def run_stream(stream, audio: np.ndarray, sizes: Sequence[int]) -> Tuple[str, List, List, List]:
    """Feeds ``audio`` in ``sizes`` cuts, finalizes, closes; returns (text, words, tokens, updates)."""
    updates = []
    with stream:
        for begin, end in cuts(len(audio), sizes):
            updates.append(stream.feed(audio[begin:end]))
        updates.append(stream.finalize())
    text = "".join(u.text for u in updates)
    words = [w for u in updates for w in u.words]
    tokens = [t for u in updates for t in u.tokens]
    return text, words, tokens, updates


def check_finished_then_closed(stream, finished_error: type, closed_match: str) -> None:
    """A stream refuses audio after finish() (``finished_error``, "finished") and after close()
    (InvalidArgument matching ``closed_match``)."""
    stream.finish()
    with pytest.raises(finished_error, match="finished"):
        stream.feed(np.zeros(160, np.float32))
    stream.close()
    with pytest.raises(InvalidArgument, match=closed_match):
        stream.feed(np.zeros(160, np.float32))
