"""Fixtures every Python test module may use: the committed data, the fixture models and a
running ``parakeet-server``.

Paths are the constants of :mod:`data_helpers` (which modules needing them at import time, for
``parametrize`` lists, import directly). A model fixture skips its test when the model has not
been generated (``tools/fixtures/convert_fixture_models.sh``).

    def test_something(model_path, speech_wav): ...
    def test_a_server(start_server):
        srv = start_server(["--concurrency", "2"])     # stopped (by pid) when the test ends
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional

import pytest

import data_helpers


def _existing(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} has not been generated (tools/fixtures/convert_fixture_models.sh)")
    return path


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository's root folder."""
    return data_helpers.ROOT


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """``tests/data``."""
    return data_helpers.DATA


@pytest.fixture(scope="session")
def audio_dir() -> Path:
    """``tests/data/audio``: the clips (speech, silence, short, long, 44.1 kHz stereo)."""
    return data_helpers.AUDIO


@pytest.fixture(scope="session")
def speech_wav() -> Path:
    """9.6 s of speech at 16 kHz."""
    return _existing(data_helpers.SPEECH)


@pytest.fixture(scope="session")
def fixture_models() -> Dict[str, Path]:
    """Architecture name → its converted fixture model (``tests/data/nemo/<arch>/model.gguf``)."""
    return dict(data_helpers.MODELS)


@pytest.fixture(scope="session")
def model_path() -> Path:
    """The hybrid TDT + CTC fixture model (transducer, CTC, beam search: every feature)."""
    return _existing(data_helpers.MODEL)


@pytest.fixture(scope="session")
def ctc_model_path() -> Path:
    """The CTC-only fixture model (no transducer head)."""
    return _existing(data_helpers.CTC_ONLY_MODEL)


@pytest.fixture(scope="session")
def header_path() -> Path:
    """The C ABI's public header, ``libparakeet/include/parakeet_capi.h``."""
    return data_helpers.HEADER


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[Callable[..., "object"]]:
    """A function that starts ``parakeet-server`` on a free 127.0.0.1 port (``args``: its command
    line options; ``model``: the model to serve, default the hybrid fixture) and waits until it
    answers; every server it started is stopped, by its pid, when the test ends."""
    from server_helpers import ServerProcess

    started: List[ServerProcess] = []

    def start(args: Optional[List[str]] = None, model: Optional[Path] = None) -> ServerProcess:
        server = ServerProcess(list(args or []), tmp_path, model=_existing(model or data_helpers.MODEL))
        server.__enter__()
        started.append(server)
        return server

    yield start
    for server in reversed(started):
        server.stop()
