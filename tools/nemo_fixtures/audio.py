"""Test clips: espeak-ng speech converted with sox, assembled with numpy, written as PCM WAV.

The clips are committed (tests/data/audio/); they are only rebuilt on request because another
espeak-ng or sox version may synthesise slightly different samples.
"""
import os
import subprocess
import tempfile
import wave

import numpy as np

SR = 16000
ESPEAK = ["espeak-ng", "-v", "en-us", "-s", "160"]

SPEECH_TEXT = (
    "The quick brown fox jumps over the lazy dog. "
    "Speech recognition turns spoken words into written text. "
    "This clip tests a transducer model."
)
ONE_SECOND_TEXT = "Hello world."
LONG_TEXTS = [
    "Every morning the river carries small boats past the quiet city.",
    "A good engine reads the signal, finds the words and writes them down.",
    "Some questions have long answers, and some answers raise new questions.",
    "The music in the garden was loud, but the night was calm and bright.",
    "After the meeting, everyone walked home together under the light rain.",
    "Numbers like seven hundred and twelve are read aloud as words.",
]
STEREO_LEFT_TEXT = "The left channel says one thing."
STEREO_RIGHT_TEXT = "While the right channel says another."

# name -> (file, sample rate, channels)
CLIPS = {
    "speech": ("speech_16k.wav", 16000, 1),
    "short_1s": ("short_1s_16k.wav", 16000, 1),
    "short_0p1s": ("short_0p1s_16k.wav", 16000, 1),
    "long_30s": ("long_30s_16k.wav", 16000, 1),
    "silence_2s": ("silence_2s_16k.wav", 16000, 1),
    "stereo_44k": ("speech_44k_stereo.wav", 44100, 2),
}

# Long clips, assembled from the committed clips rather than committed themselves:
# name -> (segments, n_samples). Each segment (file, first sample, gain) contributes the file's
# samples from `first` to its end, as float32 int16 / 32768 times the gain; the segments are
# concatenated and the result cut to n_samples. Alternating clips, start offsets and gains keeps
# stretches from repeating exactly. The gains have at most 3 significant bits, so every product
# is exact in float32 and any implementation rebuilds the same bits (tests/cpp/nemo_fixtures.h
# does, with the engine's WAV reader).
LONG_CLIPS = {
    "long_3min": ([
        ("speech_16k.wav", 0, 1.0),
        ("long_30s_16k.wav", 0, 0.75),
        ("speech_16k.wav", 8000, 0.5),
        ("long_30s_16k.wav", 24000, 1.0),
        ("speech_16k.wav", 16000, 0.875),
        ("long_30s_16k.wav", 48000, 0.625),
        ("speech_16k.wav", 24000, 0.75),
        ("long_30s_16k.wav", 72000, 0.5),
        ("speech_16k.wav", 32000, 1.0),
        ("long_30s_16k.wav", 96000, 0.875),
        ("speech_16k.wav", 40000, 0.625),
    ], 180 * SR),
}


def assemble_long_clip(audio_dir: str, name: str) -> np.ndarray:
    """The float32 16 kHz samples of LONG_CLIPS[name] (see there for the recipe)."""
    segments, n = LONG_CLIPS[name]
    parts = []
    for file, first, gain in segments:
        data, sr = read_wav(os.path.join(audio_dir, file))
        assert sr == SR and data.shape[1] == 1, file
        parts.append(data[first:, 0].astype(np.float32) / np.float32(32768.0) * np.float32(gain))
    out = np.concatenate(parts)
    assert out.shape[0] >= n, f"{name}: the segments give only {out.shape[0]} samples"
    return np.ascontiguousarray(out[:n])


def clip_checksum(samples: np.ndarray) -> str:
    """sum over i of (float32 bits of sample i) * (i + 1), modulo 2^64, as 16 hex digits: lets the
    C++ tests check that they rebuilt a long clip bit for bit (nemo_fixtures::clip_checksum)."""
    bits = np.ascontiguousarray(samples, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return f"{int((bits * np.arange(1, bits.shape[0] + 1, dtype=np.uint64)).sum(dtype=np.uint64)):016x}"


def _espeak(text: str, rate: int, workdir: str) -> np.ndarray:
    """espeak-ng (22050 Hz) -> sox (no dither, repeatable) -> int16 mono at `rate`."""
    raw = os.path.join(workdir, "espeak.wav")
    out = os.path.join(workdir, "sox.wav")
    subprocess.run(ESPEAK + ["-w", raw, text], check=True)
    subprocess.run(["sox", "-R", "-D", raw, "-r", str(rate), "-c", "1", "-b", "16", out], check=True)
    return read_wav(out)[0][:, 0]


def _fit(x: np.ndarray, n: int) -> np.ndarray:
    """Trim or zero-pad to exactly n samples."""
    y = np.zeros(n, dtype=np.int16)
    y[: min(n, len(x))] = x[:n]
    return y


def read_wav(path: str):
    """int16 samples [n, channels] and the sample rate."""
    with wave.open(path, "rb") as w:
        assert w.getsampwidth() == 2, path
        ch, sr, n = w.getnchannels(), w.getframerate(), w.getnframes()
        data = np.frombuffer(w.readframes(n), dtype="<i2").reshape(n, ch)
    return data, sr


def write_wav(path: str, samples: np.ndarray, sr: int) -> None:
    samples = np.asarray(samples, dtype="<i2")
    if samples.ndim == 1:
        samples = samples[:, None]
    with wave.open(path, "wb") as w:
        w.setnchannels(samples.shape[1])
        w.setsampwidth(2)
        w.setframerate(sr)
        w.writeframes(samples.tobytes())


def make_clips(out_dir: str) -> None:
    os.makedirs(out_dir, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        speech = _espeak(SPEECH_TEXT, SR, tmp)
        write_wav(os.path.join(out_dir, CLIPS["speech"][0]), speech, SR)
        # 0.1 s cut from inside a word, so the clip is not silent.
        write_wav(os.path.join(out_dir, CLIPS["short_0p1s"][0]), speech[8000:9600], SR)
        write_wav(os.path.join(out_dir, CLIPS["short_1s"][0]), _fit(_espeak(ONE_SECOND_TEXT, SR, tmp), SR), SR)

        gap = np.zeros(int(0.3 * SR), dtype=np.int16)
        parts = []
        for text in LONG_TEXTS:
            parts += [_espeak(text, SR, tmp), gap]
        write_wav(os.path.join(out_dir, CLIPS["long_30s"][0]), _fit(np.concatenate(parts), 30 * SR), SR)

        write_wav(os.path.join(out_dir, CLIPS["silence_2s"][0]), np.zeros(2 * SR, dtype=np.int16), SR)

        # Different speech on each channel, so "take one channel" and "average" really differ
        # (per-feature mel normalisation would hide a mere gain difference).
        left = _espeak(STEREO_LEFT_TEXT, 44100, tmp)
        right = _espeak(STEREO_RIGHT_TEXT, 44100, tmp)
        n = max(len(left), len(right))
        stereo = np.stack([_fit(left, n), _fit(right, n)], axis=1)
        write_wav(os.path.join(out_dir, CLIPS["stereo_44k"][0]), stereo, 44100)
