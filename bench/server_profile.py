"""Where a benchmarked server's CPU goes: its process CPU time, and py-spy samples sorted by the
work they are in (the realtime turn detector's VAD, the ASR streams' feeds, everything else).

py-spy (PyPI ``py-spy``, a sampling profiler) reads the server's stacks from outside without
stopping it (``--nonblocking``). It counts a thread busy by its OS state, so one inside the
library (no GIL held) counts with the Python frame that called it: the share of samples is the
share of CPU time. It is a measuring tool, not a dependency.
"""

import os
import signal
import subprocess
from collections import Counter
from pathlib import Path
from typing import Dict

# A sample belongs to the first kind whose file lies on its stack (outermost frame first).
KINDS = (("vad", "speech_turns.py"), ("asr", "parakeet_py/stream.py"))
# Innermost frames of threads that wait: py-spy can take a thread inside these calls as busy.
WAITS = ("_worker (concurrent/futures/thread.py:81)", "select (selectors.py", "wait (threading.py")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` (all its threads) so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def classify(collapsed: str) -> Dict[str, int]:
    """Samples per kind of py-spy's raw (collapsed) output: one "frame;frame;... count" a line."""
    counts: Counter = Counter()
    for line in collapsed.splitlines():
        stack, _, n = line.rpartition(" ")
        if not stack or any(wait in stack.rsplit(";", 1)[-1] for wait in WAITS):
            continue
        kind = next((k for k, where in KINDS if where in stack), "other")
        counts[kind] += int(n)
    return {k: counts.get(k, 0) for k in [k for k, _ in KINDS] + ["other"]}


class Profile:
    """py-spy recording process ``pid`` from now until :meth:`stop`."""

    def __init__(self, py_spy: str, pid: int, out: Path, rate: int = 97) -> None:
        self.out = out
        self.proc = subprocess.Popen([py_spy, "record", "--pid", str(pid), "--nonblocking",
                                      "--rate", str(rate), "--format", "raw", "--output", str(out)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def stop(self) -> Dict[str, int]:
        """Ends the recording; returns its samples per kind."""
        self.proc.send_signal(signal.SIGINT)
        _, err = self.proc.communicate(timeout=60)
        if not self.out.exists():
            raise RuntimeError(f"py-spy wrote no profile: {err.decode(errors='replace').strip()[-300:]}")
        return classify(self.out.read_text())
