"""load_audio / prepare_audio: every input kind, mixing, scaling, resampling and the errors."""

import io
import tracemalloc

import numpy as np
import pytest
import soundfile
import soxr

from parakeet_py import ParakeetError, load_audio
from parakeet_py.audio import prepare_audio
from parakeet_py.audio.samples import BLOCK_FRAMES

from data_helpers import AUDIO, SPEECH
STEREO_44K = AUDIO / "speech_44k_stereo.wav"


def reference_samples(path):
    data, rate = soundfile.read(path, dtype="float64", always_2d=True)
    return data.mean(axis=1), rate


def sine(freq, rate, seconds, amp=0.5):
    t = np.arange(int(rate * seconds)) / rate
    return (amp * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def dominant_frequency(x, rate):
    spectrum = np.abs(np.fft.rfft(x * np.hanning(len(x))))
    return np.argmax(spectrum) * rate / len(x)


def test_wav_path_str_and_pathlike_give_float32_mono():
    a = load_audio(str(SPEECH))
    b = load_audio(SPEECH)
    ref, rate = reference_samples(SPEECH)
    assert rate == 16000
    assert a.dtype == np.float32 and a.ndim == 1 and a.flags["C_CONTIGUOUS"]
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(a, ref, atol=1e-7)


def test_bytes_bytearray_memoryview_and_file_object_match_the_path():
    expected = load_audio(SPEECH)
    data = SPEECH.read_bytes()
    for source in (data, bytearray(data), memoryview(data), io.BytesIO(data)):
        np.testing.assert_array_equal(load_audio(source), expected)
    with open(SPEECH, "rb") as f:
        np.testing.assert_array_equal(load_audio(f), expected)


@pytest.mark.parametrize("fmt,subtype,ext,tol", [
    ("FLAC", "PCM_16", "flac", 1e-7),
    ("OGG", "VORBIS", "ogg", 0.2),
    ("MP3", "MPEG_LAYER_III", "mp3", 0.3),
])
def test_compressed_formats_decode(tmp_path, fmt, subtype, ext, tol):
    if fmt not in soundfile.available_formats() or subtype not in soundfile.available_subtypes(fmt):
        pytest.skip(f"this libsndfile cannot write {fmt}/{subtype}")
    x = sine(440, 16000, 1.0)
    path = tmp_path / f"tone.{ext}"
    soundfile.write(path, x, 16000, format=fmt, subtype=subtype)
    y = load_audio(path)
    assert abs(len(y) - len(x)) <= 2000  # codecs may pad a frame
    assert abs(dominant_frequency(y, 16000) - 440) < 5
    if fmt == "FLAC":
        np.testing.assert_allclose(y, x, atol=1 / 32768 + 1e-7)


def test_stereo_44k_file_is_mixed_down_and_resampled():
    y = load_audio(STEREO_44K)
    ref, rate = reference_samples(STEREO_44K)
    assert rate == 44100
    assert abs(len(y) - round(len(ref) * 16000 / 44100)) <= 1
    # Same signal: correlate the mixdown resampled by soxr with a plain linear interpolation.
    t = np.arange(len(y)) * 44100 / 16000
    lin = np.interp(t, np.arange(len(ref)), ref)
    assert np.corrcoef(y, lin)[0, 1] > 0.95


def test_target_rate_resamples_and_keeps_the_pitch():
    x = sine(1000, 48000, 0.5)
    for target in (8000, 16000, 22050, 44100):
        y = load_audio(x, sample_rate=48000, target_rate=target)
        assert abs(len(y) - len(x) * target / 48000) <= 1
        assert abs(dominant_frequency(y, target) - 1000) < 5


@pytest.mark.parametrize("dtype,scale,offset", [
    (np.int16, 32768, 0), (np.int32, 2**31, 0), (np.int8, 128, 0), (np.uint8, 128, 128), (np.int64, 2**63, 0),
    (np.uint16, 32768, 32768),
])
def test_integer_arrays_are_scaled_to_unit_range(dtype, scale, offset):
    raw = np.array([0, 1, -1, 100, -100], dtype=np.int64)
    info = np.iinfo(dtype)
    values = np.clip(raw * (scale // 256 or 1) + offset, info.min, info.max).astype(dtype)
    y = prepare_audio(values, sample_rate=16000, target_rate=16000)
    expected = (values.astype(np.float64) - offset) / scale
    np.testing.assert_allclose(y, expected.astype(np.float32), rtol=1e-6, atol=1e-9)
    extremes = np.array([info.min, info.max], dtype=dtype)
    y = prepare_audio(extremes, sample_rate=16000)
    assert y[0] == -1.0 and 0.99 < y[1] <= 1.0


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_float_arrays_are_taken_as_they_are(dtype):
    x = np.array([0.25, -0.5, 1.5, -2.0], dtype=dtype)  # out-of-range floats pass unchanged
    np.testing.assert_array_equal(prepare_audio(x, sample_rate=16000), x.astype(np.float32))


def test_two_d_arrays_are_frames_by_channels_and_averaged():
    left = np.linspace(-1, 1, 100, dtype=np.float32)
    right = np.zeros(100, dtype=np.float32)
    y = prepare_audio(np.stack([left, right], axis=1), sample_rate=16000)
    np.testing.assert_allclose(y, left / 2, atol=1e-7)
    one = prepare_audio(left[:, None], sample_rate=16000)
    np.testing.assert_array_equal(one, left)
    non_contiguous = np.stack([left, right], axis=1)[::2]
    assert prepare_audio(non_contiguous, sample_rate=16000).flags["C_CONTIGUOUS"]


def _peak_traced_bytes(fn):
    """(result of fn(), peak bytes Python and numpy allocated while it ran)."""
    tracemalloc.start()
    try:
        result = fn()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# What blocks may add on top of the output, in units of one mono float32 block: a stereo block
# converted through float64 (4) into float32 (2), the previous float32 block (2), its mixdown,
# finiteness check and resampled chunk (~2), and some slack.
BLOCK_ALLOWANCE = 12 * BLOCK_FRAMES * 4


def test_long_stereo_file_is_loaded_without_whole_copies(tmp_path):
    # 2 min of 44.1 kHz stereo, 16 bit. Read whole, as float32 stereo plus its mixdown plus the
    # resampled output, it would take ~70 MB; block by block it is the 7.7 MB output and blocks.
    rate = 44100
    x = sine(300, rate, 120.0)
    path = tmp_path / "long.wav"
    soundfile.write(path, np.stack([x, -0.5 * x], axis=1), rate, subtype="PCM_16")
    del x
    y, peak = _peak_traced_bytes(lambda: load_audio(path))
    assert y.dtype == np.float32 and y.flags["C_CONTIGUOUS"] and y.flags["OWNDATA"]
    assert abs(len(y) - 120 * 16000) <= 1
    assert peak < y.nbytes + BLOCK_ALLOWANCE, (peak, y.nbytes)
    assert abs(dominant_frequency(y[:16000], 16000) - 300) < 5


def test_long_integer_array_is_converted_without_whole_copies():
    # A float64 copy of this int16 stereo array alone would be 4x its 21 MB.
    stereo = (np.stack([sine(300, 44100, 120.0)] * 2, axis=1) * 32767).astype(np.int16)
    y, peak = _peak_traced_bytes(lambda: prepare_audio(stereo, sample_rate=44100))
    assert abs(len(y) - 120 * 16000) <= 1
    assert peak < y.nbytes + BLOCK_ALLOWANCE, (peak, y.nbytes)
    same_rate, peak = _peak_traced_bytes(lambda: prepare_audio(stereo, sample_rate=16000))
    assert len(same_rate) == len(stereo)
    assert peak < same_rate.nbytes + BLOCK_ALLOWANCE, (peak, same_rate.nbytes)


def test_streamed_resampling_matches_soxr_on_the_whole_signal():
    # Several blocks, a ragged last one: the stream must give soxr.resample's samples exactly.
    x = np.random.default_rng(5).standard_normal(3 * BLOCK_FRAMES + 1234).astype(np.float32) * 0.2
    for rate in (8000, 44100, 48000):
        expected = soxr.resample(x, rate, 16000, quality="HQ")
        np.testing.assert_array_equal(prepare_audio(x, sample_rate=rate), expected)
    nan = x.copy()
    nan[2 * BLOCK_FRAMES + 7] = np.nan  # found in a later block, named by its position
    with pytest.raises(ParakeetError, match=f"sample {2 * BLOCK_FRAMES + 7} is not"):
        prepare_audio(nan, sample_rate=44100)


def test_empty_audio_gives_an_empty_array():
    assert prepare_audio(np.zeros(0, np.float32), sample_rate=16000).shape == (0,)
    assert prepare_audio(np.zeros(0, np.int16), sample_rate=44100).shape == (0,)


@pytest.mark.parametrize("source,kwargs,needle", [
    ("/definitely/not/here.wav", {}, "no such file"),
    (AUDIO, {}, "is a directory"),
    (b"this is not audio at all", {}, "cannot decode audio"),
    (b"", {}, "cannot decode audio"),
    (b"RIFF\x24\x00\x00\x00WAVEjunkjunk", {}, "cannot decode audio"),
    (12345, {}, "cannot read audio from a int"),
    (np.zeros(10), {}, "sample_rate is required"),
    (np.zeros(10), {"sample_rate": 0}, "positive integer"),
    (np.zeros(10), {"sample_rate": 16000.5}, "positive integer"),
    (str(SPEECH), {"sample_rate": 16000}, "only for audio arrays"),
    (np.zeros((2, 16000)), {"sample_rate": 16000}, "transpose"),
    (np.zeros((4, 4, 4)), {"sample_rate": 16000}, "1-D (mono) or 2-D"),
    (np.array(1.0), {"sample_rate": 16000}, "not a scalar"),
    (np.zeros((10, 0)), {"sample_rate": 16000}, "0 channels"),
    (np.array(["a", "b"]), {"sample_rate": 16000}, "real numbers"),
    (np.zeros(4, dtype=np.complex64), {"sample_rate": 16000}, "real numbers"),
    (np.array([0.0, np.nan, 0.0]), {"sample_rate": 16000}, "sample 1 is not a finite number"),
    (np.array([0.0, 0.0, np.inf]), {"sample_rate": 8000}, "sample 2 is not a finite number"),
])
def test_bad_inputs_raise_parakeet_error_with_a_clear_message(source, kwargs, needle):
    with pytest.raises(ParakeetError) as info:
        load_audio(source, **kwargs)
    assert needle in str(info.value)
    assert info.value.message == str(info.value)


def test_corrupt_file_on_disk_names_the_file(tmp_path):
    bad = tmp_path / "broken.wav"
    bad.write_bytes(b"RIFF" + b"\x00" * 40)
    with pytest.raises(ParakeetError, match="broken.wav: cannot decode audio"):
        load_audio(bad)


def test_nan_without_resampling_can_be_left_for_the_library():
    x = np.array([0.0, np.nan], dtype=np.float32)
    assert np.isnan(prepare_audio(x, sample_rate=16000, check_finite=False)[1])
    with pytest.raises(ParakeetError, match="sample 1"):  # resampling would smear it: always checked
        prepare_audio(x, sample_rate=8000, check_finite=False)
