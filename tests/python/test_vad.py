"""Silero VAD v6 in libparakeet against Silero itself: the package's ONNX converted by our
converter, probabilities against onnxruntime, segments against get_speech_timestamps, streams
against the one-shot call, and bad input."""

import json
import os
import platform
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
pytest.importorskip("silero_vad.utils_vad")  # needs torch

import parakeet_py  # noqa: E402
from parakeet_py import InvalidArgument, InvalidAudio, ParakeetError, Unsupported  # noqa: E402
from parakeet_py.convert.silero_onnx import convert_silero_onnx  # noqa: E402
from parakeet_py.vad import Vad, package_onnx  # noqa: E402
from vad_helpers import CHUNK, noise, onnx_probabilities, silence, silero_segments, speech_with_pauses  # noqa: E402


@pytest.fixture(scope="module")
def vad_files(tmp_path_factory) -> dict:
    d = tmp_path_factory.mktemp("vad")
    files = {t: d / f"silero-{t}.gguf" for t in ("f32", "f16")}
    for t, p in files.items():
        convert_silero_onnx(package_onnx(), p, t)
    files["f16_pcpp"] = d / "silero-f16-pcpp.gguf"  # parakeet.cpp's f16 layout: every weight f16
    convert_silero_onnx(package_onnx(), files["f16_pcpp"], "f16", keep_f32=())
    return files


@pytest.fixture(scope="module")
def vad(vad_files):
    with Vad(vad_files["f32"]) as v:
        yield v


def clips(audio_dir, rate):
    return {"speech": speech_with_pauses(audio_dir, rate), "noise": noise(rate), "silence": silence(rate)}


