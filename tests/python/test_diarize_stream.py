"""Diarizer.stream: the C ABI's diarization stream from Python on the streaming Sortformer
fixture — the segments of feeds of 0.1 s, 0.5 s and 5 s are the same at three presets, and at
the checkpoint's own configuration equal what its offline diarize() gives; active, time,
chunk_samples; bad latencies, a model that cannot stream, a finished or closed stream are
refused."""

import numpy as np
import pytest

from data_helpers import CONVERSATION as CLIP, NEMO_DIR, conversation_pcm as pcm
from parakeet_py import Diarizer, InvalidArgument, Unsupported
from stream_helpers import check_finished_then_closed


@pytest.fixture(scope="module")
def diarizer():
    with Diarizer(NEMO_DIR / "sortformer_stream" / "model.gguf") as d:
        yield d


def run(d, feed, latency):
    x = pcm()
    got = []
    with d.stream(latency=latency) as s:
        assert s.chunk_samples > 0
        for at in range(0, len(x), feed):
            got += s.feed(x[at:at + feed])
            assert all(seg.end <= s.time + 1e-6 for seg in got)
        assert all(seg.end == pytest.approx(s.time, abs=0.006) for seg in s.active)
        got += s.finish()
        assert s.active == []
    return sorted(got)


@pytest.mark.parametrize("latency", ["low", "ultra_low", 2])
def test_segments_do_not_depend_on_the_feeds(diarizer, latency):
    runs = [run(diarizer, feed, latency) for feed in (1600, 8000, 80000)]
    assert runs[0] == runs[1] == runs[2]
    assert len(runs[0]) > 2 and len({s.speaker for s in runs[0]}) >= 2


def test_the_checkpoints_own_configuration_is_what_diarize_gives(diarizer):
    # The fixture's own streaming configuration is what its offline diarize() runs (the
    # checkpoint has streaming_mode on), so the stream at "model" ends with the same segments.
    assert run(diarizer, 8000, "model") == sorted(diarizer.diarize(CLIP))


def test_bad_latencies_and_models_are_refused(diarizer):
    with pytest.raises(InvalidArgument, match="latency"):
        diarizer.stream(latency=4)
    with pytest.raises(InvalidArgument, match="unknown latency"):
        diarizer.stream(latency="fast")
    with pytest.raises(InvalidArgument):
        diarizer.stream(latency=1.5)
    with Diarizer(NEMO_DIR / "sortformer_offline" / "model.gguf") as offline:
        with pytest.raises(Unsupported, match="per_feature"):
            offline.stream()
    check_finished_then_closed(diarizer.stream(), InvalidArgument, "closed")


def test_closing_the_diarizer_closes_its_streams():
    # The library's stream borrows the diarizer's context: it must not outlive it.
    with Diarizer(NEMO_DIR / "sortformer_stream" / "model.gguf") as d:
        s = d.stream()
        s.feed(pcm()[:8000])
    with pytest.raises(InvalidArgument, match="the diarization stream is closed"):
        s.feed(np.zeros(10, np.float32))
