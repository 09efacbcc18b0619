"""Stream groups through the Python binding (``Context.stream_group``): streams fed from their
own threads in a group get the updates they get alone; members that all wait run as one
batch; leaving, closing and misuse behave as documented. On the cache-aware fixture models, and
on offline ones streamed with buffered windows."""

import threading

import pytest

from data_helpers import CACHE_AWARE_MODELS, MODELS, SPEECH
from parakeet_py import Context, InvalidArgument, ParakeetError, StreamGroup, load_audio
from stream_helpers import run_stream

pytestmark = pytest.mark.skipif(not all(p.exists() for p in CACHE_AWARE_MODELS.values()),
                                reason="cache-aware fixture models missing")
EOU, HYBRID = CACHE_AWARE_MODELS["ca_eou"], CACHE_AWARE_MODELS["ca_hybrid"]


@pytest.fixture(scope="module")
def speech():
    return load_audio(SPEECH)


def pieces(speech):
    """Four streams' audio: parts of the clip of different lengths."""
    return [speech[:48000], speech[20000:60000], speech[5000:29000], speech[70000:]]


# Short buffered windows (left, chunk, right seconds), so that the clips make many chunks.
WINDOW = (1.0, 0.5, 0.5)


def streamed(ctx, audio, group=None):
    """(text, updates as dicts) of one stream fed 0.1 s at a time, in `group` when given; an
    offline model's stream with the buffered WINDOW."""
    offline = ctx.info["streaming"]["mode"] == "buffered"
    left, chunk, right = WINDOW
    stream = ctx.stream(chunk, left, right) if offline else ctx.stream()
    if group is not None:
        group.join(stream)
    text, _, _, updates = run_stream(stream, audio, [1600])
    return text, [u.to_dict() for u in updates]


@pytest.mark.parametrize("model", [EOU, MODELS["tdt"], MODELS["hybrid_tdt_ctc"]], ids=["ca_eou", "tdt", "hybrid"])
def test_streams_on_threads_get_what_they_get_alone(speech, model):
    with Context(model) as ctx:
        alone = [streamed(ctx, a) for a in pieces(speech)]
        assert sum(len(t) for t, _ in alone) > 20, "the streams say something"
        with ctx.stream_group(max_batch=3, max_wait_ms=20) as group:
            got = [None] * len(alone)

            def run(i, audio):
                got[i] = streamed(ctx, audio, group)
            threads = [threading.Thread(target=run, args=(i, a)) for i, a in enumerate(pieces(speech))]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert got == alone
            assert len(group) == 0, "closed streams left the group"
            assert group.stats()["batches"] > 0


def test_members_that_all_wait_run_as_one_batch(speech):
    # Two members fed audio of one length (the same chunks), max_batch 2 and a minute of
    # max_wait: no chunk runs until both wait, so every batch holds both (or the test hangs).
    audio = [speech[:40000], speech[30000:70000]]
    with Context(HYBRID) as ctx:
        alone = [streamed(ctx, a) for a in audio]
        group = ctx.stream_group(max_batch=2, max_wait_ms=60000)
        streams = [ctx.stream(), ctx.stream()]
        for s in streams:
            group.join(s)
        assert len(group) == 2
        got = [None, None]

        def run(i):
            text, _, _, updates = run_stream(streams[i], audio[i], [1600])
            got[i] = (text, [u.to_dict() for u in updates])
        threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        stats = group.stats()
        group.close()
    assert got == alone
    assert stats["batches"] > 0 and stats["batch_sizes"] == [0, stats["batches"]], stats


def test_leave_and_close(speech):
    with Context(EOU) as ctx:
        group = ctx.stream_group()
        a, b = ctx.stream(), ctx.stream()
        group.join(a)
        group.join(b)
        group.leave(a)
        assert len(group) == 1
        with pytest.raises(ParakeetError, match="not in this group"):
            group.leave(a)
        a.feed(speech[:16000])  # runs alone
        group.close()  # b leaves first
        group.close()  # idempotent
        with pytest.raises(InvalidArgument, match="the stream group is closed"):
            group.join(a)
        b.feed(speech[:16000])
        b.close()
        with pytest.raises(InvalidArgument, match="the stream is closed"):
            ctx.stream_group().join(b)
    assert group.closed


def test_misuse_is_a_clear_error():
    with Context(EOU) as ctx, Context(HYBRID) as other, Context(MODELS["rnnt"]) as offline:
        with pytest.raises(ParakeetError, match="max_batch must be at least 1"):
            ctx.stream_group(max_batch=0)
        with pytest.raises(ParakeetError, match="max_wait_ms must not be negative"):
            ctx.stream_group(max_wait_ms=-1)
        with pytest.raises(InvalidArgument, match="max_batch must be an int"):
            ctx.stream_group(max_batch=2.5)
        group = ctx.stream_group()
        assert isinstance(group, StreamGroup)
        with pytest.raises(InvalidArgument, match="takes the Stream of a Context.stream"):
            group.join(object())
        with pytest.raises(ParakeetError, match="another context's model"):
            group.join(other.stream())
        s = ctx.stream()
        group.join(s)
        with pytest.raises(ParakeetError, match="in this group already"):
            group.join(s)
        with pytest.raises(ParakeetError, match="in another group"):
            ctx.stream_group().join(s)
        # An offline model's group takes its buffered streams, and only those.
        buffered = offline.stream_group()
        buffered.join(offline.stream())
        with pytest.raises(ParakeetError, match="another context's model"):
            buffered.join(ctx.stream())


def test_closing_the_context_closes_its_groups():
    ctx = Context(EOU)
    group = ctx.stream_group()
    s = ctx.stream()
    group.join(s)
    ctx.close()
    assert group.closed and s.closed
