"""Context: loading, every audio input kind against the library's own paths, decoders,
timestamps, errors, closing, concurrency settings and transcribe_many."""

import io
import json
from pathlib import Path

import numpy as np
import pytest
import soundfile

from parakeet_py import Context, ParakeetError, Token, Transcript, Word, _native
from parakeet_py.convert import convert_nemo

from data_helpers import AUDIO, DATA, MODEL, MODELS, SPEECH

RNNT_NEMO = MODELS["rnnt"].with_name("model.nemo")
STEREO_44K = AUDIO / "speech_44k_stereo.wav"

pytestmark = pytest.mark.skipif(not MODEL.exists(), reason=f"{MODEL} has not been generated")


@pytest.fixture(scope="module")
def ctx():
    with Context(MODEL) as c:
        yield c


def c_json(ctx, path, decoder=0):
    """The library's own WAV path: parakeet_capi_transcribe_path_json."""
    ffi, lib = _native.load()
    ptr = lib.parakeet_capi_transcribe_path_json(ctx._ptr, str(path).encode(), decoder)
    assert ptr != ffi.NULL, _native.last_error()
    return json.loads(_native.take_string(ptr))


def assert_matches_c(t: Transcript, doc: dict):
    assert t.text == doc["text"]
    assert t.duration == doc["duration"] and t.frame_sec == doc["frame_sec"]
    assert [(k.id, k.start, k.confidence) for k in t.tokens] == [(d["id"], d["t"], d["conf"]) for d in doc["tokens"]]
    assert [k.duration for k in t.tokens] == [round(d["dur"] * doc["frame_sec"], 6) for d in doc["tokens"]]
    assert [(w.text, w.start, w.end, w.confidence) for w in t.words] == [
        (d["w"], d["start"], d["end"], d["conf"]) for d in doc["words"]]


def test_info_describes_the_model(ctx):
    assert ctx.info["arch"] == "hybrid_tdt_ctc"
    assert ctx.info["sample_rate"] == ctx.sample_rate == 16000
    assert ctx.info["has_ctc"] and ctx.info["has_transducer"]
    assert Path(ctx.info["path"]) == MODEL or ctx.info["path"] == str(MODEL)
    assert ctx.concurrency == 1 and ctx.working_set_bytes == 0
    assert "concurrency=1" in repr(ctx)


def test_16k_wav_path_equals_the_library_wav_path_exactly(ctx):
    t = ctx.transcribe(SPEECH)
    assert t.text and t.tokens and t.words
    assert_matches_c(t, c_json(ctx, SPEECH))


