"""Context.stream(diarizer=d): live "who said what" from Python (SpeakerStream, around the C
ABI's sas_stream_*) on the conversation fixture with the hybrid ASR fixture and the streaming
Sortformer fixture. The utterances equal what the C calls give when fed 0.1 s at a time
(through the raw cffi library here, no SpeakerStream), at every latency preset, and the words
and their speakers do not depend on how the audio is cut into feeds, at 16 kHz or at another rate; bad presets,
settings, diarizers and samples, a finished or closed stream are refused with typed errors."""

import gc

import numpy as np
import pytest
import soxr

from data_helpers import NEMO_DIR, conversation_pcm as pcm
from parakeet_py import Context, Diarizer, InvalidArgument, InvalidAudio, SpeakerStream, Unsupported, Utterance, _native

ASR = NEMO_DIR / "hybrid_tdt_ctc" / "model.gguf"
DIAR = NEMO_DIR / "sortformer_stream" / "model.gguf"
PRESETS = {"model": 0, "low": 1, "very_low": 2, "ultra_low": 3}
FEEDS = (1600, 8000, 80000)  # 0.1 s, 0.5 s, 5 s


@pytest.fixture(scope="module")
def asr():
    with Context(ASR) as ctx:
        yield ctx


@pytest.fixture(scope="module")
def diarizer():
    with Diarizer(DIAR) as d:
        yield d


def run(stream, x, feed):
    """Every utterance of the stream fed ``x`` ``feed`` samples at a time, then finished; and how
    many came before the finish."""
    got = []
    with stream as s:
        for at in range(0, len(x), feed):
            got += s.feed(x[at:at + feed])
        early = len(got)
        got += s.finish()
    assert all(isinstance(u, Utterance) for u in got)
    return got, early


def said(utterances):
    """(speaker, word) for every word, in order."""
    return [(u.speaker, word) for u in utterances for word in u.text.split()]


def c_utterances(asr, d, latency, x, feed):
    """The same through the C calls alone: sas_stream_begin_latency, _feed ``feed`` samples at a
    time, free_sas_results; times and confidences rounded as the binding documents."""
    ffi, lib = _native.load()
    got = []
    with asr._using() as ctx:
        s = lib.parakeet_capi_sas_stream_begin_latency(ctx, d.handle(), latency)
        assert s != ffi.NULL, _native.last_error()
        try:
            blocks = [np.ascontiguousarray(x[at:at + feed]) for at in range(0, len(x), feed)]
            for i, block in enumerate(blocks + [np.zeros(0, np.float32)]):  # then an empty last feed, as finish()
                out, n = ffi.new("parakeet_sas_result**"), ffi.new("int*")
                assert lib.parakeet_capi_sas_stream_feed(s, ffi.from_buffer("float[]", block), len(block),
                                                         int(i == len(blocks)), out, n) == 0, _native.last_error()
                got += [Utterance(out[0][i].speaker, ffi.string(out[0][i].text).decode(), round(out[0][i].start, 2),
                                  round(out[0][i].end, 2), round(out[0][i].conf, 4)) for i in range(n[0])]
                lib.parakeet_capi_free_sas_results(out[0], n[0])
        finally:
            lib.parakeet_capi_sas_stream_free(s)
    return got


@pytest.mark.parametrize("name", PRESETS)
def test_utterances_are_the_c_calls_and_do_not_depend_on_the_feeds(asr, diarizer, name):
    x = pcm()
    expected = c_utterances(asr, diarizer, PRESETS[name], x, 1600)
    runs = [run(asr.stream(diarizer=diarizer, latency=name), x, feed) for feed in FEEDS]
    assert runs[0][0] == expected
    # The same words with the same speakers for every feed size (a call hands out the runs of
    # one speaker among its own words, so a feed boundary may split a run: compare the words).
    assert [said(r[0]) for r in runs] == [said(expected)] * 3
    assert len(expected) > 2 and len({u.speaker for u in expected} - {-1}) >= 2
    assert all(u.text and u.start <= u.end and 0 <= u.confidence <= 1 for u in expected)
    if name != "model":  # the checkpoint's own chunks are long: on this clip everything commits at the end
        assert runs[0][1] > 0, "nothing committed before the finish"
    # parakeet.cpp's numbers are the same presets.
    assert run(asr.stream(diarizer=diarizer, latency=PRESETS[name]), x, 1600)[0] == expected


