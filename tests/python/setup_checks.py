"""What a test does when something that tools/setup.sh installs is missing: under CI (which runs
tools/setup.sh first) that is a broken setup and the test fails; on a developer's machine that
skipped a step it is a skip that says how to install it."""

from __future__ import annotations

import os

import pytest


def missing(what: str, how: str) -> None:
    """Fails (CI) or skips (elsewhere) the running test: ``what`` is missing, ``how`` installs it."""
    if os.environ.get("CI"):
        pytest.fail(f"{what} is missing, though tools/setup.sh installs it ({how})")
    pytest.skip(f"{what} is not installed ({how})")
