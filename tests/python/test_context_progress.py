"""Context: the attention setting (constructor, property, validation, what ran) and progress
callbacks (monotone to 1.0, cancelling with False, an exception that cancels and is re-raised,
the backend free again afterwards, the GIL released between reports)."""

import threading
import time

import numpy as np
import pytest

from parakeet_py import Cancelled, Context, ParakeetError, load_audio

from data_helpers import LONG, MODEL, SPEECH

pytestmark = pytest.mark.skipif(not MODEL.exists(), reason=f"{MODEL} has not been generated")


@pytest.fixture(scope="module")
def ctx():
    with Context(MODEL) as c:
        yield c


@pytest.fixture(autouse=True)
def auto_attention(ctx):
    yield
    ctx.attention = "auto"


# ---- attention ---------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["auto", "full", (16, 8), [4, 4], (np.int64(3), 2)])
def test_attention_round_trips(ctx, value):
    ctx.attention = value
    expected = tuple(int(v) for v in value) if not isinstance(value, str) else value
    assert ctx.attention == expected
    assert ctx.info["auto_full_max_frames"] > 0 and ctx.info["isa"] in ("scalar", "avx2", "avx512")


@pytest.mark.parametrize("value", ["local", "Full", (0, 5), (5, 0), (-1, -1), (1,), (1, 2, 3), (True, 2),
                                   (1.5, 2), "16,16", None, 16])
def test_bad_attention_is_refused_and_changes_nothing(ctx, value):
    ctx.attention = "full"
    with pytest.raises(ParakeetError, match="attention must be"):
        ctx.attention = value
    assert ctx.attention == "full"


def test_bad_attention_in_the_constructor_is_refused_before_loading():
    with pytest.raises(ParakeetError, match="attention must be"):
        Context("/no/such/model.gguf", attention=(0, 3))


def test_constructor_attention_and_what_ran():
    with Context(MODEL, attention="full") as c:
        assert c.attention == "full"
        assert c.transcribe(SPEECH).attention == "full"
    with Context(MODEL) as c:
        assert c.attention == "auto"
        assert c.transcribe(SPEECH).attention == "full"  # auto on a short clip
        assert c.transcribe(SPEECH, timestamps=False).attention is None  # text-only call


def test_local_attention_runs(ctx):
    ctx.attention = (8, 8)
    t = ctx.transcribe(SPEECH)
    assert t.attention == (8, 8)
    assert t.to_dict()["attention"] == [8, 8]


# ---- progress ------------------------------------------------------------------------------
def test_progress_is_monotone_reaches_one_and_changes_nothing(ctx):
    plain = ctx.transcribe(SPEECH)
    seen = []
    with_progress = ctx.transcribe(SPEECH, progress=seen.append)  # returns None: go on
    assert with_progress == plain
    assert len(seen) >= 4 and seen[0] == 0.0 and seen[-1] == 1.0
    assert all(0.0 <= f <= 1.0 for f in seen) and seen == sorted(seen)
    text_only = ctx.transcribe(SPEECH, timestamps=False, progress=lambda f: True)
    assert text_only.text == plain.text and text_only.words == [] and text_only.attention == "full"


def test_returning_false_cancels(ctx):
    calls = []

    def stop_at_once(f):
        calls.append(f)
        return False

    with pytest.raises(Cancelled, match="cancelled by the progress callback") as err:
        ctx.transcribe(SPEECH, progress=stop_at_once)
    assert isinstance(err.value, ParakeetError)
    assert calls == [0.0]


def test_cancel_half_way_then_the_backend_serves_the_next_request(ctx):
    calls = []

    def stop_half_way(f):
        calls.append(f)
        return f < 0.5

    with pytest.raises(Cancelled):
        ctx.transcribe(SPEECH, progress=stop_half_way)
    assert calls[-1] >= 0.5 and calls[-1] < 1.0 and len(calls) > 2
    assert ctx.transcribe(SPEECH).text == ctx.transcribe(SPEECH, progress=lambda f: None).text


class Boom(RuntimeError):
    pass


def test_an_exception_in_the_callback_cancels_and_is_reraised(ctx):
    calls = []

    def explode(f):
        calls.append(f)
        if f > 0.3:
            raise Boom("stop here")

    with pytest.raises(Boom, match="stop here"):
        ctx.transcribe(SPEECH, progress=explode)
    assert calls[-1] > 0.3 and calls[-1] < 1.0
    assert sum(f > 0.3 for f in calls) == 1  # not called again after raising


def test_progress_must_be_callable(ctx):
    with pytest.raises(ParakeetError, match="progress must be callable"):
        ctx.transcribe(SPEECH, progress=0.5)


def test_the_gil_is_released_between_reports():
    """A heartbeat thread keeps ticking while a request with a progress callback runs."""
    audio = np.tile(load_audio(LONG), 8)  # 4 min
    with Context(MODEL, concurrency=2, threads=1, attention="full") as c:
        beats, stop = [], threading.Event()

        def heartbeat():
            while not stop.is_set():
                beats.append(time.perf_counter())
                time.sleep(0.002)

        ticker = threading.Thread(target=heartbeat)
        ticker.start()
        time.sleep(0.02)
        start = time.perf_counter()
        reports = []
        c.transcribe(audio, sample_rate=16000, progress=reports.append)
        end = time.perf_counter()
        stop.set()
        ticker.join()
    inside = [b for b in beats if start < b < end]
    assert end - start > 0.05, "the call is too short to tell"
    assert reports[-1] == 1.0
    gaps = np.diff([start] + inside + [end])
    assert len(inside) >= 3 and gaps.max() < (end - start) / 2, (len(inside), gaps.max(), end - start)
