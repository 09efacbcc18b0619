"""bench/benchlib.py's OthersCpu from constructed process tables: processes reaped during the
interval, a reused pid and this process's own descendants."""

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from benchlib import OthersCpu  # noqa: E402

ME = os.getpid()
TICK = os.sysconf("SC_CLK_TCK")
NCPU = os.cpu_count() or 1


def measure(before, after, wall=0.5):
    """OthersCpu's share for the tables ``before`` and ``after`` (pid, start) -> (ppid, ticks),
    read ``wall`` seconds apart."""
    tables, times = iter([before, after]), iter([100.0, 100.0 + wall])
    meter = OthersCpu(read=lambda: next(tables), clock=lambda: next(times))
    meter.start()
    return meter.stop()


def share(ticks, wall=0.5):
    return ticks / TICK / wall / NCPU


def test_a_child_reaped_during_the_interval_counts_only_its_ticks_since_start():
    # make (pid 20) runs a compiler (pid 21) that had used 1000 ticks before start(); it ends
    # 5 ticks later and make reaps it: all 1005 land in make's cutime.
    before = {(1, 0): (0, 0), (ME, 50): (1, 0), (20, 60): (1, 10), (21, 70): (20, 1000)}
    after = {(1, 0): (0, 0), (ME, 50): (1, 0), (20, 60): (1, 10 + 1005 + 2)}
    assert measure(before, after) == pytest.approx(share(5 + 2))


def test_a_reused_pid_is_a_new_process():
    # pid 30 ends (init reaps its 300 + 4 ticks) and a new process takes the pid: 1 tick so far.
    before = {(1, 0): (0, 0), (ME, 50): (1, 0), (30, 10): (1, 300)}
    after = {(1, 0): (0, 300 + 4), (ME, 50): (1, 0), (30, 900): (1, 1)}
    assert measure(before, after) == pytest.approx(share(4 + 1))


def test_our_descendants_are_not_others_even_once_orphaned():
    # our child 40 and its child 41; 40 ends (we reap it) and 41 is handed to init.
    before = {(1, 0): (0, 0), (ME, 50): (1, 0), (40, 60): (ME, 100), (41, 70): (40, 200), (42, 5): (1, 0)}
    after = {(1, 0): (0, 0), (ME, 50): (1, 100 + 30), (41, 70): (1, 200 + 60), (42, 5): (1, 7)}
    assert measure(before, after) == pytest.approx(share(7))


def test_nothing_else_running_is_zero():
    table = {(1, 0): (0, 5), (ME, 50): (1, 0)}
    assert measure(table, {(1, 0): (0, 5), (ME, 50): (1, 900)}) == 0.0
