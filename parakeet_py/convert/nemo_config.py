"""NeMo ``model_config.yaml`` → the ``parakeet.*`` GGUF metadata, with validation.

The values written are the *effective* ones NeMo would use: a key absent from the config
takes the default of the NeMo class that reads it (``AudioToMelSpectrogramPreprocessor``,
``FilterbankFeatures``, ``ConformerEncoder``, ``RNNTDecoder``, ``RNNTJoint``, the greedy
decoding config). Types follow the published parakeet.cpp files: integers u32, floats
f32, flags bool, names strings, ``tdt.durations`` an i32 array, ``tokenizer.pieces`` a
string array.

Anything the engine does not implement is refused here, with every problem listed at once,
and the config is cross-checked against the checkpoint's tensor shapes so a file that would
load but compute nonsense is never written.
"""

import math
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import yaml

from . import gguf_schema as schema
from .errors import ConversionError, UnsupportedModelError
from .meta_value import MetaValue
from .prompt_config import prompt_metadata
from .streaming_config import encoder_streaming

# What the engine implements; widen these together with the engine.
SUPPORTED_SUBSAMPLING = {"dw_striding": 8}  # kind → factor
SUPPORTED_ATTENTION = ("rel_pos",)
SUPPORTED_CONV_NORM = ("batch_norm", "layer_norm")
SUPPORTED_NORMALIZE = ("per_feature", "NA")  # NA: none (the cache-aware streaming models)
SUPPORTED_JOINT_ACTIVATION = ("relu",)
SUPPORTED_MAG_POWER = (1.0, 2.0)

# Model classes (the config's ``target``) we convert; the arch still comes from the structure.
_BPE_MODEL_CLASSES = {
    "EncDecCTCModelBPE": ("ctc",),
    "EncDecRNNTBPEModel": ("rnnt", "tdt"),
    "EncDecHybridRNNTCTCBPEModel": ("hybrid_rnnt_ctc", "hybrid_tdt_ctc"),
    # asr_eou_models.py: the same networks; <EOU> / <EOB> are vocabulary pieces, which the
    # engine's streams report as events
    "EncDecRNNTBPEEOUModel": ("rnnt", "tdt"),
    "EncDecHybridRNNTCTCBPEEOUModel": ("hybrid_rnnt_ctc", "hybrid_tdt_ctc"),
    # *_prompt.py: the same networks plus a language prompt before the heads (prompt_config.py)
    "EncDecRNNTBPEModelWithPrompt": ("rnnt", "tdt"),
    "EncDecHybridRNNTCTCBPEModelWithPrompt": ("hybrid_rnnt_ctc", "hybrid_tdt_ctc"),
}
_CHAR_MODEL_CLASSES = ("EncDecCTCModel", "EncDecRNNTModel", "EncDecHybridRNNTCTCModel")

GGML_MAX_NAME = 64  # ggml tensor names hold at most 63 bytes plus the terminating NUL

_MISSING = object()
_INTERP = re.compile(r"\$\{([^${}]*)\}")
# Bounds on resolving one key, so a hostile config cannot make interpolation run away: how
# deep references may chain (a cycle ends here), how long a resolved string may grow (a value
# holding ten references to the level below is ten times as long, level after level), and how
# many references one key may follow in all (fan-out costs time before it costs memory). Real
# configs stay far below each; going over is a ConversionError.
MAX_INTERP_DEPTH = 16
MAX_RESOLVED_CHARS = 1 << 20
MAX_INTERP_LOOKUPS = 10_000


