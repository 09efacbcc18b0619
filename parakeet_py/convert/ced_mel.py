"""The two front-end buffers a ``ced`` GGUF carries, computed in numpy as torchaudio computes
them (so the converter needs no torch): ``torch.hann_window(n, periodic=True)`` and
``torchaudio.functional.melscale_fbanks(n_freqs, f_min, f_max, n_mels, sr, norm=None,
mel_scale="htk")``, stored mel-major ``[n_mels, n_freqs]`` as ced.cpp stores it.

torchaudio builds the filterbank in float32, and the rounding matters: a float64 filterbank
differs from it by up to 9e-6, which moves the dB mel by up to 5e-4. So every step below is
torchaudio's float32 step, torch.linspace included (fused multiply-adds: computed here in
float64, where the product is exact, and rounded once)."""

import math

import numpy as np

_F = np.float32


def periodic_hann(n: int) -> np.ndarray:
    k = np.arange(n, dtype=np.float64)
    return (0.5 - 0.5 * np.cos(2.0 * np.pi * k / n)).astype(np.float32)


def _linspace32(start: float, end: float, steps: int) -> np.ndarray:
    """torch.linspace in float32: the first half counts up from start, the rest down from end."""
    a, b = _F(start), _F(end)
    step = np.float64((b - a) / _F(steps - 1))
    i = np.arange(steps, dtype=np.float64)
    return np.where(i < steps // 2, np.float64(a) + i * step, np.float64(b) - (steps - 1 - i) * step).astype(_F)


def _hz_to_mel(f: float) -> float:
    return 2595.0 * math.log10(1.0 + f / 700.0)


def htk_mel_filterbank(n_fft: int, n_mels: int, sample_rate: int, f_min: float, f_max: float) -> np.ndarray:
    """Triangular HTK filters without area normalisation, [n_mels, n_fft // 2 + 1] float32."""
    all_freqs = _linspace32(0, sample_rate // 2, n_fft // 2 + 1)
    m_pts = _linspace32(_hz_to_mel(f_min), _hz_to_mel(f_max), n_mels + 2)
    # 10 ** x correctly rounded; torch.pow is within an ulp of it (2 of the 66 points differ).
    f_pts = _F(700.0) * ((10.0 ** (m_pts / _F(2595.0)).astype(np.float64)).astype(_F) - _F(1.0))
    f_diff = f_pts[1:] - f_pts[:-1]
    slopes = f_pts[None, :] - all_freqs[:, None]  # [n_freqs, n_mels + 2]
    down = (_F(-1.0) * slopes[:, :-2]) / f_diff[:-1]
    up = slopes[:, 2:] / f_diff[1:]
    fb = np.maximum(_F(0.0), np.minimum(down, up))  # [n_freqs, n_mels]
    return np.ascontiguousarray(fb.T, dtype=np.float32)