def test_44k_stereo_resampled_in_python_agrees_with_the_library_resampler(ctx):
    t = ctx.transcribe(STEREO_44K)
    doc = c_json(ctx, STEREO_44K)
    assert abs(t.duration - doc["duration"]) <= 0.001
    assert t.text  # soxr and the library's windowed-sinc resampler differ slightly, so allow some drift
    ids = [k.id for k in t.tokens]
    ref = [d["id"] for d in doc["tokens"]]
    same = sum(a == b for a, b in zip(ids, ref))
    assert abs(len(ids) - len(ref)) <= max(2, len(ref) // 10) and same >= 0.8 * len(ref)


def test_every_input_kind_gives_the_same_transcript(ctx):
    expected = ctx.transcribe(SPEECH)
    data = SPEECH.read_bytes()
    floats, rate = soundfile.read(SPEECH, dtype="float32")
    ints, _ = soundfile.read(SPEECH, dtype="int16")
    sources = [
        (str(SPEECH), None), (SPEECH, None), (data, None), (io.BytesIO(data), None),
        (floats, rate), (floats.astype(np.float64), rate), (ints, rate),
        (np.stack([floats, floats], axis=1), rate),  # identical channels mix down to the same signal
    ]
    for source, sr in sources:
        assert ctx.transcribe(source, sample_rate=sr) == expected


def test_flac_file_matches_the_wav(ctx, tmp_path):
    floats, rate = soundfile.read(SPEECH, dtype="int16")
    flac = tmp_path / "speech.flac"
    soundfile.write(flac, floats, rate, subtype="PCM_16")
    assert ctx.transcribe(flac) == ctx.transcribe(SPEECH)


def test_array_at_another_rate_is_resampled(ctx):
    floats, rate = soundfile.read(STEREO_44K, dtype="float32")
    t = ctx.transcribe(floats, sample_rate=rate)
    assert t == ctx.transcribe(STEREO_44K)


def test_timestamps_false_gives_the_same_text_without_tokens(ctx):
    full = ctx.transcribe(SPEECH)
    bare = ctx.transcribe(SPEECH, timestamps=False)
    assert bare.text == full.text and bare.tokens == [] and bare.words == []
    assert abs(bare.duration - full.duration) <= 0.001 and bare.frame_sec == full.frame_sec


def test_decoders(ctx):
    default = ctx.transcribe(SPEECH)
    for name in ("tdt", "rnnt", "transducer", "TDT", "default"):
        assert ctx.transcribe(SPEECH, decoder=name) == default
    ctc = ctx.transcribe(SPEECH, decoder="ctc")
    assert_matches_c(ctc, c_json(ctx, SPEECH, decoder=1))
    with pytest.raises(ParakeetError, match="unknown decoder 'beam'"):
        ctx.transcribe(SPEECH, decoder="beam")
    with pytest.raises(ParakeetError, match="unknown decoder"):
        ctx.transcribe(SPEECH, decoder=1)


def test_decoder_the_model_lacks_is_the_library_error(tmp_path):
    if not RNNT_NEMO.exists():
        pytest.skip("no rnnt fixture")
    gguf = tmp_path / "rnnt.gguf"
    convert_nemo(RNNT_NEMO, gguf)
    with Context(gguf) as c:
        assert not c.info["has_ctc"]
        c.transcribe(SPEECH, decoder="rnnt")
        with pytest.raises(ParakeetError) as err:
            c.transcribe(SPEECH, decoder="ctc")
        assert "ctc" in str(err.value).lower() and str(err.value) == _native.last_error()


def test_empty_and_tiny_audio(ctx):
    t = ctx.transcribe(np.zeros(0, np.float32), sample_rate=16000)
    assert t.text == "" and t.tokens == [] and t.duration == 0.0
    ctx.transcribe(np.zeros(1, np.float32), sample_rate=44100)  # resamples to nothing
    ctx.transcribe(AUDIO / "short_0p1s_16k.wav")


def test_transcript_values_and_to_dict(ctx):
    t = ctx.transcribe(SPEECH)
    assert all(isinstance(k, Token) for k in t.tokens) and all(isinstance(w, Word) for w in t.words)
    assert all(k.duration >= 0 and 0 <= k.confidence <= 1 for k in t.tokens)
    assert all(w.end >= w.start for w in t.words)
    d = t.to_dict()
    assert set(d) == {"text", "duration", "frame_sec", "attention", "words", "tokens"}
    assert d["attention"] == "full"  # auto on a short clip
    assert set(d["words"][0]) == {"text", "start", "end", "confidence"}
    assert set(d["tokens"][0]) == {"id", "start", "duration", "confidence"}
    json.dumps(d)
    with pytest.raises(Exception):
        t.tokens[0].id = 5  # frozen


@pytest.mark.parametrize("audio,kwargs,needle", [
    (np.array([0.0, 0.0, np.nan, 0.0], np.float32), {"sample_rate": 16000}, "sample 2 is not a finite number"),
    (np.array([np.inf, 0.0], np.float32), {"sample_rate": 22050}, "sample 0 is not a finite number"),
    ("/no/such/file.wav", {}, "/no/such/file.wav: no such file"),
    (b"\x00" * 100, {}, "cannot decode audio"),
    (np.zeros(10), {}, "sample_rate is required"),
])
def test_bad_input_errors(ctx, audio, kwargs, needle):
    with pytest.raises(ParakeetError) as err:
        ctx.transcribe(audio, **kwargs)
    assert needle in str(err.value)


def test_library_errors_carry_the_library_message(ctx):
    x = np.zeros(100, np.float32)
    x[37] = np.nan
    with pytest.raises(ParakeetError) as err:
        ctx.transcribe(x, sample_rate=16000)
    assert str(err.value) == "sample 37 is not a finite number (NaN or Inf)"


def test_load_errors():
    with pytest.raises(ParakeetError, match="cannot open"):
        Context(DATA / "nope.gguf")
    with pytest.raises(ParakeetError, match='not a GGUF file: it starts with "RIFF"'):
        Context(SPEECH)
    with pytest.raises(ParakeetError, match="must be a path"):
        Context(123)
    with pytest.raises(ParakeetError, match="concurrency must be a positive integer"):
        Context(MODEL, concurrency=0)
    with pytest.raises(ParakeetError, match="threads must be a positive integer"):
        Context(MODEL, threads=0)


def test_truncated_model_is_refused(tmp_path):
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(MODEL.read_bytes()[:5000])
    with pytest.raises(ParakeetError) as err:
        Context(cut)
    assert str(cut) in str(err.value)


def test_close_is_idempotent_and_later_calls_raise():
    c = Context(MODEL)
    c.close()
    c.close()
    assert c.closed and "closed" in repr(c)
    for call in (lambda: c.transcribe(SPEECH), lambda: c.working_set_bytes, lambda: c.set_concurrency(2),
                 lambda: c.transcribe_many([SPEECH])):
        with pytest.raises(ParakeetError, match="the context is closed"):
            call()
    with Context(MODEL) as c2:
        pass
    with pytest.raises(ParakeetError, match="closed"):
        c2.transcribe(SPEECH)


def test_set_concurrency_and_working_set():
    with Context(MODEL, concurrency=3, threads=1) as c:
        assert c.concurrency == 3
        c.transcribe(SPEECH)
        assert c.working_set_bytes > 0
        assert c.set_concurrency(2, 1) == 2 and c.concurrency == 2
        assert c.set_concurrency(1) == 1 and c.working_set_bytes == 0
        assert c.set_concurrency(100) == 64  # the library's cap
        assert c.set_concurrency(1, threads_each=1) == 1
        with pytest.raises(ParakeetError, match="backends must be a positive integer"):
            c.set_concurrency(0)
        with pytest.raises(ParakeetError, match="threads_each must be a positive integer"):
            c.set_concurrency(2, 0)
    _native.set_threads(0)


def test_results_do_not_depend_on_concurrency_or_threads(ctx):
    expected = ctx.transcribe(SPEECH)
    with Context(MODEL, concurrency=2, threads=2) as c:
        assert c.transcribe(SPEECH) == expected
    with Context(MODEL, threads=1) as c:
        assert c.transcribe(SPEECH) == expected
    _native.set_threads(0)


def test_transcribe_many_keeps_input_order():
    clips = sorted(AUDIO.glob("*.wav"))
    with Context(MODEL, concurrency=2) as c:
        one_by_one = [c.transcribe(p) for p in clips]
        floats, rate = soundfile.read(SPEECH, dtype="float32")
        items = clips + [(floats, rate), floats]
        many = c.transcribe_many(items, sample_rate=rate)
        assert many[:len(clips)] == one_by_one
        assert many[-1] == many[-2] == c.transcribe(SPEECH)
        assert c.transcribe_many(clips, workers=3, timestamps=False) == [
            Transcript(t.text, [], [], round(t.duration, 3), t.frame_sec) for t in one_by_one]
        assert c.transcribe_many([]) == []


def test_transcribe_many_failures():
    with Context(MODEL, concurrency=2) as c:
        items = [SPEECH, "/missing/a.wav", SPEECH, "/missing/b.wav"]
        out = c.transcribe_many(items, return_exceptions=True)
        assert isinstance(out[0], Transcript) and isinstance(out[2], Transcript)
        assert isinstance(out[1], ParakeetError) and "/missing/a.wav" in str(out[1])
        assert "/missing/b.wav" in str(out[3])
        with pytest.raises(ParakeetError) as err:
            c.transcribe_many(items)
        assert "/missing/a.wav" in str(err.value) and err.value.index == 1
        with pytest.raises(ParakeetError, match="workers must be a positive integer"):
            c.transcribe_many(items, workers=0)
