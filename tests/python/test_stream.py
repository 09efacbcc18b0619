"""``Context.stream``: results that do not depend on how the audio is cut into feeds, equal to
the C stream's, the same for int16 and resampled input, and the stream's lifetime and errors."""

import math

import numpy as np
import pytest
import soxr

from parakeet_py import Context, ParakeetError, Stream, StreamUpdate, _native, load_audio
from stream_helpers import LONG, MODELS, SMALL, SPEECH, per_test_limit, run_stream

pytestmark = pytest.mark.skipif(not all(p.exists() for p in MODELS.values()), reason="fixture models missing")


_bounded = per_test_limit(120)


@pytest.fixture(scope="module")
def speech():
    return load_audio(SPEECH)


def c_stream_text(ctx, audio, options, feed_samples):
    """The transcript by the C ABI's text functions alone (parakeet_capi_stream_feed/_finalize)."""
    ffi, lib = _native.load()
    with ctx._using() as ptr:
        s = lib.parakeet_capi_stream_begin_with(ptr, options.encode())
        assert s != ffi.NULL, _native.last_error()
        try:
            parts = []
            eou = ffi.new("int*")
            for begin in range(0, len(audio), feed_samples):
                block = np.ascontiguousarray(audio[begin:begin + feed_samples])
                out = lib.parakeet_capi_stream_feed(s, ffi.from_buffer("float[]", block), block.size, eou)
                assert out != ffi.NULL, _native.last_error()
                parts.append(_native.take_string(out))
                assert eou[0] == 0  # offline Parakeet vocabularies have no <EOU>/<EOB>
            out = lib.parakeet_capi_stream_finalize(s)
            assert out != ffi.NULL, _native.last_error()
            parts.append(_native.take_string(out))
            events = ffi.new("parakeet_stream_event**")
            assert lib.parakeet_capi_stream_drain_events(s, events) == 0
        finally:
            lib.parakeet_capi_stream_free(s)
    return "".join(parts)


@pytest.mark.parametrize("model", ["tdt", "rnnt", "ctc"])
def test_result_does_not_depend_on_the_feed_sizes(model, speech):
    audio = speech[:3 * 16000]
    with Context(MODELS[model]) as ctx:
        whole = run_stream(ctx.stream(**SMALL), audio, [len(audio)])
        assert whole[0].strip(), "the random model decoded nothing: the comparison would prove little"
        assert len(whole[3]) == 2
        for sizes in ([1], [160, 7, 3333], [6400]):
            cut = run_stream(ctx.stream(**SMALL), audio, sizes)
            assert cut[:3] == whole[:3], f"feeds of {sizes} samples"


@pytest.mark.parametrize("model", ["tdt", "ctc"])
def test_python_stream_equals_the_c_stream(model, speech):
    with Context(MODELS[model]) as ctx:
        options = '{"chunk_sec": 0.4, "left_sec": 1.2, "right_sec": 0.4}'
        expected = c_stream_text(ctx, speech, options, 4000)
        text, words, tokens, updates = run_stream(ctx.stream(**SMALL), speech, [1234])
    assert text == expected
    assert "".join(u.text for u in updates).split() == [w.text for w in words]


def test_updates_report_progress_and_final_times(speech):
    with Context(MODELS["tdt"]) as ctx:
        text, words, tokens, updates = run_stream(ctx.stream(**SMALL), speech, [8000])
    audio_sec = [u.audio_sec for u in updates]
    final_sec = [u.final_sec for u in updates]
    assert audio_sec == sorted(audio_sec) and final_sec == sorted(final_sec)
    assert all(f <= a + 1e-9 for f, a in zip(final_sec, audio_sec))
    assert audio_sec[-1] == pytest.approx(len(speech) / 16000, abs=1e-3)
    assert updates[-1].finalized and not any(u.finalized for u in updates[:-1])
    assert updates[-1].partial == ""
    chunks = [u.chunks for u in updates]
    seconds = len(speech) / 16000
    assert chunks == sorted(chunks)
    assert chunks[-1] == 1 + math.ceil((seconds - SMALL["chunk"] - SMALL["right"]) / SMALL["chunk"])
    # Words come in time order and inside the audio that was final when they were reported.
    starts = [w.start for w in words]
    assert starts == sorted(starts)
    for u in updates:
        for w in u.words:
            assert w.end <= u.final_sec + 1e-6 or u.finalized
    assert all(isinstance(u, StreamUpdate) for u in updates)


