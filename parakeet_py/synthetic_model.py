"""Random-weight Parakeet models for speed measurements (``parakeet-cli bench`` without --model).

:func:`ensure_synthetic_model` writes, once, a GGUF file of a real architecture (by default
the 110M hybrid TDT-CTC FastConformer: d_model 512, 17 layers, 8 heads, FFN 2048,
subsampling channels 256, 80 mels, vocabulary 1024, prediction/joint 640, TDT durations 0..4)
whose weights are random numbers from a fixed seed. Its transcripts are meaningless, but it
costs exactly what the trained model of that shape costs to run, so it measures speed
without downloading anything.

The file is produced by the converter's own code path: a NeMo-style config and state_dict
(NeMo's tensor names and shapes) go through :func:`parakeet_py.convert.nemo_config.build_model_spec`
(the same validation and metadata as a ``.nemo`` conversion) and
:func:`parakeet_py.convert.gguf_writer.write_gguf`, with the converter's f16/q8_0 storage rules.
Tensors are generated one at a time while writing, so memory stays small.

The joint's blank logit is biased up, so greedy decoding emits few tokens and the run time is
dominated by the encoder, as it is for a trained model on real speech.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np

from .convert import quantize
from .convert.convert import tokenizer_scores
from .convert.gguf_writer import FILE_TYPES, GGML_TYPES, TensorPlan, write_gguf
from .convert.meta_value import MetaValue
from .convert.nemo_config import NemoConfig, build_model_spec
from .convert.tokenizer import Piece

# Bump when the generated file changes for the same arguments (it is part of the cache name).
FORMAT_VERSION = 2
DEFAULT_SEED = 20240611
BLANK_BIAS = 6.0


@dataclass(frozen=True)
class SyntheticArch:
    """The shape of a hybrid TDT-CTC FastConformer (NeMo's config names in the comments)."""

    name: str = "110m"
    d_model: int = 512            # encoder.d_model
    n_layers: int = 17            # encoder.n_layers
    n_heads: int = 8              # encoder.n_heads
    ff_dim: int = 2048            # d_model * encoder.ff_expansion_factor
    subsampling_channels: int = 256  # encoder.subsampling_conv_channels
    conv_kernel: int = 9          # encoder.conv_kernel_size
    n_mels: int = 80              # preprocessor.features
    vocab: int = 1024             # SentencePiece pieces (blank is one more)
    pred_hidden: int = 640        # decoder.prednet.pred_hidden
    joint_hidden: int = 640       # joint.jointnet.joint_hidden
    durations: Tuple[int, ...] = (0, 1, 2, 3, 4)
    sample_rate: int = 16000
    window_size: float = 0.025    # 400 samples
    window_stride: float = 0.01   # 160 samples
    n_fft: int = 512
    # Cache-aware streaming ([L, R] pairs, the first the default; NeMo's chunked_limited with
    # causal subsampling and convolutions, no feature normalisation); empty: an offline model.
    att_contexts: Tuple[Tuple[int, int], ...] = ()


ARCH_110M = SyntheticArch()
# parakeet-tdt-0.6b's shape (128 mels), for benchmarks of the bigger model.
ARCH_600M = SyntheticArch(name="600m", d_model=1024, n_layers=24, n_heads=8, ff_dim=4096, n_mels=128)
# A tiny parameterisation of the same architecture, for tests.
ARCH_TINY = SyntheticArch(name="tiny", d_model=64, n_layers=2, n_heads=2, ff_dim=256, subsampling_channels=32,
                          vocab=64, pred_hidden=48, joint_hidden=40)
# The cache-aware streaming shapes (RNN-T + CTC): parakeet_realtime_eou_120m-v1's encoder
# (128 mels, [70, 1]) and nemotron-speech-streaming-en-0.6b's (80 / 160 / 560 / 1120 ms chunks).
ARCH_120M_STREAMING = SyntheticArch(name="120m-streaming", n_mels=128, durations=(), att_contexts=((70, 1),))
ARCH_600M_STREAMING = SyntheticArch(name="600m-streaming", d_model=1024, n_layers=24, n_heads=8, ff_dim=4096,
                                    n_mels=128, durations=(), att_contexts=((70, 0), (70, 1), (70, 6), (70, 13)))
ARCHS: Dict[str, SyntheticArch] = {a.name: a for a in (ARCH_110M, ARCH_600M, ARCH_TINY, ARCH_120M_STREAMING,
                                                       ARCH_600M_STREAMING)}


def cache_dir() -> Path:
    """``$PARAKEET_CACHE``, else ``$XDG_CACHE_HOME/parakeet``, else ``~/.cache/parakeet``."""
    env = os.environ.get("PARAKEET_CACHE")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "parakeet"


def nemo_config(arch: SyntheticArch) -> dict:
    """The model_config.yaml a NeMo hybrid TDT-CTC model of ``arch`` would carry."""
    enc = {
        "_target_": "nemo.collections.asr.modules.ConformerEncoder", "feat_in": arch.n_mels, "feat_out": -1,
        "n_layers": arch.n_layers, "d_model": arch.d_model, "subsampling": "dw_striding", "subsampling_factor": 8,
        "subsampling_conv_channels": arch.subsampling_channels, "causal_downsampling": False,
        "ff_expansion_factor": arch.ff_dim // arch.d_model, "self_attention_model": "rel_pos",
        "n_heads": arch.n_heads, "att_context_size": [-1, -1], "xscaling": True, "untie_biases": True,
        "pos_emb_max_len": 5000, "conv_kernel_size": arch.conv_kernel, "conv_norm_type": "batch_norm",
    }
    if arch.att_contexts:
        enc.update({"causal_downsampling": True, "att_context_style": "chunked_limited",
                    "att_context_size": [list(c) for c in arch.att_contexts], "conv_context_size": "causal"})
    ctc = {"_target_": "nemo.collections.asr.modules.ConvASRDecoder", "feat_in": arch.d_model,
           "num_classes": arch.vocab, "vocabulary": []}
    tdt = bool(arch.durations)
    cfg = {
        "target": "nemo.collections.asr.models.EncDecHybridRNNTCTCBPEModel",
        "sample_rate": arch.sample_rate,
        "tokenizer": {"type": "bpe"},
        "preprocessor": {
            "_target_": "nemo.collections.asr.modules.AudioToMelSpectrogramPreprocessor",
            "sample_rate": arch.sample_rate, "normalize": "per_feature", "window_size": arch.window_size,
            "window_stride": arch.window_stride, "window": "hann", "features": arch.n_mels, "n_fft": arch.n_fft,
            "log": True, "frame_splicing": 1, "dither": 1.0e-05, "pad_to": 0,
        },
        "encoder": enc,
        "decoder": {"_target_": "nemo.collections.asr.modules.RNNTDecoder", "blank_as_pad": True,
                    "vocab_size": arch.vocab, "prednet": {"pred_hidden": arch.pred_hidden, "pred_rnn_layers": 1}},
        "joint": {"_target_": "nemo.collections.asr.modules.RNNTJoint", "num_classes": arch.vocab,
                  "num_extra_outputs": len(arch.durations),
                  "jointnet": {"joint_hidden": arch.joint_hidden, "activation": "relu"}},
        "decoding": {"strategy": "greedy_batch", "model_type": "tdt", "durations": list(arch.durations),
                     "greedy": {"max_symbols": 10}},
        "loss": {"loss_name": "tdt", "tdt_kwargs": {"durations": list(arch.durations)}},
        "aux_ctc": {"decoder": ctc},
    }
    if not tdt:
        cfg["decoding"] = {"strategy": "greedy_batch", "greedy": {"max_symbols": 10}}
        cfg["loss"] = {"loss_name": "default"}
    if arch.att_contexts:
        cfg["preprocessor"]["normalize"] = "NA"
    return cfg


def pieces(n: int) -> List[str]:
    """``n`` distinct SentencePiece-looking pieces: ``<unk>``, ``▁a``, ``a``, ``▁ab``, ``ab``, ..."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    out = ["<unk>"]
    stems = list(letters) + [a + b for a in letters for b in letters]
    stems += [a + b + c for a in letters for b in letters for c in letters]
    for stem in stems:
        for piece in ("\u2581" + stem, stem):
            if len(out) == n:
                return out
            out.append(piece)
    return out


def mel_filterbank(sample_rate: int, n_fft: int, n_mels: int) -> np.ndarray:
    """Slaney-scale, Slaney-normalised triangular filters ([n_mels, n_fft/2 + 1]), librosa's default."""

    def hz_to_mel(f: "np.ndarray | float") -> np.ndarray:
        f = np.asarray(f, dtype=np.float64)
        lin = f / (200.0 / 3)
        log = 15.0 + np.log(np.maximum(f, 1e-10) / 1000.0) / (np.log(6.4) / 27.0)
        return np.where(f >= 1000.0, log, lin)

    def mel_to_hz(m: np.ndarray) -> np.ndarray:
        lin = m * (200.0 / 3)
        log = 1000.0 * np.exp((np.log(6.4) / 27.0) * (m - 15.0))
        return np.where(m >= 15.0, log, lin)

    freqs = np.linspace(0, sample_rate / 2, n_fft // 2 + 1)
    hz = mel_to_hz(np.linspace(hz_to_mel(0.0), hz_to_mel(sample_rate / 2), n_mels + 2))
    lower = (freqs[None, :] - hz[:-2, None]) / np.diff(hz)[:-1, None]
    upper = (hz[2:, None] - freqs[None, :]) / np.diff(hz)[1:, None]
    weights = np.maximum(0.0, np.minimum(lower, upper))
    weights *= (2.0 / (hz[2:] - hz[:-2]))[:, None]
    return weights.astype(np.float32)


# How a tensor's values are made: (kind, scale). Kinds: normal (N(0,1) x scale), uniform
# (U(-scale, scale)), const (every value = scale), or a named special case.
_Init = Tuple[str, float]


def state_dict_layout(arch: SyntheticArch) -> List[Tuple[str, Tuple[int, ...], _Init]]:
    """(name, shape, init) of every tensor, in NeMo's state_dict order."""
    D, C, H, F, K, V = (arch.d_model, arch.subsampling_channels, arch.n_heads, arch.ff_dim, arch.conv_kernel,
                        arch.vocab)
    P, J, n_dur = arch.pred_hidden, arch.joint_hidden, len(arch.durations)
    win = int(arch.window_size * arch.sample_rate)
    out: List[Tuple[str, Tuple[int, ...], _Init]] = [
        ("preprocessor.featurizer.window", (win,), ("hann", 0.0)),
        ("preprocessor.featurizer.fb", (1, arch.n_mels, arch.n_fft // 2 + 1), ("mel", 0.0)),
    ]

    def linear(name: str, rows: int, cols: int, bias: bool = True) -> None:
        out.append((f"{name}.weight", (rows, cols), ("normal", cols ** -0.5)))
        if bias:
            out.append((f"{name}.bias", (rows,), ("normal", 0.02)))

    def norm(name: str, n: int) -> None:
        out.append((f"{name}.weight", (n,), ("const", 1.0)))
        out.append((f"{name}.bias", (n,), ("const", 0.0)))

    f8 = arch.n_mels
    for _ in range(3):  # a causal conv pads 2 + 1 (n // 2 + 1), the others 1 + 1
        f8 = f8 // 2 + 1 if arch.att_contexts else (f8 - 1) // 2 + 1
    linear("encoder.pre_encode.out", D, C * f8)  # NeMo registers it before the convolutions
    p = "encoder.pre_encode.conv"
    for i, shape in ((0, (C, 1, 3, 3)), (2, (C, 1, 3, 3)), (3, (C, C, 1, 1)), (5, (C, 1, 3, 3)), (6, (C, C, 1, 1))):
        fan_in = int(np.prod(shape[1:]))
        out.append((f"{p}.{i}.weight", shape, ("normal", fan_in ** -0.5)))
        out.append((f"{p}.{i}.bias", (C,), ("normal", 0.02)))
    for i in range(arch.n_layers):
        L = f"encoder.layers.{i}"
        norm(f"{L}.norm_feed_forward1", D)
        linear(f"{L}.feed_forward1.linear1", F, D)
        linear(f"{L}.feed_forward1.linear2", D, F)
        norm(f"{L}.norm_conv", D)
        out.append((f"{L}.conv.pointwise_conv1.weight", (2 * D, D, 1), ("normal", D ** -0.5)))
        out.append((f"{L}.conv.pointwise_conv1.bias", (2 * D,), ("normal", 0.02)))
        out.append((f"{L}.conv.depthwise_conv.weight", (D, 1, K), ("normal", K ** -0.5)))
        out.append((f"{L}.conv.depthwise_conv.bias", (D,), ("normal", 0.02)))
        norm(f"{L}.conv.batch_norm", D)
        out.append((f"{L}.conv.batch_norm.running_mean", (D,), ("const", 0.0)))
        out.append((f"{L}.conv.batch_norm.running_var", (D,), ("const", 1.0)))
        out.append((f"{L}.conv.pointwise_conv2.weight", (D, D, 1), ("normal", D ** -0.5)))
        out.append((f"{L}.conv.pointwise_conv2.bias", (D,), ("normal", 0.02)))
        norm(f"{L}.norm_self_att", D)
        out.append((f"{L}.self_attn.pos_bias_u", (H, D // H), ("normal", 0.02)))
        out.append((f"{L}.self_attn.pos_bias_v", (H, D // H), ("normal", 0.02)))
        for proj in ("linear_q", "linear_k", "linear_v", "linear_out"):
            linear(f"{L}.self_attn.{proj}", D, D)
        linear(f"{L}.self_attn.linear_pos", D, D, bias=False)
        norm(f"{L}.norm_feed_forward2", D)
        linear(f"{L}.feed_forward2.linear1", F, D)
        linear(f"{L}.feed_forward2.linear2", D, F)
        norm(f"{L}.norm_out", D)
    out.append(("decoder.prediction.embed.weight", (V + 1, P), ("embed", P ** -0.5)))
    lstm = "decoder.prediction.dec_rnn.lstm"
    lstm_shapes: Tuple[Tuple[str, Tuple[int, ...]], ...] = (
        ("weight_ih_l0", (4 * P, P)), ("weight_hh_l0", (4 * P, P)), ("bias_ih_l0", (4 * P,)), ("bias_hh_l0", (4 * P,)))
    for part, lstm_shape in lstm_shapes:
        out.append((f"{lstm}.{part}", lstm_shape, ("uniform", P ** -0.5)))  # torch's LSTM init
    linear("joint.pred", J, P)
    linear("joint.enc", J, D)
    out.append(("joint.joint_net.2.weight", (V + 1 + n_dur, J), ("normal", J ** -0.5)))
    out.append(("joint.joint_net.2.bias", (V + 1 + n_dur,), ("joint_bias", 0.02)))
    out.append(("ctc_decoder.decoder_layers.0.weight", (V + 1, D, 1), ("normal", D ** -0.5)))
    out.append(("ctc_decoder.decoder_layers.0.bias", (V + 1,), ("normal", 0.02)))
    return out


def _values(arch: SyntheticArch, shape: Tuple[int, ...], init: _Init, rng: np.random.Generator) -> np.ndarray:
    kind, scale = init
    if kind == "normal":
        return rng.standard_normal(shape, dtype=np.float32) * np.float32(scale)
    if kind == "uniform":
        return rng.uniform(-scale, scale, shape).astype(np.float32)
    if kind == "const":
        return np.full(shape, scale, dtype=np.float32)
    if kind == "hann":
        return np.hanning(shape[0]).astype(np.float32)  # torch.hann_window(periodic=False)
    if kind == "mel":
        return mel_filterbank(arch.sample_rate, arch.n_fft, arch.n_mels)[None]
    if kind == "embed":
        x = rng.standard_normal(shape, dtype=np.float32) * np.float32(scale)
        x[arch.vocab] = 0.0  # the blank row is the zero SOS / padding row (blank_as_pad)
        return x
    if kind == "joint_bias":
        x = rng.standard_normal(shape, dtype=np.float32) * np.float32(scale)
        x[arch.vocab] += np.float32(BLANK_BIAS)
        return x
    raise ValueError(kind)


def write_synthetic_model(path: "os.PathLike[str] | str", arch: SyntheticArch = ARCH_110M, out_type: str = "q8_0",
                          seed: int = DEFAULT_SEED) -> int:
    """Write the random-weight model of ``arch`` to ``path`` (f32, f16 or q8_0); returns its size."""
    layout = state_dict_layout(arch)
    vocab = pieces(arch.vocab)
    spec = build_model_spec(NemoConfig(nemo_config(arch)), {n: s for n, s, _ in layout}, vocab)
    # BPE-like scores: earlier pieces merge first, as in a trained SentencePiece model.
    scores = tokenizer_scores([Piece(p, -float(i)) for i, p in enumerate(vocab)])
    metadata = [
        MetaValue("general.name", "str", f"synthetic-{arch.name}-random-weights"),
        MetaValue("general.file_type", "u32", int(FILE_TYPES[out_type])),
    ] + spec.metadata + [scores]

    def plan(index: int, name: str, shape: Tuple[int, ...], init: _Init) -> TensorPlan:
        kind = quantize.storage_type(name, shape, out_type)

        def produce() -> np.ndarray:
            x = _values(arch, shape, init, np.random.default_rng([seed, index]))
            return quantize.encode(x, kind, name)

        return TensorPlan(name, shape, GGML_TYPES[kind], quantize.encoded_nbytes(shape, kind), produce)

    plans = [plan(i, n, s, init) for i, (n, s, init) in enumerate(layout)]
    return write_gguf(path, metadata, plans)


def synthetic_model_path(arch: SyntheticArch = ARCH_110M, out_type: str = "q8_0", seed: int = DEFAULT_SEED,
                         directory: Optional[Path] = None) -> Path:
    """Where :func:`ensure_synthetic_model` keeps the file for these arguments."""
    directory = cache_dir() if directory is None else Path(directory)
    return directory / f"synthetic-{arch.name}-{out_type}-seed{seed}-v{FORMAT_VERSION}.gguf"


def ensure_synthetic_model(arch: SyntheticArch = ARCH_110M, out_type: str = "q8_0", seed: int = DEFAULT_SEED,
                           directory: Optional[Path] = None,
                           on_generate: Optional[Callable[[Path], None]] = None) -> Path:
    """The cached random-weight model, generated first if absent (``on_generate(path)`` is
    called before generating, e.g. to tell the user it takes a moment). The file appears
    atomically, so concurrent first uses are safe."""
    path = synthetic_model_path(arch, out_type, seed, directory)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        if on_generate is not None:
            on_generate(path)
        write_synthetic_model(path, arch, out_type, seed)
    return path


__all__ = ["SyntheticArch", "ARCH_110M", "ARCH_600M", "ARCH_TINY", "ARCHS", "ensure_synthetic_model", "write_synthetic_model",
           "synthetic_model_path", "cache_dir"]
