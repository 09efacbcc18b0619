"""Running the real ``parakeet-server`` for tests: a subprocess on a free loopback port.

``ServerProcess`` starts ``python -m parakeet_cli.server`` with the fixture model, waits (with
a deadline) until ``/health`` answers, and always stops the process on exit, killing it if
it does not stop in time. Its output goes to a log file that failures print.
"""

from __future__ import annotations

import io
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, List, Optional

import httpx
import numpy as np
import soundfile

from data_helpers import AUDIO, CLIPS, MODEL, NEMO_DIR, ROOT  # noqa: F401 (the server tests take them from here)

START_TIMEOUT_SEC = 60
# Tries at a fresh port when the one chosen was taken before the server could bind it.
PORT_TRIES = 3
# Every test client is 127.0.0.1: a test in which one client fills the whole server (all the
# queue's places, all the stream slots) lifts the per-client share.
ONE_CLIENT = ["--client-share", "1"]
# Tests of the transcription queue's own rules (one upload per backend at a time, as many
# workers as backends) turn off the batching of uploads, which gives a backend several.
UNBATCHED = ["--upload-batch", "1"]
STOP_TIMEOUT_SEC = 15

# The transcription requests a disconnect or a stop cancels at their next progress report, as
# (form fields, ServerProcess's vad, extra server flags): greedy, beam search (its search
# reports at every encoder frame), a VAD-cut upload (the VAD's reports, then each piece's) and a
# speaker-labelled one (the transcription's reports, then the diarization's).
CANCELLABLE = {
    "greedy": ({}, "none", []),
    "beam": ({"beam_size": "4"}, "none", []),
    "server_vad": ({"chunking_strategy[type]": "server_vad"}, None, []),
    "diarized_json": ({"response_format": "diarized_json"}, "none",
                      ["--diarize-model", str(NEMO_DIR / "sortformer_offline" / "model.gguf")]),
}


def on_threads(n: int, fn: Callable[[int], Any]) -> List[Any]:
    """fn(0) .. fn(n - 1), each on a thread of its own, all at once; their results in order."""
    got: List[Any] = [None] * n

    def run(i: int) -> None:
        got[i] = fn(i)
    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return got


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate: Callable[[], bool], what: str, hang_guard: float = 180.0) -> None:
    """Polls ``predicate`` until it holds: the tests wait for events (a metric moved, a slot
    freed); ``hang_guard`` seconds only stop a test that would otherwise hang."""
    deadline = time.monotonic() + hang_guard
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def long_wav_bytes(seconds: float) -> bytes:
    """A WAV of the 30 s fixture clip repeated to ``seconds`` (slow enough to overlap requests)."""
    data, rate = soundfile.read(AUDIO / "long_30s_16k.wav", dtype="int16")
    reps = int(np.ceil(seconds * rate / len(data)))
    samples = np.tile(data, reps)[: int(seconds * rate)]
    buf = io.BytesIO()
    soundfile.write(buf, samples, rate, format="WAV", subtype="PCM_16")
    return buf.getvalue()


class ServerProcess:
    """``with ServerProcess(["--concurrency", "2"]) as srv: httpx.get(srv.url + "/health")``."""

    def __init__(self, args: List[str], log_dir: Path, model: Path = MODEL, vad: Optional[str] = "none") -> None:
        """``vad``: the --vad-model value; "none" (the tests' default: realtime sessions then
        default to manual commits) or None (the server's own default, the package's model)."""
        self._server_args = ["--model", str(model), "--host", "127.0.0.1", "--log-level", "warning", *args,
                             *(["--vad-model", vad] if vad is not None else [])]
        self._log_dir = log_dir
        self._take_port(free_port())
        self.proc: Optional[subprocess.Popen] = None

    def _take_port(self, port: int) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.args = [sys.executable, "-m", "parakeet_cli.server", "--port", str(port), *self._server_args]
        self.log_path = self._log_dir / f"server-{port}.log"

    def __enter__(self) -> "ServerProcess":
        env = dict(os.environ)
        env.pop("PARAKEET_API_KEY", None)  # only what the test passes
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "cli"), env.get("PYTHONPATH", "")])
        attempt = 1
        while True:
            self._log = open(self.log_path, "wb")
            self.proc = subprocess.Popen(self.args, stdout=self._log, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
            try:
                self._wait_ready()
                return self
            except BaseException:
                self.stop()
                # free_port() closes its probe socket before the server binds, so another process
                # can take the port in between: only that failure is worth another port.
                if attempt == PORT_TRIES or "address already in use" not in self.log():
                    raise
            attempt += 1
            self._take_port(free_port())

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_SEC
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}:\n{self.log()}")
            try:
                if httpx.get(self.url + "/health", timeout=1.0).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"server did not answer /health within {START_TIMEOUT_SEC} s:\n{self.log()}")

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def stop(self) -> Optional[int]:
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=STOP_TIMEOUT_SEC)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=STOP_TIMEOUT_SEC)
        self._log.close()
        return self.proc.returncode

    def __exit__(self, *exc) -> None:
        self.stop()

    def metric(self, name: str, labels: Optional[dict] = None) -> float:
        """The current value of one sample of ``/metrics`` (0 when absent)."""
        from prometheus_client.parser import text_string_to_metric_families

        text = httpx.get(self.url + "/metrics", timeout=5).text
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name == name and all(sample.labels.get(k) == v for k, v in (labels or {}).items()):
                    return sample.value
        return 0.0