def test_the_default_settings_are_nemos_10_2_2():
    audio = load_audio(LONG)[:12 * 16000]
    with Context(MODELS["tdt"]) as ctx:
        default = run_stream(ctx.stream(), audio, [16000])
        explicit = run_stream(ctx.stream(chunk=2.0, left=10.0, right=2.0), audio, [16000])
        other = run_stream(ctx.stream(chunk=1.0, left=2.0, right=0.5), audio, [16000])
    assert default[:3] == explicit[:3]
    # NeMo's schedule: the first chunk ends at chunk + right, each next one chunk later, the
    # last at the end of the audio.
    assert default[3][-1].chunks == 1 + math.ceil((12 - 2 - 2) / 2) == 5
    assert other[3][-1].chunks == 1 + math.ceil((12 - 1 - 0.5) / 1) == 12
    assert default[0] != other[0]


def test_int16_and_stereo_input_are_converted_as_transcribe_converts_them(speech):
    pcm16 = np.round(speech[:2 * 16000] * 32767).astype(np.int16)
    with Context(MODELS["tdt"]) as ctx:
        from_int = run_stream(ctx.stream(**SMALL), pcm16, [3000])
        from_float = run_stream(ctx.stream(**SMALL), pcm16.astype(np.float32) / 32768, [3000])
        stereo = np.stack([pcm16, pcm16], axis=1)
        from_stereo = run_stream(ctx.stream(**SMALL), stereo, [3000])
    assert from_int[:3] == from_float[:3] == from_stereo[:3]


def test_other_rates_are_resampled_like_the_whole_signal(speech):
    audio = speech[:3 * 16000]
    at_24k = soxr.resample(audio, 16000, 24000, "HQ").astype(np.float32)
    with Context(MODELS["tdt"]) as ctx:
        resampled = run_stream(ctx.stream(**SMALL, sample_rate=24000), at_24k, [2400, 1, 999])
        reference = soxr.resample(at_24k, 24000, 16000, "HQ").astype(np.float32)
        direct = run_stream(ctx.stream(**SMALL), reference, [len(reference)])
    assert resampled[:3] == direct[:3]
    assert resampled[3][-1].audio_sec == pytest.approx(len(reference) / 16000, abs=1e-3)


def test_stream_text_property_and_context_manager(speech):
    with Context(MODELS["tdt"]) as ctx:
        with ctx.stream(**SMALL) as s:
            assert isinstance(s, Stream) and not s.closed and s.text == ""
            parts = [s.feed(speech[:16000]).text, s.finalize().text]
            assert s.text == "".join(parts) and s.finalized
        assert s.closed
        with pytest.raises(ParakeetError, match="closed"):
            s.feed(speech[:100])
        s.close()  # idempotent


def test_closing_the_context_closes_its_streams(speech):
    ctx = Context(MODELS["tdt"])
    s = ctx.stream(**SMALL)
    s.feed(speech[:16000])
    ctx.close()
    assert s.closed
    with pytest.raises(ParakeetError, match="closed"):
        s.feed(speech[:100])
    with pytest.raises(ParakeetError, match="closed"):
        ctx.stream()


@pytest.mark.parametrize("rate", [16000, 24000])
def test_no_audio_after_finalize(rate, speech):
    with Context(MODELS["tdt"]) as ctx, ctx.stream(**SMALL, sample_rate=rate) as s:
        s.feed(speech[:4000])
        s.finalize()
        with pytest.raises(ParakeetError):
            s.feed(speech[:4000])


def test_bad_settings_and_audio_are_errors(speech):
    with Context(MODELS["tdt"]) as ctx:
        for kwargs in ({"chunk": 0.0}, {"chunk": 0.01}, {"left": -1.0}, {"right": 601.0}):
            with pytest.raises(ParakeetError) as err:
                ctx.stream(**kwargs)
            assert err.value.message  # the library's reason
        with pytest.raises(ParakeetError, match="chunk must be a number"):
            ctx.stream(chunk="2")
        with pytest.raises(ParakeetError, match="unknown decoder"):
            ctx.stream(decoder="beam")
        with pytest.raises(ParakeetError):
            ctx.stream(decoder="ctc")  # the TDT-only fixture has no CTC head
        with ctx.stream(**SMALL) as s:
            with pytest.raises(ParakeetError, match="numpy array"):
                s.feed(b"\x00\x01")
            bad = speech[:1000].copy()
            bad[700] = np.nan
            with pytest.raises(ParakeetError, match="finite"):
                s.feed(bad)
        with ctx.stream(**SMALL, sample_rate=8000) as s:
            with pytest.raises(ParakeetError, match="sample 700 is not a finite"):
                s.feed(bad)


def test_a_hybrid_model_streams_either_head(speech):
    audio = speech[:2 * 16000]
    with Context(MODELS["hybrid_tdt_ctc"]) as ctx:
        default = run_stream(ctx.stream(**SMALL), audio, [4000])
        tdt = run_stream(ctx.stream(**SMALL, decoder="tdt"), audio, [4000])
        ctc = run_stream(ctx.stream(**SMALL, decoder="ctc"), audio, [4000])
    assert default[:3] == tdt[:3]
    assert ctc[0] != tdt[0]
