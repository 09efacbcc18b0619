"""Many streams on one context from many threads: more streams than backends, each with the
single-stream result; errors exact per thread; closing the context waits for running feeds."""

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from parakeet_py import Context, ParakeetError, load_audio
from stream_helpers import LONG, MODELS, SMALL, per_test_limit, run_stream

pytestmark = pytest.mark.skipif(not MODELS["tdt"].exists(), reason="fixture model missing")

JOIN_SEC = 90


_bounded = per_test_limit(150)


@pytest.fixture(scope="module")
def clips():
    audio = load_audio(LONG)
    return [audio[i * 16000:(i + 3) * 16000] for i in range(0, 24, 3)]  # eight different 3 s clips


def test_more_streams_than_backends_give_the_single_stream_results(clips):
    with Context(MODELS["tdt"]) as alone:
        expected = [run_stream(alone.stream(**SMALL), clip, [len(clip)])[:3] for clip in clips]
    with Context(MODELS["tdt"], concurrency=2, threads=1) as ctx:
        start = threading.Barrier(len(clips))

        def one(i):
            stream = ctx.stream(**SMALL)
            start.wait(timeout=JOIN_SEC)  # every stream is open before any is fed
            return run_stream(stream, clips[i], [1600 + 37 * i])[:3]

        with ThreadPoolExecutor(len(clips)) as pool:
            results = [f.result(timeout=JOIN_SEC) for f in [pool.submit(one, i) for i in range(len(clips))]]
    assert results == expected


def test_each_thread_gets_its_own_error():
    """Threads fail together in different ways; each reads its own call's message."""
    with Context(MODELS["tdt"], concurrency=2, threads=1) as ctx:
        start = threading.Barrier(3)

        def nan_feed():
            with ctx.stream(**SMALL) as s:
                bad = np.zeros(1000, np.float32)
                bad[321] = np.inf
                start.wait(timeout=JOIN_SEC)
                for _ in range(50):
                    with pytest.raises(ParakeetError) as err:
                        s.feed(bad)
                    assert "321" in err.value.message, err.value.message
            return "ok"

        def after_finalize():
            with ctx.stream(**SMALL) as s:
                s.finalize()
                start.wait(timeout=JOIN_SEC)
                for _ in range(50):
                    with pytest.raises(ParakeetError) as err:
                        s.feed(np.zeros(10, np.float32))
                    assert "321" not in err.value.message and err.value.message
            return "ok"

        def bad_settings():
            start.wait(timeout=JOIN_SEC)
            for _ in range(50):
                with pytest.raises(ParakeetError) as err:
                    ctx.stream(chunk=0.0)
                assert "321" not in err.value.message and err.value.message
            return "ok"

        with ThreadPoolExecutor(3) as pool:
            futures = [pool.submit(f) for f in (nan_feed, after_finalize, bad_settings)]
            assert [f.result(timeout=JOIN_SEC) for f in futures] == ["ok"] * 3


def test_closing_the_context_waits_for_a_running_feed(clips):
    ctx = Context(MODELS["tdt"])
    stream = ctx.stream(**SMALL)
    feeding = threading.Event()
    outcome = {}

    def feed():
        feeding.set()
        try:
            outcome["update"] = stream.feed(np.tile(clips[0], 4))
        except ParakeetError as e:  # refused if close() won the race: also a clean outcome
            outcome["error"] = e

    t = threading.Thread(target=feed)
    t.start()
    feeding.wait(timeout=JOIN_SEC)
    ctx.close()
    t.join(timeout=JOIN_SEC)
    assert not t.is_alive()
    assert stream.closed
    assert "update" in outcome or "closed" in str(outcome["error"])