# --------------------------------------------------------------------------------------------
# Config access with OmegaConf-style ${...} interpolation
# --------------------------------------------------------------------------------------------
class NemoConfig:
    """Read-only view of ``model_config.yaml`` that resolves ``${path}`` interpolations.

    NeMo saves the config with OmegaConf, which may leave references such as
    ``${model.model_defaults.tdt_durations}`` unresolved. Absolute paths are looked up from
    the root (a leading ``model.`` is dropped, since the saved root *is* the model config),
    relative ones (``${.x}``, ``${..x}``) from the referring node. Interpolations are
    resolved only for the keys actually read, so a hostile file cannot make us walk a huge
    aliased tree, and within the bounds above (depth, resolved size, references followed).
    """

    def __init__(self, root: Dict[str, Any]):
        self.root = root
        self._lookups_left = MAX_INTERP_LOOKUPS

    @classmethod
    def from_yaml(cls, data: bytes, what: str = "model_config.yaml") -> "NemoConfig":
        try:
            root = yaml.safe_load(data)
        except yaml.YAMLError as e:
            raise ConversionError(f"{what} is not valid YAML: {e}") from e
        if not isinstance(root, dict):
            raise ConversionError(f"{what} does not hold a mapping at the top level")
        if isinstance(root.get("model"), dict) and "encoder" not in root:
            root = root["model"]  # a full training config (model: ...) rather than the model config
        return cls(root)

    def get(self, path: str, default: Any = None) -> Any:
        """Value at dotted ``path`` (interpolations resolved), or ``default`` if a key is missing."""
        self._lookups_left = MAX_INTERP_LOOKUPS
        node: Any = self.root
        parents: List[str] = []
        for key in path.split("."):
            node = self._resolve(node, parents, path)
            if not isinstance(node, dict) or key not in node:
                return default
            node = node[key]
            parents.append(key)
        return self._resolve(node, parents[:-1], path)

    def has(self, path: str) -> bool:
        return self.get(path, _MISSING) is not _MISSING

    def _resolve(self, value: Any, parents: List[str], path: str, depth: int = 0) -> Any:
        if not isinstance(value, str) or "${" not in value:
            return value
        if depth > MAX_INTERP_DEPTH:
            raise ConversionError(f"config key '{path}': interpolation nests too deeply (a cycle?)")
        whole = _INTERP.fullmatch(value)
        if whole:
            target, target_parents = self._lookup(whole.group(1), parents, path, depth)
            return self._resolve(target, target_parents, path, depth + 1)
        pieces: List[str] = []
        size, pos = 0, 0
        for m in _INTERP.finditer(value):
            target, target_parents = self._lookup(m.group(1), parents, path, depth)
            piece = str(self._resolve(target, target_parents, path, depth + 1))
            size += (m.start() - pos) + len(piece)
            if size > MAX_RESOLVED_CHARS:
                raise ConversionError(f"config key '{path}': interpolation expands to more than "
                                      f"{MAX_RESOLVED_CHARS} characters")
            pieces += [value[pos:m.start()], piece]
            pos = m.end()
        pieces.append(value[pos:])
        return "".join(pieces)

    def _lookup(self, ref: str, parents: List[str], path: str, depth: int) -> Tuple[Any, List[str]]:
        self._lookups_left -= 1
        if self._lookups_left < 0:
            raise ConversionError(f"config key '{path}': interpolation expands to more than "
                                  f"{MAX_INTERP_LOOKUPS} references")
        ref = ref.strip()
        if ":" in ref:
            raise ConversionError(f"config key '{path}' uses the resolver '${{{ref}}}', which cannot be evaluated here")
        if ref.startswith("."):
            ups = len(ref) - len(ref.lstrip("."))
            base = parents[: max(0, len(parents) - (ups - 1))]
            candidates = [base + ref[ups:].split(".")]
        else:
            keys = ref.split(".")
            candidates = [keys] + ([keys[1:]] if keys[0] == "model" and len(keys) > 1 else [])
        for keys in candidates:
            node: Any = self.root
            ok = True
            for i, k in enumerate(keys):
                # Nodes on the way are references too; they count towards the same depth.
                node = self._resolve(node, keys[:i], path, depth + 1)
                if isinstance(node, dict) and k in node:
                    node = node[k]
                else:
                    ok = False
                    break
            if ok:
                return node, keys[:-1]
        raise ConversionError(f"config key '{path}': cannot resolve the interpolation '${{{ref}}}'")


# --------------------------------------------------------------------------------------------
# Result
# --------------------------------------------------------------------------------------------
@dataclass
class ModelSpec:
    arch: str
    vocab_size: int
    metadata: List[MetaValue]
    warnings: List[str] = field(default_factory=list)


