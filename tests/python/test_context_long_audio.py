"""One hour of audio through the Python API on the fixture model: accepted (no length cap),
auto runs local attention [128, 128], cancelling mid-way works and leaves the backend free, and the
pool's arenas hold the hour's working memory (see docs/api.md, "Long audio")."""


import numpy as np
import pytest

from parakeet_py import Cancelled, Context

from data_helpers import MODEL
RATE = 16000

pytestmark = pytest.mark.skipif(not MODEL.exists(), reason=f"{MODEL} has not been generated")


@pytest.fixture(scope="module")
def hour():
    rng = np.random.default_rng(3600)
    return (0.1 * rng.standard_normal(3600 * RATE)).astype(np.float32)


def test_an_hour_is_accepted_and_runs_local(hour):
    with Context(MODEL, concurrency=2, threads=1) as ctx:
        assert len(hour) // 160 // 8 > ctx.info["auto_full_max_frames"]
        seen = []
        t = ctx.transcribe(hour, sample_rate=RATE, progress=seen.append)
        assert t.attention == (128, 128) and t.duration == 3600.0 and seen[-1] == 1.0
        assert seen == sorted(seen) and len(seen) > 100
        mel_bytes = len(hour) // 160 * ctx.info["n_mels"] * 4
        assert ctx.working_set_bytes > mel_bytes  # the hour's features lived in the pool's arena


def test_cancelling_an_hour_mid_way(hour):
    with Context(MODEL) as ctx:
        seen = []

        def until_a_tenth(fraction):
            seen.append(fraction)
            return fraction <= 0.1

        with pytest.raises(Cancelled):
            ctx.transcribe(hour, sample_rate=RATE, progress=until_a_tenth)
        assert 0.1 < seen[-1] < 0.5
        assert ctx.transcribe(hour[:RATE], sample_rate=RATE).attention == "full"  # the backend is free
