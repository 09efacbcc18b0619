"""Running ``parakeet-cli`` (or Python) against a :class:`local_hub.LocalHub`, in a subprocess:
huggingface_hub reads HF_ENDPOINT, HF_HOME and HF_HUB_OFFLINE when it is imported, so each run
gets a fresh process with the environment of the case (never the user's token or cache)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from data_helpers import ROOT

# A CLI run here converts tiny models: seconds. The bound only stops a hung run.
RUN_TIMEOUT_SEC = 120


def hub_env(endpoint: str, hf_home: Path, token: Optional[str] = None, offline: bool = False) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING_FACE"))}
    env.update(HF_ENDPOINT=endpoint, HF_HOME=str(hf_home), HF_HUB_DISABLE_TELEMETRY="1", HF_HUB_DISABLE_XET="1",
               HF_HUB_ETAG_TIMEOUT="5", HF_HUB_DOWNLOAD_TIMEOUT="10", NO_PROXY="127.0.0.1", no_proxy="127.0.0.1",
               PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "cli"), os.environ.get("PYTHONPATH", "")]))
    if token is not None:
        env["HF_TOKEN"] = token
    if offline:
        env["HF_HUB_OFFLINE"] = "1"
    return env


def cli_command(*args: object) -> List[str]:
    return [sys.executable, "-m", "parakeet_cli.main", *[str(a) for a in args]]


def run(command: Sequence[str], env: Dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(list(command), env=env, cwd=ROOT, capture_output=True, text=True, timeout=RUN_TIMEOUT_SEC)


def run_cli(env: Dict[str, str], *args: object) -> subprocess.CompletedProcess:
    return run(cli_command(*args), env)


def ok(result: subprocess.CompletedProcess) -> str:
    """The run's stdout, after checking that it succeeded."""
    assert result.returncode == 0, f"exit {result.returncode}\nstdout: {result.stdout}\nstderr: {result.stderr}"
    return result.stdout


def one_line_error(result: subprocess.CompletedProcess) -> str:
    """The error line of a failed run, after checking that it failed with exit status 1 and
    printed one ``Error: ...`` line and no traceback."""
    assert result.returncode == 1, f"exit {result.returncode}\nstdout: {result.stdout}\nstderr: {result.stderr}"
    assert "Traceback" not in result.stderr, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1, result.stderr
    return errors[0]
