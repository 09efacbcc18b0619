"""Silero's own results for the VAD tests: its ONNX run by onnxruntime the way its OnnxWrapper
and get_speech_timestamps run it, and its segmenter (silero_vad.utils_vad, imported only here:
it imports torch). Also the test recordings, built from the committed speech fixture."""

from pathlib import Path
from typing import Dict, List

import numpy as np
import soundfile as sf

from parakeet_py.vad import package_onnx

CHUNK = {16000: 512, 8000: 256}
CONTEXT = {16000: 64, 8000: 32}


def onnx_probabilities(audio: np.ndarray, rate: int) -> np.ndarray:
    """Silero's probabilities through onnxruntime: chunks from sample 0, the last one
    zero-padded, 64 (32) samples of context and the state carried, from zeros."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(str(package_onnx()), opts, providers=["CPUExecutionProvider"])
    ch, ctx = CHUNK[rate], CONTEXT[rate]
    audio = np.asarray(audio, np.float32)
    padded = np.concatenate([audio, np.zeros((-len(audio)) % ch, np.float32)])
    state = np.zeros((2, 1, 128), np.float32)
    context = np.zeros(ctx, np.float32)
    out = []
    for k in range(0, len(padded), ch):
        x = np.concatenate([context, padded[k:k + ch]])
        p, state = sess.run(None, {"input": x[None], "state": state, "sr": np.array(rate, np.int64)})
        out.append(float(p[0, 0]))
        context = x[-ctx:]
    return np.array(out, np.float32)


def silero_segments(probs: List[float], rate: int, length: int, **kw) -> List[Dict[str, int]]:
    """get_speech_timestamps' segments in samples for these probabilities."""
    from silero_vad.utils_vad import get_speech_timestamps_from_probs

    return get_speech_timestamps_from_probs([float(p) for p in probs], sampling_rate=rate,
                                            audio_length_samples=length, **kw)


def speech_with_pauses(audio_dir: Path, rate: int = 16000) -> np.ndarray:
    """The speech fixture cut into pieces separated by silences of many lengths (50 ms .. 2 s),
    with faint noise under everything, resampled to `rate` by decimation (for 8 kHz)."""
    speech, sr = sf.read(str(audio_dir / "speech_16k.wav"), dtype="float32")
    assert sr == 16000
    rng = np.random.default_rng(19)
    pieces = np.array_split(speech, 6)
    gaps = [0.05, 0.1, 0.2, 0.5, 1.0, 2.0]
    parts = [np.zeros(int(0.3 * sr), np.float32)]
    for piece, gap in zip(pieces, gaps):
        parts += [piece, np.zeros(int(gap * sr), np.float32)]
    audio = np.concatenate(parts)
    audio = audio + rng.normal(0, 1e-3, len(audio)).astype(np.float32)
    return np.ascontiguousarray(audio[::16000 // rate], np.float32)


def noise(rate: int, seconds: float = 6.0) -> np.ndarray:
    rng = np.random.default_rng(7)
    return (rng.normal(0, 0.1, int(rate * seconds))).astype(np.float32)


def silence(rate: int, seconds: float = 3.0) -> np.ndarray:
    return np.zeros(int(rate * seconds) + 77, np.float32)  # not a whole number of chunks
