"""``transcribe``'s and ``diarize``'s progress bars: one per file on standard error, fed by the request's
progress callback, drawn only where someone watches (a terminal) and never mixed into a
machine-read output."""

from __future__ import annotations

import sys
from typing import Callable, Optional, TextIO

import click
from tqdm import tqdm

# A bar appears only once its request has run this long: short files never show one.
SHOW_AFTER_SECONDS = 1.0

# The commands' --progress/--no-progress (None: progress_wanted decides).
progress_option = click.option(
    "--progress/--no-progress", default=None,
    help="A progress bar per file on standard error (it appears once a file has taken over a "
         "second). Default: when standard error is a terminal. Never with --format json.")


def progress_wanted(choice: Optional[bool], fmt: str, stream: TextIO) -> bool:
    """Whether to draw bars: ``--progress`` / ``--no-progress`` decide when given (``choice``),
    else only when ``stream`` is a terminal. Never with ``--format json`` (its readers are
    programs)."""
    if fmt == "json":
        return False
    if choice is not None:
        return choice
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


class FileProgress:
    """The bar of one file: call it with the fraction done (a ``Context.transcribe`` progress
    callback); close it when the request ends."""

    def __init__(self, label: str, stream: Optional[TextIO] = None, position: int = 0) -> None:
        self._bar = tqdm(total=1000, desc=label, unit="‰", file=stream or sys.stderr, leave=False,
                         delay=SHOW_AFTER_SECONDS, position=position,
                         bar_format="{desc}: {percentage:3.0f}%|{bar}| {elapsed}<{remaining}")
        self._done = 0

    @property
    def done(self) -> int:
        """Thousandths of the request done so far, as drawn."""
        return self._done

    def __call__(self, fraction: float) -> None:
        target = int(round(fraction * 1000))
        if target > self._done:
            self._bar.update(target - self._done)
            self._done = target

    def close(self) -> None:
        self._bar.close()


def with_progress(run: Callable[..., object], label: str, position: int, stream: Optional[TextIO] = None
                  ) -> Callable[..., object]:
    """``run`` (``Context.transcribe``, ``Diarizer.document``) with a bar for ``label`` passed as
    its progress callback."""
    def call(*args: object, **kwargs: object) -> object:
        bar = FileProgress(label, stream, position)
        try:
            return run(*args, progress=bar, **kwargs)
        finally:
            bar.close()
    return call