def test_other_rates_are_resampled_independently_of_the_feeds(asr, diarizer):
    x = soxr.resample(pcm(), 16000, 44100, quality="HQ").astype(np.float32)
    runs = [run(asr.stream(diarizer=diarizer, latency="low", sample_rate=44100), x, feed)[0]
            for feed in (4410, 22050, 220500)]
    assert said(runs[0]) == said(runs[1]) == said(runs[2])
    assert len({u.speaker for u in runs[0]} - {-1}) >= 2
    # int16 [frames, channels] arrays are taken as Stream.feed takes them.
    stereo = (np.repeat(pcm()[:, None], 2, axis=1) * 32767).astype(np.int16)
    assert run(asr.stream(diarizer=diarizer, latency="low"), stereo, 8000)[0]
    with pytest.raises(InvalidArgument, match="sample_rate"):
        asr.stream(diarizer=diarizer, sample_rate=0)


def test_bad_latencies_diarizers_and_settings_are_refused(asr, diarizer):
    with pytest.raises(InvalidArgument, match="unknown latency"):
        asr.stream(diarizer=diarizer, latency="fast")
    with pytest.raises(InvalidArgument, match="latency mode 7"):
        asr.stream(diarizer=diarizer, latency=7)
    for bad in (True, 1.5, [1]):
        with pytest.raises(InvalidArgument, match="latency"):
            asr.stream(diarizer=diarizer, latency=bad)
    with pytest.raises(InvalidArgument, match="latency= .* goes with diarizer="):
        asr.stream(latency="low")
    for not_a_diarizer in ("sortformer.gguf", asr):
        with pytest.raises(InvalidArgument, match="diarizer must be a Diarizer"):
            asr.stream(diarizer=not_a_diarizer)
    for setting in ({"chunk": 2.0}, {"left": 1.0}, {"right": 1.0}, {"att_context": [8, 1]}, {"decoder": "ctc"},
                    {"language": "en-US"}):
        with pytest.raises(InvalidArgument, match=f"{next(iter(setting))} do not go with it"):
            asr.stream(diarizer=diarizer, **setting)
    with Diarizer(NEMO_DIR / "sortformer_offline" / "model.gguf") as offline:
        with pytest.raises(Unsupported, match="per_feature"):  # whole-clip mel statistics cannot stream
            asr.stream(diarizer=offline)


@pytest.mark.parametrize("rate", [16000, 44100])
def test_a_finished_or_closed_stream_is_refused(asr, diarizer, rate):
    s = asr.stream(diarizer=diarizer, sample_rate=rate)
    assert isinstance(s, SpeakerStream) and s.latency == 0 and s.sample_rate == rate
    s.feed(np.zeros(rate, np.float32))
    s.finish()
    assert s.finished
    with pytest.raises(InvalidArgument, match="stream already finished"):
        s.feed(np.zeros(10, np.float32))
    with pytest.raises(InvalidArgument, match="stream already finished"):
        s.finish()
    s.close()
    s.close()  # idempotent
    with pytest.raises(InvalidArgument, match="the speaker stream is closed"):
        s.feed(np.zeros(10, np.float32))


def test_bad_samples_are_refused_and_take_nothing(asr, diarizer):
    x = pcm()
    expected = run(asr.stream(diarizer=diarizer, latency="low"), x, 8000)[0]
    with asr.stream(diarizer=diarizer, latency="low") as s:
        got = s.feed(x[:80000])
        bad = np.zeros(1000, np.float32)
        bad[7] = np.nan
        with pytest.raises(InvalidAudio, match="sample 80007 is not a finite number"):
            s.feed(bad)
        with pytest.raises(InvalidAudio):
            s.feed([0.0, 0.1])
        got += s.feed(x[80000:]) + s.finish()
    assert got == expected


def test_the_stream_keeps_its_context_and_diarizer_and_refuses_them_closed():
    s = Context(ASR).stream(diarizer=Diarizer(DIAR), latency="low")
    gc.collect()  # neither is referenced but by the stream
    assert len({u.speaker for u in run(s, pcm(), 80000)[0]}) >= 2
    with Context(ASR) as ctx:
        with Diarizer(DIAR) as d:
            s = ctx.stream(diarizer=d)
            s.feed(np.zeros(1600, np.float32))
        with pytest.raises(InvalidArgument, match="the speaker stream is closed"):  # closing the diarizer closed it
            s.feed(np.zeros(10, np.float32))
        s = ctx.stream(diarizer=Diarizer(DIAR))
        s.feed(np.zeros(1600, np.float32))
    assert s._ptr is None  # closing the context closed it too
    with pytest.raises(InvalidArgument, match="closed"):
        s.feed(np.zeros(10, np.float32))