# --------------------------------------------------------------------------------------------
# Typed reads that record problems instead of stopping at the first
# --------------------------------------------------------------------------------------------
class _Reader:
    def __init__(self, cfg: NemoConfig):
        self.cfg = cfg
        self.problems: List[str] = []
        self.warnings: List[str] = []

    def problem(self, msg: str) -> None:
        self.problems.append(msg)

    def raw(self, path: str, default: Any = None) -> Any:
        return self.cfg.get(path, default)

    def get_int(self, path: str, default: Any = _MISSING, minimum: int = 0) -> int:
        v = self.cfg.get(path, _MISSING)
        if v is _MISSING or v is None:
            if default is _MISSING:
                self.problem(f"config key '{path}' is required")
                return 0
            v = default
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        if type(v) is not int:
            self.problem(f"config key '{path}' should be an integer, not {v!r}")
            return 0
        if v < minimum:
            self.problem(f"config key '{path}' = {v} is below {minimum}")
        return v

    def get_float(self, path: str, default: float) -> float:
        v = self.cfg.get(path, default)
        if v is None:
            v = default
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            self.problem(f"config key '{path}' should be a number, not {v!r}")
            return float(default)
        return float(v)

    def get_bool(self, path: str, default: bool) -> bool:
        v = self.cfg.get(path, default)
        if v is None:
            v = default
        if not isinstance(v, bool):
            self.problem(f"config key '{path}' should be true or false, not {v!r}")
            return default
        return v

    def get_str(self, path: str, default: Optional[str]) -> Optional[str]:
        v = self.cfg.get(path, default)
        if v is not None and not isinstance(v, str):
            self.problem(f"config key '{path}' should be a string, not {v!r}")
            return default
        return v

    def target(self, path: str, expected: str) -> None:
        """Require ``<path>._target_`` (if present) to name class ``expected``."""
        t = self.get_str(f"{path}._target_", None)
        if t is None:
            self.warnings.append(f"config section '{path}' names no _target_; assuming {expected}")
        elif t.rsplit(".", 1)[-1] != expected:
            self.problem(f"'{path}' is {t}; only {expected} is supported")


class _ShapeCheck:
    def __init__(self, shapes: Dict[str, Tuple[int, ...]], problems: List[str]):
        self.shapes = shapes
        self.problems = problems

    def need(self, name: str, shape: Sequence[int]) -> None:
        got = self.shapes.get(name)
        if got is None:
            self.problems.append(f"tensor '{name}' is missing from the checkpoint")
        elif tuple(got) != tuple(shape):
            self.problems.append(f"tensor '{name}' has shape {list(got)}, the config implies {list(shape)}")

    def maybe(self, name: str, shape: Sequence[int], required: bool) -> None:
        if required or name in self.shapes:
            self.need(name, shape)


# --------------------------------------------------------------------------------------------
# The spec
# --------------------------------------------------------------------------------------------
def build_model_spec(
    cfg: NemoConfig, shapes: Dict[str, Tuple[int, ...]], pieces: Sequence[str]
) -> ModelSpec:
    """Validate ``cfg`` against the engine and the tensors, and produce the metadata."""
    r = _Reader(cfg)
    check = _ShapeCheck(shapes, r.problems)
    V = len(pieces)

    _check_tensor_names(shapes, r)
    arch, durations = _detect_arch(r, shapes)
    pre = _preprocessor(r, check)
    enc = _encoder(r, check)
    d_model = enc["d_model"]

    meta: List[MetaValue] = [MetaValue(schema.ARCH, "str", arch)]
    meta += [MetaValue(key, kind, enc[k]) for k, key, kind in _ENCODER_KEYS]
    meta += enc["streaming_meta"]
    meta += [MetaValue(key, kind, pre[k]) for k, key, kind in _PREPROCESSOR_KEYS]
    meta += [
        MetaValue(schema.VOCAB_SIZE, "u32", V),
        MetaValue(schema.BLANK_ID, "u32", V),
        MetaValue(schema.TOKENIZER_PIECES, "str[]", list(pieces)),
    ]

    if arch != "ctc":
        tr = _transducer(r, check, V, d_model, len(durations))
        meta += [
            MetaValue(schema.DECODER_PRED_HIDDEN, "u32", tr["pred_hidden"]),
            MetaValue(schema.DECODER_PRED_RNN_LAYERS, "u32", tr["pred_rnn_layers"]),
            MetaValue(schema.JOINT_JOINT_HIDDEN, "u32", tr["joint_hidden"]),
            MetaValue(schema.JOINT_ACTIVATION, "str", tr["activation"]),
            MetaValue(schema.DECODING_MAX_SYMBOLS, "u32", tr["max_symbols"]),
        ]
    if durations:
        meta.append(MetaValue(schema.TDT_DURATIONS, "i32[]", list(durations)))
    if arch in ("ctc", "hybrid_rnnt_ctc", "hybrid_tdt_ctc"):
        _ctc_head(r, check, V, d_model, hybrid=arch != "ctc")
    meta += prompt_metadata(r, check, shapes, d_model)

    _check_vocab_keys(r, arch, V)

    if r.problems:
        lines = "\n".join(f"  - {p}" for p in r.problems)
        raise UnsupportedModelError(f"this model cannot be converted for the parakeet engine:\n{lines}")
    return ModelSpec(arch=arch, vocab_size=V, metadata=meta, warnings=r.warnings)