@pytest.mark.parametrize("rate", [16000, 8000])
def test_probabilities_match_onnxruntime(vad, audio_dir, rate):
    for name, audio in clips(audio_dir, rate).items():
        ours = vad.probabilities(audio, rate)
        ref = onnx_probabilities(audio, rate)
        assert len(ours) == len(ref) == -(-len(audio) // CHUNK[rate])
        assert np.max(np.abs(ours - ref)) < 1e-4, name


def test_every_kernel_level_matches_onnxruntime_and_a_foreign_one_is_refused(vad_files, audio_dir, monkeypatch):
    # PARAKEET_CPU picks the VAD's kernel level as it picks the other kinds': each level this
    # CPU has gives Silero's probabilities, and a level of the other architecture is refused.
    x86 = platform.machine().lower() in ("x86_64", "amd64")
    own, foreign = (("scalar", "avx2", "avx512"), "neon") if x86 else (("scalar", "neon", "dotprod", "i8mm"), "avx2")
    audio = speech_with_pauses(audio_dir, 16000)
    ref = onnx_probabilities(audio, 16000)
    ran = []
    for level in own:
        monkeypatch.setenv("PARAKEET_CPU", level)
        try:
            v = Vad(vad_files["f32"])
        except Unsupported:
            continue  # a level above this CPU's own
        with v:
            assert np.max(np.abs(v.probabilities(audio, 16000) - ref)) < 1e-4, level
        ran.append(level)
    assert ran[:1] == ["scalar"], ran
    monkeypatch.setenv("PARAKEET_CPU", foreign)
    with pytest.raises(Unsupported, match=foreign):
        Vad(vad_files["f32"])


@pytest.mark.parametrize("rate", [16000, 8000])
def test_f16_files_are_close(vad_files, audio_dir, rate):
    audio = speech_with_pauses(audio_dir, rate)
    ref = onnx_probabilities(audio, rate)
    with Vad(vad_files["f16"]) as v:
        assert np.max(np.abs(v.probabilities(audio, rate) - ref)) < 5e-3
    # parakeet.cpp's published f16 layout loads too; encoder.1 in f16 costs ~1e-2 (docs/vad.md).
    with Vad(vad_files["f16_pcpp"]) as v:
        assert np.max(np.abs(v.probabilities(audio, rate) - ref)) < 3e-2


def frames_apart(ours, theirs, rate):
    """Largest boundary distance in frames between our segments (seconds) and Silero's (samples)."""
    assert len(ours) == len(theirs), (ours, theirs)
    worst = 0.0
    for a, b in zip(ours, theirs):
        for k in ("start", "end"):
            worst = max(worst, abs(a[k] * rate - b[k]) / CHUNK[rate])
    return worst


OPTION_SETS = [
    ({}, {}),
    ({"threshold": 0.6, "min_pause": 0.3, "min_speech": 0.1, "speech_pad": 0.1},
     {"threshold": 0.6, "min_silence_duration_ms": 300, "min_speech_duration_ms": 100, "speech_pad_ms": 100}),
    ({"threshold": 0.3, "neg_threshold": 0.2, "min_pause": 0.05, "speech_pad": 0.0},
     {"threshold": 0.3, "neg_threshold": 0.2, "min_silence_duration_ms": 50, "speech_pad_ms": 0}),
    ({"max_segment": 2.0}, {"max_speech_duration_s": 2.0}),
]


@pytest.mark.parametrize("rate", [16000, 8000])
@pytest.mark.parametrize("ours_opts,silero_opts", OPTION_SETS)
def test_segments_equal_get_speech_timestamps(vad, audio_dir, rate, ours_opts, silero_opts):
    audio = speech_with_pauses(audio_dir, rate)
    ours = vad.segments(audio, rate, **ours_opts)
    # On Silero's own probabilities (onnxruntime's), within one frame at every boundary ...
    theirs = silero_segments(onnx_probabilities(audio, rate), rate, len(audio), **silero_opts)
    assert len(theirs) >= 3
    assert frames_apart(ours, theirs, rate) <= 1.0
    # ... and on ours, to the sample (6 decimals of seconds hold every sample).
    exact = silero_segments(vad.probabilities(audio, rate), rate, len(audio), **silero_opts)
    assert [(round(s["start"] * rate), round(s["end"] * rate)) for s in ours] == \
        [(s["start"], s["end"]) for s in exact]


def test_noise_and_silence_segments(vad, audio_dir):
    for name in ("noise", "silence"):
        audio = clips(audio_dir, 16000)[name]
        probs = vad.probabilities(audio, 16000)
        exact = silero_segments(probs, 16000, len(audio))
        assert [(round(s["start"] * 16000), round(s["end"] * 16000)) for s in vad.segments(audio, 16000)] == \
            [(s["start"], s["end"]) for s in exact]
    assert vad.segments(silence(16000), 16000) == []


def test_multiple_of_16k_is_decimated_like_silero(vad, audio_dir):
    audio = speech_with_pauses(audio_dir, 16000)
    up = np.repeat(audio, 3)  # 48 kHz whose every third sample is the 16 kHz clip
    assert np.array_equal(vad.probabilities(up, 48000), vad.probabilities(audio, 16000))
    assert vad.segments(up, 48000) == vad.segments(audio, 16000)


def stream_all(vad, audio, rate, cuts, **opts):
    probs, events = [], []
    with vad.stream(rate, **opts) as s:
        pos = 0
        for c in cuts:
            r = s.feed(audio[pos:pos + c])
            assert r["first_frame"] == len(probs)
            probs += r["probabilities"]
            events += r["events"]
            pos += c
        r = s.feed(audio[pos:], is_last=True)
        probs += r["probabilities"]
        events += r["events"]
    return np.array(probs, np.float32), events


@pytest.mark.parametrize("rate", [16000, 8000])
@pytest.mark.parametrize("opts", [{}, {"min_pause": 0.02, "speech_pad": 0.1}])
def test_stream_is_bit_identical_and_events_are_segments(vad, audio_dir, rate, opts):
    audio = speech_with_pauses(audio_dir, rate)
    # one-shot calls compute the chunks' features on the default thread budget (the physical
    # cores, PARAKEET_THREADS), streams on one thread
    whole = vad.probabilities(audio, rate)
    segments = vad.segments(audio, rate, **opts)
    rng = np.random.default_rng(3)
    cuttings = [[len(audio)], [1] * 700 + [CHUNK[rate] - 1] * 5, list(rng.integers(0, 3000, 200)),
                [CHUNK[rate]] * 40 + [7, 0, 0, 1025]]
    for cuts in cuttings:
        probs, events = stream_all(vad, audio, rate, cuts, **opts)
        assert probs.tobytes() == whole.tobytes()
        assert [e["type"] for e in events] == ["start", "end"] * len(segments)
        assert [(events[i]["time"], events[i + 1]["time"]) for i in range(0, len(events), 2)] == \
            [(s["start"], s["end"]) for s in segments]


def test_stream_events_come_before_the_end(vad, audio_dir):
    """Events are emitted once final, not all at is_last."""
    audio = speech_with_pauses(audio_dir, 16000)
    with vad.stream(16000) as s:
        early = s.feed(audio)["events"]
        assert len(early) >= 4
        s.finish()
        with pytest.raises(InvalidArgument, match="already finished"):
            s.feed(audio[:10])
        s.reset()
        assert s.feed(audio)["events"] == early


def test_segments_mode_caps_pieces_at_pauses(vad, audio_dir):
    audio = speech_with_pauses(audio_dir, 16000)
    speech = vad.segments(audio, 16000)
    pieces = vad.segments(audio, 16000, mode="segments", max_segment=4.0)
    assert 1 <= len(pieces) < len(speech)
    starts = {s["start"] for s in speech}
    ends = {s["end"] for s in speech}
    for p in pieces:
        assert p["start"] in starts and p["end"] in ends
        single = {"start": p["start"], "end": p["end"]} in speech
        assert p["end"] - p["start"] <= 4.0 or single  # only a lone long segment exceeds the cap


@pytest.mark.parametrize("options,message", [
    ({"threshold": 0}, "out of range"), ({"threshold": 1.5}, "out of range"),
    ({"min_pause": -1}, "out of range"), ({"speech_pad": 11}, "out of range"),
    ({"max_segment": 0.5}, "out of range"), ({"mode": "words"}, "mode"),
    ({"threshold": 0.4, "neg_threshold": 0.5}, "neg_threshold"), ({"bogus": 1}, "unknown key"),
    ({"threshold": "high"}, "number"),
])
def test_malformed_options_are_errors(vad, options, message):
    with pytest.raises(InvalidArgument, match=message):
        vad.segments(np.zeros(1000, np.float32), 16000, **options)


def test_raw_malformed_json_is_an_error(vad):
    from parakeet_py import _native

    ffi, lib = _native.load()
    buf = np.zeros(512, np.float32)
    for bad in (b"{", b"[1]", b'{"threshold": 0.5,}', b'{"threshold": 0.5} x'):
        assert lib.parakeet_capi_vad_pcm_json(vad._ptr, ffi.from_buffer("float[]", buf), 512, 16000, bad) == ffi.NULL
        assert lib.parakeet_capi_thread_last_error_code() == 1  # INVALID_ARGUMENT


def test_wrong_rates(vad):
    for rate in (44100, 22050, 48000, 0, -8000):
        with pytest.raises(InvalidAudio, match="16000 or 8000"):
            vad.stream(rate)
    # One-shot: other rates are resampled by the binding; the library itself refuses them.
    from parakeet_py import _native

    ffi, lib = _native.load()
    buf = np.zeros(4410, np.float32)
    assert lib.parakeet_capi_vad_pcm_json(vad._ptr, ffi.from_buffer("float[]", buf), 4410, 44100, ffi.NULL) == ffi.NULL
    assert "resample first (parakeet_capi_vad_path_json and" in ffi.string(lib.parakeet_capi_thread_last_error()).decode()
    assert lib.parakeet_capi_vad_stream_begin(vad._ptr, 44100, ffi.NULL) == ffi.NULL
    assert "parakeet_capi_vad_path_json" in ffi.string(lib.parakeet_capi_thread_last_error()).decode()
    assert len(vad.probabilities(buf, 44100)) == 4  # 0.1 s → 1600 samples at 16 kHz → 4 frames


def test_vad_path_json(vad, speech_wav):
    from parakeet_py import _native
    import soundfile as sf

    ffi, lib = _native.load()
    doc = json.loads(_native.string_result(lib.parakeet_capi_vad_path_json(vad._ptr, str(speech_wav).encode(), b"{}")))
    audio, sr = sf.read(str(speech_wav), dtype="float32")
    assert doc["segments"] == vad.segments(audio, sr)
    assert doc["duration"] == pytest.approx(len(audio) / sr, abs=1e-6)


def test_vad_path_json_mixes_down_and_resamples_a_44k_stereo_file(vad, model_path, audio_dir, tmp_path):
    """A path call reads the file itself, so it takes what the transcription path calls take: a
    44.1 kHz stereo WAV is mixed down and resampled to 16 kHz by the library. Its segments are
    those the VAD cut finds in the same mono audio handed over as PCM at 44.1 kHz (the cut
    resamples with the same resampler), and near those of the binding's soxr resampling."""
    import soundfile as sf
    import soxr

    from parakeet_py import Context, _native

    x = np.ascontiguousarray(soxr.resample(speech_with_pauses(audio_dir, 16000), 16000, 44100, "HQ"), np.float32)
    side = np.random.default_rng(0).uniform(-0.05, 0.05, x.size).astype(np.float32)
    stereo = np.stack([x + side, x - side], axis=1)
    wav = tmp_path / "stereo_44k.wav"
    sf.write(str(wav), stereo, 44100, subtype="FLOAT")
    mono = np.ascontiguousarray(stereo.sum(axis=1) / np.float32(2))  # the WAV reader's mix-down
    options = b'{"max_segment": 30}'  # the VAD cut's default

    ffi, lib = _native.load()
    doc = json.loads(_native.string_result(lib.parakeet_capi_vad_path_json(vad._ptr, str(wav).encode(), options)))
    assert doc["sample_rate"] == 16000
    assert doc["duration"] == pytest.approx(x.size / 44100, abs=1e-6)
    with Context(model_path) as ctx, ctx._using() as ptr:
        cut = json.loads(_native.string_result(lib.parakeet_capi_transcribe_pcm_json_vad_with(
            ptr, vad.handle(), ffi.from_buffer("float[]", mono), mono.size, 44100, 0, options)))
    assert len(doc["segments"]) > 1
    assert doc["segments"] == cut["segments"]
    soxr_segments = vad.segments(mono, 44100, max_segment=30.0)
    assert len(soxr_segments) == len(doc["segments"])
    for got, want in zip(doc["segments"], soxr_segments):  # within two 32 ms frames
        assert abs(got["start"] - want["start"]) <= 0.064 and abs(got["end"] - want["end"]) <= 0.064


def test_kinds_are_refused(vad_files, model_path, speech_wav):
    from parakeet_py import Context, _native

    with pytest.raises(Unsupported, match="VAD model, not a speech-recognition"):
        Context(vad_files["f32"])
    with pytest.raises(InvalidArgument, match="not a Silero VAD model"):
        Vad(model_path)
    ffi, lib = _native.load()
    asr = lib.parakeet_capi_load(str(model_path).encode())
    try:
        assert lib.parakeet_capi_vad_stream_begin(asr, 16000, ffi.NULL) == ffi.NULL
        assert "ASR model, not a Silero VAD model" in ffi.string(lib.parakeet_capi_thread_last_error()).decode()
        assert lib.parakeet_capi_vad_path_json(asr, str(speech_wav).encode(), ffi.NULL) == ffi.NULL
        assert lib.parakeet_capi_thread_last_error_code() == 4  # UNSUPPORTED
    finally:
        lib.parakeet_capi_free(asr)
    v = lib.parakeet_capi_load(str(vad_files["f32"]).encode())
    try:
        assert lib.parakeet_capi_model_kind(v) == 5
        assert lib.parakeet_capi_transcribe_path(v, str(speech_wav).encode(), 0) == ffi.NULL
        assert lib.parakeet_capi_thread_last_error_code() == 4
    finally:
        lib.parakeet_capi_free(v)


def test_corrupt_and_truncated_files(vad_files, tmp_path):
    data = Path(vad_files["f32"]).read_bytes()
    cases = {"truncated": data[: len(data) // 2], "header": data[:40], "garbage": b"GGUF" + bytes(200)}
    # A tensor renamed away: well-formed GGUF, not a Silero file.
    cases["renamed"] = data.replace(b"vad8k.decoder.rnn.weight_hh", b"vad8k.decoder.rnn.weight_xx")
    # A framing key with another value.
    i = data.index(b"silero_vad.16000.chunk_samples") + len(b"silero_vad.16000.chunk_samples")
    cases["framing"] = data[:i + 4] + (1024).to_bytes(4, "little") + data[i + 8:]
    for name, blob in cases.items():
        p = tmp_path / f"{name}.gguf"
        p.write_bytes(blob)
        with pytest.raises(ParakeetError) as e:
            Vad(p)
        assert str(p) in str(e.value) or name == "garbage", (name, str(e.value))


def test_default_model_converts_once(tmp_path):
    p = parakeet_py.vad.default_model(directory=tmp_path)
    mtime = os.stat(p).st_mtime_ns
    assert parakeet_py.vad.default_model(directory=tmp_path) == p
    assert os.stat(p).st_mtime_ns == mtime
    with Vad(p) as v:
        assert v.segments(np.zeros(16000, np.float32), 16000) == []


def test_a_basis_that_is_no_windowed_dft_runs_the_dense_product(vad_files, audio_dir, tmp_path):
    """The FFT path is taken only for a windowed-DFT basis (checked at load to 1e-6); one basis
    value moved by 1e-5 sends the file down the dense product, which still matches Silero."""
    import gguf

    data = bytearray(Path(vad_files["f32"]).read_bytes())
    reader = gguf.GGUFReader(vad_files["f32"])
    for name in ("vad16k.stft.forward_basis_buffer", "vad8k.stft.forward_basis_buffer"):
        t = next(t for t in reader.tensors if t.name == name)
        at = int(t.data_offset) + 4 * (int(t.shape[0]) + 3)  # row 1, column 3
        value = np.frombuffer(bytes(data[at:at + 4]), np.float32)[0] + np.float32(1e-5)
        data[at:at + 4] = np.float32(value).tobytes()
    p = tmp_path / "dense.gguf"
    p.write_bytes(bytes(data))
    with Vad(p) as dense:
        for rate in (16000, 8000):
            audio = speech_with_pauses(audio_dir, rate)
            ref = onnx_probabilities(audio, rate)
            got = dense.probabilities(audio, rate)
            assert np.max(np.abs(got - ref)) < 1e-4
            with Vad(vad_files["f32"]) as fft:
                assert not np.array_equal(got, fft.probabilities(audio, rate))  # another path ran
