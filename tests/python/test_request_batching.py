"""Request batching through the Python binding (``Context.set_request_batching``): transcribe
calls from several threads at once get the transcripts they get alone, the stats count every
request, and bad values raise. On the hybrid TDT+CTC fixture model."""

import threading

import pytest

from data_helpers import CONVERSATION, MODEL, SPEECH
from parakeet_py import Context, InvalidArgument, ParakeetError, load_audio

pytestmark = pytest.mark.skipif(not MODEL.exists(), reason="fixture model missing")


@pytest.fixture(scope="module")
def clips():
    speech, conversation = load_audio(SPEECH), load_audio(CONVERSATION)
    # different lengths, from a tenth of a second; each with a decoder head
    return [(speech[:48000], None), (conversation[16000:56000], "ctc"), (speech[20000:21600], None),
            (conversation[:64000], None), (speech[8000:40000], "ctc")]


def transcribe_all(ctx, clips, rounds=1):
    """Each clip transcribed `rounds` times, on a thread of its own: {index: [transcript dicts]}."""
    got = {i: [] for i in range(len(clips))}

    def run(i, audio, decoder):
        for _ in range(rounds):
            got[i].append(ctx.transcribe(audio, sample_rate=16000, decoder=decoder).to_dict())
    threads = [threading.Thread(target=run, args=(i, a, d)) for i, (a, d) in enumerate(clips)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return got


def test_concurrent_calls_get_their_transcripts_alone(clips):
    with Context(MODEL) as ctx:
        alone = [ctx.transcribe(a, sample_rate=16000, decoder=d).to_dict() for a, d in clips]
        assert sum(len(t["text"]) for t in alone) > 20, "the clips say something"
        ctx.set_request_batching(4, 50)
        got = transcribe_all(ctx, clips, rounds=3)
        assert all(got[i] == [alone[i]] * 3 for i in range(len(clips)))
        stats = ctx.request_batching_stats()
        assert stats["max_batch"] == 4 and stats["max_wait_ms"] == 50
        assert sum((size + 1) * n for size, n in enumerate(stats["batch_sizes"])) == 3 * len(clips)
        assert stats["unbatched"] == 0


def test_the_constructor_option_turns_it_on(clips):
    with Context(MODEL, request_batching=(3, 20)) as ctx:
        assert ctx.request_batching_stats()["max_batch"] == 3
        ctx.transcribe(clips[0][0], sample_rate=16000)
        assert ctx.request_batching_stats()["batches"] == 1
        ctx.set_request_batching(0)
        assert ctx.request_batching_stats() == {"max_batch": 0, "max_wait_ms": 0, "batches": 0, "batch_sizes": [],
                                                "waited_ms_max": 0.0, "waited_ms_mean": 0.0, "unbatched": 0}


def test_bad_values_raise():
    with Context(MODEL) as ctx:
        with pytest.raises(ParakeetError, match="must not be negative"):
            ctx.set_request_batching(-1)
        with pytest.raises(ParakeetError, match="must not be negative"):
            ctx.set_request_batching(4, -1)
        with pytest.raises(InvalidArgument, match="max_batch must be an integer"):
            ctx.set_request_batching("4")
    with pytest.raises(InvalidArgument, match=r"request_batching must be \(max_batch, max_wait_ms\)"):
        Context(MODEL, request_batching=4)