# (field of _encoder() / _preprocessor()'s result, GGUF key, type), in the order written.
_ENCODER_KEYS = (
    ("feat_in", schema.ENCODER_FEAT_IN, "u32"),
    ("d_model", schema.ENCODER_D_MODEL, "u32"),
    ("n_layers", schema.ENCODER_N_LAYERS, "u32"),
    ("n_heads", schema.ENCODER_N_HEADS, "u32"),
    ("ff_dim", schema.ENCODER_FF_DIM, "u32"),
    ("conv_kernel", schema.ENCODER_CONV_KERNEL, "u32"),
    ("conv_norm_type", schema.ENCODER_CONV_NORM_TYPE, "str"),
    ("subsampling_factor", schema.ENCODER_SUBSAMPLING_FACTOR, "u32"),
    ("subsampling_conv_channels", schema.ENCODER_SUBSAMPLING_CONV_CHANNELS, "u32"),
    ("xscaling", schema.ENCODER_XSCALING, "bool"),
    ("pos_emb_max_len", schema.ENCODER_POS_EMB_MAX_LEN, "u32"),
    ("use_bias", schema.ENCODER_USE_BIAS, "bool"),
)
_PREPROCESSOR_KEYS = (
    ("sample_rate", schema.PREPROCESSOR_SAMPLE_RATE, "u32"),
    ("n_mels", schema.PREPROCESSOR_N_MELS, "u32"),
    ("n_fft", schema.PREPROCESSOR_N_FFT, "u32"),
    ("win_length", schema.PREPROCESSOR_WIN_LENGTH, "u32"),
    ("hop_length", schema.PREPROCESSOR_HOP_LENGTH, "u32"),
    ("preemph", schema.PREPROCESSOR_PREEMPH, "f32"),
    ("mag_power", schema.PREPROCESSOR_MAG_POWER, "f32"),
    ("normalize", schema.PREPROCESSOR_NORMALIZE, "str"),
    ("log_zero_guard", schema.PREPROCESSOR_LOG_ZERO_GUARD, "f32"),
)


def _check_tensor_names(shapes: Dict[str, Tuple[int, ...]], r: _Reader) -> None:
    for name in shapes:
        if len(name.encode("utf-8")) >= GGML_MAX_NAME:
            r.problem(f"tensor name '{name}' is longer than ggml's {GGML_MAX_NAME - 1}-byte limit")


def _durations(r: _Reader) -> List[int]:
    """TDT durations as NeMo's ``EncDecRNNTModel`` settles them: a TDT loss overrides
    ``decoding.durations`` with ``loss.tdt_kwargs.durations``; otherwise the decoding's own."""
    loss_name = r.raw("loss.loss_name", None)
    if loss_name == "multiblank_rnnt" or r.raw("decoding.big_blank_durations", None):
        r.problem("multi-blank transducers are not supported")
        return []
    path = "loss.tdt_kwargs.durations" if loss_name == "tdt" else "decoding.durations"
    v = r.raw(path, None)
    if loss_name == "tdt" and not v:
        r.problem(f"the loss is TDT but '{path}' is not set")
    if not v:
        return []
    if not isinstance(v, list) or not all(type(d) is int and d >= 0 for d in v):
        r.problem(f"config key '{path}' should be a list of non-negative integers, not {v!r}")
        return []
    return list(v)


