"""bench/server_profile.py, which bench_live_batch.py's VAD share rests on: py-spy's samples sorted
by the work they are in, waiting threads left out, and a process's CPU time."""

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from server_profile import classify, cpu_seconds  # noqa: E402

LOOP = "run (asyncio/runners.py:118);_run_once (asyncio/base_events.py:1890)"
WORKER = "Thread.run (threading.py:982);_WorkItem.run (concurrent/futures/thread.py:58)"


def test_samples_go_to_the_work_on_their_stack():
    collapsed = "\n".join([
        f"{WORKER};SpeechTurns.feed (parakeet_cli/server/speech_turns.py:67);VadStream.feed (parakeet_py/vad.py:103) 7",
        f"{WORKER};SpeechTurns.feed (parakeet_cli/server/speech_turns.py:61);resample_chunk (soxr/__init__.py:126) 2",
        f"{WORKER};Stream.feed (parakeet_py/stream.py:217) 30",
        f"{LOOP};Frame.serialize (websockets/frames.py:376) 4",
    ])
    assert classify(collapsed) == {"vad": 9, "asr": 30, "other": 4}


def test_waiting_threads_are_left_out():
    collapsed = "\n".join([
        "Thread.run (threading.py:982);_worker (concurrent/futures/thread.py:81) 50",
        f"{LOOP};EpollSelector.select (selectors.py:468) 40",
        f"{WORKER};Stream.feed (parakeet_py/stream.py:217);Condition.wait (threading.py:327) 20",
        f"{WORKER};Stream.feed (parakeet_py/stream.py:217) 3",
        "",
    ])
    assert classify(collapsed) == {"vad": 0, "asr": 3, "other": 0}


def test_cpu_seconds_counts_this_process_work():
    before = cpu_seconds(os.getpid())
    deadline = time.process_time() + 0.3
    while time.process_time() < deadline:
        pass
    assert 0.2 <= cpu_seconds(os.getpid()) - before <= 5.0
