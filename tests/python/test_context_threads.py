"""Context under Python threads: the GIL is released during compute, a concurrency-2 context
really runs two requests at once, each thread gets its own exact error message, and close()
waits for running requests."""

import os
import threading
import time

import numpy as np
import pytest

from parakeet_py import Context, ParakeetError, _native, load_audio

from data_helpers import AUDIO, LONG, MODEL

SHORT = AUDIO / "short_1s_16k.wav"

pytestmark = pytest.mark.skipif(not MODEL.exists(), reason=f"{MODEL} has not been generated")


@pytest.fixture(scope="module")
def long_audio():
    return np.tile(load_audio(LONG), 8)  # 4 min: a few hundred ms of compute on the fixture model


def test_gil_is_released_while_the_library_computes(long_audio):
    """A heartbeat thread keeps ticking during a transcription: with the GIL held for the whole
    C call it could not run at all between the call's start and end."""
    with Context(MODEL, concurrency=2, threads=1) as ctx:
        ctx.transcribe(long_audio[:16000], sample_rate=16000)  # warm the backend
        beats = []
        stop = threading.Event()

        def heartbeat():
            while not stop.is_set():
                beats.append(time.perf_counter())
                time.sleep(0.002)

        ticker = threading.Thread(target=heartbeat)
        ticker.start()
        time.sleep(0.02)
        start = time.perf_counter()
        ctx.transcribe(long_audio, sample_rate=16000, timestamps=False)
        end = time.perf_counter()
        stop.set()
        ticker.join()
    inside = [b for b in beats if start < b < end]
    assert end - start > 0.05, "the call is too short to tell"
    gaps = np.diff([start] + inside + [end])
    assert len(inside) >= 3 and gaps.max() < (end - start) / 2, (len(inside), gaps.max(), end - start)


def _cpu_ns(tid):
    """CPU time (ns) a thread has run so far, from /proc/self/task/<tid>/schedstat."""
    with open(f"/proc/self/task/{tid}/schedstat") as f:
        return int(f.read().split()[0])


def _simultaneous_cpu_ms(ctx, audio):
    """Two threads transcribe ``audio`` at once while this thread samples both threads' CPU
    time every millisecond; returns the CPU time (ms) during which BOTH made progress (the
    sum over samples of the smaller of the two increments). Requests that run one at a time
    (a held GIL, or a context without a pool) give about zero however loaded the machine is."""
    tids, done = [None, None], [False, False]
    ready = threading.Barrier(3)

    def work(i):
        tids[i] = threading.get_native_id()
        ready.wait()
        ctx.transcribe(audio, sample_rate=16000, timestamps=False)
        done[i] = True

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    ready.wait()
    previous, both = [_cpu_ns(t) for t in tids], 0
    while not all(done):
        time.sleep(0.001)
        try:
            current = [_cpu_ns(t) for t in tids]
        except OSError:  # a thread finished and its task entry went away
            break
        both += min(current[0] - previous[0], current[1] - previous[1])
        previous = current
    for t in threads:
        t.join()
    return both / 1e6


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs two CPUs")
@pytest.mark.skipif(not os.path.exists(f"/proc/self/task/{threading.get_native_id()}/schedstat"),
                    reason="needs /proc/<pid>/task/<tid>/schedstat")
def test_two_threads_on_a_concurrency_2_context_compute_at_the_same_time(long_audio):
    """With one compute thread per backend each request runs on its caller's thread, so both
    callers' CPU time advances together only if the two requests really run at once. A
    context without a pool (requests queue) is the control: it must show far less overlap."""
    results = {}
    for k in (1, 2):
        with Context(MODEL, concurrency=k, threads=1) as ctx:
            ctx.transcribe_many([(long_audio[:16000], 16000)] * 2)  # warm the backends
            # The machine is shared: the best of a few tries for the pool, the least for the control.
            tries = [_simultaneous_cpu_ms(ctx, long_audio) for _ in range(3)]
            results[k] = max(tries) if k == 2 else min(tries)
    _native.set_threads(0)
    assert results[2] >= 4.0 and results[1] < results[2] / 2, results


def test_each_thread_gets_its_own_error_under_concurrency():
    """Eight threads fail at the same moments with different errors (a NaN at a different
    sample each; the library names the sample) and succeed in between; every failure must
    carry its own thread's message, and a success must leave that thread's error empty."""
    n_threads, rounds = 8, 25
    ok = np.zeros(4000, np.float32)
    with Context(MODEL, concurrency=3, threads=1) as ctx:
        barrier = threading.Barrier(n_threads)
        problems = []

        def work(i):
            bad = np.zeros(4000, np.float32)
            bad[100 + i] = np.nan
            expected = f"sample {100 + i} is not a finite number (NaN or Inf)"
            for r in range(rounds):
                barrier.wait()
                if (r + i) % 3 == 0:
                    ctx.transcribe(ok, sample_rate=16000)
                    if _native.last_error() != "":
                        problems.append((i, r, "success left an error", _native.last_error()))
                    continue
                try:
                    ctx.transcribe(bad, sample_rate=16000)
                    problems.append((i, r, "no error"))
                except ParakeetError as e:
                    if str(e) != expected:
                        problems.append((i, r, str(e)))

        threads = [threading.Thread(target=work, args=(i,)) for i in range(n_threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert problems == []


def test_close_waits_for_running_requests(long_audio):
    ctx = Context(MODEL)
    started = threading.Event()
    result = {}

    def work():
        started.set()
        result["text"] = ctx.transcribe(long_audio, sample_rate=16000, timestamps=False).text
        result["end"] = time.perf_counter()

    t = threading.Thread(target=work)
    t.start()
    started.wait()
    time.sleep(0.01)
    ctx.close()
    closed_at = time.perf_counter()
    t.join()
    assert "text" in result and result["end"] <= closed_at
    with pytest.raises(ParakeetError, match="closed"):
        ctx.transcribe(long_audio[:100], sample_rate=16000)


def test_set_concurrency_while_requests_run(long_audio):
    with Context(MODEL, concurrency=2, threads=1) as ctx:
        expected = ctx.transcribe(long_audio[: 16000 * 5], sample_rate=16000)
        out = []

        def work():
            out.append(ctx.transcribe(long_audio[: 16000 * 5], sample_rate=16000))

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for k in (3, 1, 2):
            ctx.set_concurrency(k, 1)
        for t in threads:
            t.join()
        assert out == [expected] * 4
    _native.set_threads(0)