def _detect_arch(r: _Reader, shapes: Dict[str, Tuple[int, ...]]) -> Tuple[str, List[int]]:
    """ctc / rnnt / tdt / hybrid_*: from the config's sections and the tensors present.

    Transducer iff there is a ``joint``; TDT iff it has durations (as NeMo's ``RNNTDecoding``
    decides); hybrid iff an ``aux_ctc`` section *and* ``ctc_decoder.*``
    tensors exist (prompt models carry an unused ``aux_ctc`` stub without tensors).
    """
    target = r.get_str("target", None)
    cls = target.rsplit(".", 1)[-1] if target else None
    if cls in _CHAR_MODEL_CLASSES:
        r.problem(f"{target} is a character-based model; only SentencePiece (BPE) models are supported")
    elif cls is not None and cls not in _BPE_MODEL_CLASSES:
        supported = ", ".join(sorted(_BPE_MODEL_CLASSES))
        r.problem(f"model class {target} is not supported (supported: {supported})")

    has_joint = isinstance(r.raw("joint", None), dict)
    hybrid_ctc_module = schema.HYBRID_CTC_HEAD.split(".", 1)[0] + "."  # "ctc_decoder."
    has_ctc_tensors = any(n.startswith(hybrid_ctc_module) for n in shapes)
    durations = _durations(r) if has_joint else []

    if has_joint:
        kind = "tdt" if durations else "rnnt"
        if isinstance(r.raw("aux_ctc", None), dict):
            if has_ctc_tensors:
                arch = f"hybrid_{kind}_ctc"
            else:
                r.warnings.append("config has an aux_ctc section but the checkpoint has no ctc_decoder.* tensors; "
                                  f"converting as a pure {kind} model")
                arch = kind
        else:
            arch = kind
    elif isinstance(r.raw("decoder", None), dict):
        arch = "ctc"
    else:
        r.problem("the config has neither a 'joint' (transducer) nor a 'decoder' (CTC) section")
        arch = "ctc"
    if cls in _BPE_MODEL_CLASSES and arch not in _BPE_MODEL_CLASSES[cls]:
        r.problem(f"model class {target} does not match the structure found ({arch})")
    return arch, durations


def _window_samples(r: _Reader, sr: int, secs_key: str, samples_key: str, default_secs: float) -> int:
    secs = r.raw(f"preprocessor.{secs_key}", default_secs)
    samples = r.raw(f"preprocessor.{samples_key}", None)
    if secs and samples:
        r.problem(f"preprocessor sets both {secs_key} and {samples_key}; NeMo accepts only one")
    if secs:
        if isinstance(secs, bool) or not isinstance(secs, (int, float)):
            r.problem(f"config key 'preprocessor.{secs_key}' should be a number, not {secs!r}")
            return 0
        return int(secs * sr)  # NeMo truncates the same way
    return r.get_int(f"preprocessor.{samples_key}", minimum=1)


