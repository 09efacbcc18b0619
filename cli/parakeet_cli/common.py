"""What the ``parakeet-cli`` subcommands share: option types, thread settings, error reporting."""

from __future__ import annotations

import click

from parakeet_py import _native
from parakeet_py.context import DECODERS

DECODER_CHOICE = click.Choice(list(DECODERS), case_sensitive=False)

MODEL_PATH = click.Path(exists=True, dir_okay=False, readable=True)


def threads_per_backend(concurrency: int, threads: "int | None") -> int:
    """Apply the CLI's thread rules and return the compute threads each request gets.

    Concurrency 1: ``threads`` (or the default budget) becomes the process-wide backend's
    thread count. Concurrency K > 1: ``threads`` is per backend; without it the default budget
    (physical cores, or $PARAKEET_THREADS) is divided by K, at least 1 each, as the library does.
    """
    if concurrency <= 1:
        return _native.set_threads(threads or 0)
    if threads:
        return threads
    budget = _native.set_threads(0)  # returns the default budget (that backend is unused with a pool)
    return max(1, budget // concurrency)


def file_error(path: str, message: str) -> str:
    """``path: message``, without repeating the path when the message already starts with it."""
    return message if message.startswith(path) else f"{path}: {message}"