def _preprocessor(r: _Reader, check: _ShapeCheck) -> Dict[str, Any]:
    """Effective ``FilterbankFeatures`` settings (NeMo defaults for absent keys)."""
    if not isinstance(r.raw("preprocessor", None), dict):
        r.problem("the config has no 'preprocessor' section")
        return {k: (0 if kind == "u32" else 0.0 if kind == "f32" else "") for k, _, kind in _PREPROCESSOR_KEYS}
    r.target("preprocessor", "AudioToMelSpectrogramPreprocessor")
    sr = r.get_int("preprocessor.sample_rate", 16000, minimum=1)
    win = _window_samples(r, sr, "window_size", "n_window_size", 0.02)
    hop = _window_samples(r, sr, "window_stride", "n_window_stride", 0.01)
    if win <= 0 or hop <= 0:
        r.problem(f"the preprocessor window ({win}) and hop ({hop}) must be positive")
    n_fft = r.get_int("preprocessor.n_fft", 0)
    if n_fft == 0 and win > 0:
        n_fft = 2 ** math.ceil(math.log2(win))
    if 0 < n_fft < win:
        r.problem(f"preprocessor n_fft {n_fft} is shorter than the window {win}")
    if n_fft & (n_fft - 1):
        r.problem(f"preprocessor n_fft {n_fft} is not a power of two")
    n_mels = r.get_int("preprocessor.features", 64, minimum=1)

    preemph = r.raw("preprocessor.preemph", 0.97)
    preemph = 0.0 if preemph is None else r.get_float("preprocessor.preemph", 0.97)
    normalize = r.get_str("preprocessor.normalize", "per_feature")
    if normalize not in SUPPORTED_NORMALIZE:
        r.problem(f"preprocessor normalize={normalize!r} is not supported (supported: {', '.join(SUPPORTED_NORMALIZE)})")
    if not r.get_bool("preprocessor.log", True):
        r.problem("preprocessor log=false (linear mel features) is not supported")
    guard_type = r.get_str("preprocessor.log_zero_guard_type", "add")
    if guard_type != "add":
        r.problem(f"preprocessor log_zero_guard_type={guard_type!r} is not supported (only 'add')")
    guard = r.raw("preprocessor.log_zero_guard_value", 2**-24)
    if guard == "tiny":
        guard = float(np.finfo(np.float32).tiny)  # what torch.finfo(float32).tiny gives NeMo
    elif guard == "eps":
        guard = float(np.finfo(np.float32).eps)
    elif isinstance(guard, bool) or not isinstance(guard, (int, float)):
        r.problem(f"preprocessor log_zero_guard_value={guard!r} is not a number, 'tiny' or 'eps'")
        guard = 2.0**-24
    if r.get_int("preprocessor.frame_splicing", 1) != 1:
        r.problem("preprocessor frame_splicing other than 1 is not supported")
    if r.get_bool("preprocessor.exact_pad", False):
        r.problem("preprocessor exact_pad=true (STFT without centering) is not supported")
    if r.get_bool("preprocessor.use_torchaudio", False):
        r.problem("preprocessor use_torchaudio=true (FilterbankFeaturesTA) is not supported")
    mag_power = r.get_float("preprocessor.mag_power", 2.0)
    if mag_power not in SUPPORTED_MAG_POWER:
        r.problem(f"preprocessor mag_power={mag_power:g} is not supported (only 1 or 2)")

    if n_fft > 0:
        check.need(schema.MEL_FILTERBANK, (1, n_mels, n_fft // 2 + 1))
    if win > 0:
        check.need(schema.MEL_WINDOW, (win,))
    return dict(sample_rate=sr, n_mels=n_mels, n_fft=n_fft, win_length=win, hop_length=hop,
                preemph=float(preemph), mag_power=mag_power, normalize=normalize or "", log_zero_guard=float(guard))


def _conv_out(n: int) -> int:
    """Length after one 3-wide, stride-2, pad-1 convolution (NeMo's calc_length)."""
    return (n + 2 - 3) // 2 + 1


def _causal_conv_out(n: int) -> int:
    """Length after one 3-wide, stride-2 causal convolution (padding 2 before, 1 after)."""
    return n // 2 + 1


def _encoder(r: _Reader, check: _ShapeCheck) -> Dict[str, Any]:
    """Effective ``ConformerEncoder`` settings, refusing what the engine cannot run."""
    if not isinstance(r.raw("encoder", None), dict):
        r.problem("the config has no 'encoder' section")
    r.target("encoder", "ConformerEncoder")
    feat_in = r.get_int("encoder.feat_in", minimum=1)
    n_layers = r.get_int("encoder.n_layers", minimum=1)
    d = r.get_int("encoder.d_model", minimum=1)
    n_heads = r.get_int("encoder.n_heads", 4, minimum=1)
    ff_dim = d * r.get_int("encoder.ff_expansion_factor", 4, minimum=1)
    kernel = r.get_int("encoder.conv_kernel_size", 31, minimum=1)
    norm = r.get_str("encoder.conv_norm_type", "batch_norm")
    sub = r.get_str("encoder.subsampling", "striding")
    factor = r.get_int("encoder.subsampling_factor", 4, minimum=1)
    channels = r.get_int("encoder.subsampling_conv_channels", -1, minimum=-1)
    if channels == -1:
        channels = d  # ConformerEncoder's default
    attention = r.get_str("encoder.self_attention_model", "rel_pos")
    use_bias = r.get_bool("encoder.use_bias", True)

    if sub not in SUPPORTED_SUBSAMPLING:
        r.problem(f"encoder subsampling={sub!r} is not supported (only dw_striding)")
    elif factor != SUPPORTED_SUBSAMPLING[sub]:
        r.problem(f"encoder subsampling_factor={factor} is not supported with {sub} (only {SUPPORTED_SUBSAMPLING[sub]})")
    if attention not in SUPPORTED_ATTENTION:
        r.problem(f"encoder self_attention_model={attention!r} is not supported (only rel_pos)")
    if norm not in SUPPORTED_CONV_NORM:
        r.problem(f"encoder conv_norm_type={norm!r} is not supported (supported: {', '.join(SUPPORTED_CONV_NORM)})")
    if d and n_heads and d % n_heads:
        r.problem(f"encoder d_model {d} is not divisible by n_heads {n_heads}")
    if kernel % 2 == 0:
        r.problem(f"encoder conv_kernel_size {kernel} is even; only symmetric (odd) kernels are supported")
    streaming, streaming_meta = encoder_streaming(r, kernel, factor)
    if r.raw("encoder.reduction", None) and r.get_int("encoder.reduction_factor", 1) > 1:
        r.problem("encoder reduction (time reduction inside the encoder) is not supported")
    feat_out = r.get_int("encoder.feat_out", -1, minimum=-1)
    if feat_out not in (-1, d):
        r.problem(f"encoder feat_out={feat_out} (an output projection) is not supported")

    n_mels = r.raw("preprocessor.features", 64)
    if feat_in and type(n_mels) is int and feat_in != n_mels:
        r.problem(f"encoder feat_in {feat_in} differs from the preprocessor's {n_mels} mel features")

    if not r.problems:
        _encoder_tensors(check, n_layers, d, n_heads, ff_dim, kernel, channels, feat_in, use_bias, norm,
                         streaming.get("causal", False))
    return dict(streaming_meta=streaming_meta, feat_in=feat_in, d_model=d, n_layers=n_layers, n_heads=n_heads, ff_dim=ff_dim, conv_kernel=kernel,
                conv_norm_type=norm or "", subsampling_factor=factor, subsampling_conv_channels=channels,
                xscaling=r.get_bool("encoder.xscaling", True), pos_emb_max_len=r.get_int("encoder.pos_emb_max_len", 5000),
                use_bias=use_bias)


def _encoder_tensors(check: _ShapeCheck, n_layers: int, d: int, h: int, ff: int, k: int, c: int, feat_in: int,
                     use_bias: bool, conv_norm: str, causal: bool) -> None:
    p = schema.SUBSAMPLING_PREFIX
    for i, shape in ((0, (c, 1, 3, 3)), (2, (c, 1, 3, 3)), (3, (c, c, 1, 1)), (5, (c, 1, 3, 3)), (6, (c, c, 1, 1))):
        check.need(f"{p}conv.{i}.weight", shape)
        check.need(f"{p}conv.{i}.bias", (c,))
    out = _causal_conv_out if causal else _conv_out
    f8 = out(out(out(feat_in)))
    check.need(f"{p}{schema.SUBSAMPLING_OUT}.weight", (d, c * f8))
    check.need(f"{p}{schema.SUBSAMPLING_OUT}.bias", (d,))

    def linear(name: str, rows: int, cols: int, bias: Optional[bool] = None) -> None:
        check.need(f"{name}.weight", (rows, cols))
        check.maybe(f"{name}.bias", (rows,), use_bias if bias is None else bias)

    for i in range(n_layers):
        def m(module: str) -> str:
            return schema.layer_module(i, module)

        for norm in (schema.NORM_FEED_FORWARD1, schema.NORM_SELF_ATT, schema.NORM_CONV, schema.NORM_FEED_FORWARD2,
                     schema.NORM_OUT):
            check.need(f"{m(norm)}.weight", (d,))
            check.need(f"{m(norm)}.bias", (d,))
        for linear1, linear2 in ((schema.FEED_FORWARD1_LINEAR1, schema.FEED_FORWARD1_LINEAR2),
                                 (schema.FEED_FORWARD2_LINEAR1, schema.FEED_FORWARD2_LINEAR2)):
            linear(m(linear1), ff, d)
            linear(m(linear2), d, ff)
        for proj in (schema.SELF_ATTN_LINEAR_Q, schema.SELF_ATTN_LINEAR_K, schema.SELF_ATTN_LINEAR_V,
                     schema.SELF_ATTN_LINEAR_OUT):
            linear(m(proj), d, d)
        linear(m(schema.SELF_ATTN_LINEAR_POS), d, d, bias=False)
        check.need(m(schema.SELF_ATTN_POS_BIAS_U), (h, d // h))
        check.need(m(schema.SELF_ATTN_POS_BIAS_V), (h, d // h))
        check.need(f"{m(schema.CONV_POINTWISE1)}.weight", (2 * d, d, 1))
        check.maybe(f"{m(schema.CONV_POINTWISE1)}.bias", (2 * d,), use_bias)
        check.need(f"{m(schema.CONV_DEPTHWISE)}.weight", (d, 1, k))
        check.maybe(f"{m(schema.CONV_DEPTHWISE)}.bias", (d,), use_bias)
        # A layer_norm conv module keeps NeMo's attribute name, batch_norm, without running stats.
        stats = ("weight", "bias", "running_mean", "running_var") if conv_norm == "batch_norm" else ("weight", "bias")
        for s in stats:
            check.need(f"{m(schema.CONV_NORM)}.{s}", (d,))
        check.need(f"{m(schema.CONV_POINTWISE2)}.weight", (d, d, 1))
        check.maybe(f"{m(schema.CONV_POINTWISE2)}.bias", (d,), use_bias)
    layers = {n[len(schema.LAYER_PREFIX):].split(".")[0] for n in check.shapes if n.startswith(schema.LAYER_PREFIX)}
    extra = sorted(layers - {str(i) for i in range(n_layers)})
    if extra:
        check.problems.append(f"the checkpoint has encoder layers {extra} beyond n_layers={n_layers}")


def _transducer(r: _Reader, check: _ShapeCheck, V: int, d_model: int, n_durations: int) -> Dict[str, Any]:
    """``RNNTDecoder`` (LSTM prediction net) and ``RNNTJoint`` settings and tensors."""
    r.target("decoder", "RNNTDecoder")
    r.target("joint", "RNNTJoint")
    H = r.get_int("decoder.prednet.pred_hidden", minimum=1)
    layers = r.get_int("decoder.prednet.pred_rnn_layers", 1, minimum=1)
    if not r.get_bool("decoder.blank_as_pad", True):
        r.problem("decoder blank_as_pad=false is not supported (the engine feeds blank as the zero SOS row)")
    if r.raw("decoder.normalization_mode", None) is not None:
        r.problem("decoder normalization_mode (a normalised prediction LSTM) is not supported")
    rnn_hidden = r.get_int("decoder.prednet.rnn_hidden_size", -1, minimum=-1)
    if rnn_hidden not in (-1, H):
        r.problem(f"decoder rnn_hidden_size={rnn_hidden} differs from pred_hidden={H} (a projected LSTM); not supported")
    J = r.get_int("joint.jointnet.joint_hidden", minimum=1)
    activation = r.get_str("joint.jointnet.activation", "relu")
    if activation not in SUPPORTED_JOINT_ACTIVATION:
        r.problem(f"joint activation={activation!r} is not supported (supported: {', '.join(SUPPORTED_JOINT_ACTIVATION)})")
    extra = r.get_int("joint.num_extra_outputs", n_durations)  # absent: the joint_net.2 shape check decides
    if extra != n_durations:
        r.problem(f"joint num_extra_outputs={extra} does not match the {n_durations} TDT durations")
    greedy_max = r.raw("decoding.greedy.max_symbols", None)
    if greedy_max is None:
        greedy_max = r.raw("decoding.greedy.max_symbols_per_step", None)
    if greedy_max is None:
        if r.has("decoding.greedy.max_symbols") or r.has("decoding.greedy.max_symbols_per_step"):
            r.warnings.append("decoding.greedy.max_symbols is null (unlimited in NeMo); writing 10")
        greedy_max = 10  # GreedyRNNTInferConfig.max_symbols_per_step
    if type(greedy_max) is not int or greedy_max < 1:
        r.problem(f"decoding.greedy.max_symbols should be a positive integer, not {greedy_max!r}")
        greedy_max = 10

    if not r.problems:
        check.need(f"{schema.PREDICTION_EMBED}.weight", (V + 1, H))
        for j in range(layers):
            check.need(schema.lstm_param("weight_ih", j), (4 * H, H))
            check.need(schema.lstm_param("weight_hh", j), (4 * H, H))
            check.need(schema.lstm_param("bias_ih", j), (4 * H,))
            check.need(schema.lstm_param("bias_hh", j), (4 * H,))
        check.need(f"{schema.JOINT_ENC}.weight", (J, d_model))
        check.need(f"{schema.JOINT_ENC}.bias", (J,))
        check.need(f"{schema.JOINT_PRED}.weight", (J, H))
        check.need(f"{schema.JOINT_PRED}.bias", (J,))
        check.need(f"{schema.JOINT_OUT}.weight", (V + 1 + n_durations, J))
        check.need(f"{schema.JOINT_OUT}.bias", (V + 1 + n_durations,))
    return dict(pred_hidden=H, pred_rnn_layers=layers, joint_hidden=J, activation=activation or "",
                max_symbols=greedy_max)


def _ctc_head(r: _Reader, check: _ShapeCheck, V: int, d_model: int, hybrid: bool) -> None:
    section = "aux_ctc.decoder" if hybrid else "decoder"
    head = schema.HYBRID_CTC_HEAD if hybrid else schema.CTC_HEAD
    r.target(section, "ConvASRDecoder")
    if not r.problems:
        check.need(f"{head}.weight", (V + 1, d_model, 1))
        check.need(f"{head}.bias", (V + 1,))


def _check_vocab_keys(r: _Reader, arch: str, V: int) -> None:
    """The config's own vocabulary sizes, where stated, must agree with the tokenizer."""
    paths = ["decoder.num_classes"] if arch == "ctc" else ["decoder.vocab_size", "joint.num_classes"]
    if arch.startswith("hybrid"):
        paths.append("aux_ctc.decoder.num_classes")
    for path in paths:
        v = r.raw(path, None)
        if type(v) is int and v > 0 and v != V:
            r.problem(f"config key '{path}' = {v}, but the tokenizer has {V} pieces")
