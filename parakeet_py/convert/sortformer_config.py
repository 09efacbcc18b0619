"""A NeMo ``SortformerEncLabelModel`` config and checkpoint -> the diarization GGUF metadata.

The FastConformer encoder and the preprocessor are read and checked as for ASR models
(:mod:`.nemo_config`); this adds the projection, NeMo's post-LN ``TransformerEncoder`` and the
sigmoid speaker head, and writes parakeet.cpp's diarization keys (``parakeet.arch`` =
``diarization``, ``parakeet.diar.*``) with the checkpoint's streaming configuration.
"""

from typing import Any, Dict, List, Tuple

from . import gguf_schema as schema
from .meta_value import MetaValue
from .nemo_config import ModelSpec, NemoConfig, _ENCODER_KEYS, _PREPROCESSOR_KEYS, _Reader, _ShapeCheck
from .nemo_config import _check_tensor_names, _encoder, _preprocessor
from .errors import UnsupportedModelError

MODEL_CLASS = "SortformerEncLabelModel"
SUBSAMPLING_UNITS_10MS = 8  # one output frame = 8 mel hops of 10 ms

# SortformerModules' streaming parameters: (config name, GGUF key, type, NeMo's default).
_STREAMING = (
    ("spkcache_len", schema.DIAR_SPKCACHE_LEN, "u32", 188),
    ("fifo_len", schema.DIAR_FIFO_LEN, "u32", 0),
    ("chunk_len", schema.DIAR_CHUNK_LEN, "u32", 188),
    ("spkcache_update_period", schema.DIAR_SPKCACHE_UPDATE_PERIOD, "u32", 188),
    ("chunk_left_context", schema.DIAR_CHUNK_LEFT_CONTEXT, "u32", 1),
    ("chunk_right_context", schema.DIAR_CHUNK_RIGHT_CONTEXT, "u32", 1),
    ("spkcache_sil_frames_per_spk", schema.DIAR_SPKCACHE_SIL_FRAMES_PER_SPK, "u32", 3),
    ("sil_threshold", schema.DIAR_SIL_THRESHOLD, "f32", 0.2),
    ("pred_score_threshold", schema.DIAR_PRED_SCORE_THRESHOLD, "f32", 0.25),
    ("scores_boost_latest", schema.DIAR_SCORES_BOOST_LATEST, "f32", 0.05),
    ("strong_boost_rate", schema.DIAR_STRONG_BOOST_RATE, "f32", 0.75),
    ("weak_boost_rate", schema.DIAR_WEAK_BOOST_RATE, "f32", 1.5),
    ("min_pos_scores_rate", schema.DIAR_MIN_POS_SCORES_RATE, "f32", 0.5),
)


def is_sortformer(cfg: NemoConfig) -> bool:
    """Whether the config is a Sortformer diarizer's (by its class, else by its sections)."""
    target = cfg.get("target", None)
    if isinstance(target, str):
        return target.rsplit(".", 1)[-1] == MODEL_CLASS
    return isinstance(cfg.get("sortformer_modules", None), dict) and isinstance(
        cfg.get("transformer_encoder", None), dict)


def gguf_tensor_name(name: str) -> str:
    """The GGUF name of checkpoint tensor ``name``: NeMo's, but for the transformer's output
    projection, whose NeMo name exceeds GGUF's 63 bytes (stored under parakeet.cpp's name)."""
    if name.startswith(schema.TF_LAYER_PREFIX):
        head, sep, leaf = name.rpartition(".")
        if head.endswith("." + schema.TF_OUT):
            return head[: -len(schema.TF_OUT)] + schema.ATTN_OUT_PROJ + sep + leaf
    return name


def build_diarization_spec(cfg: NemoConfig, shapes: Dict[str, Tuple[int, ...]]) -> ModelSpec:
    """Validate a Sortformer config against the engine and the tensors; produce the metadata."""
    r = _Reader(cfg)
    shapes = {gguf_tensor_name(n): s for n, s in shapes.items()}
    check = _ShapeCheck(shapes, r.problems)
    _check_tensor_names(shapes, r)
    pre = _preprocessor(r, check)
    enc = _encoder(r, check)
    if enc["streaming_meta"]:
        r.problem("a cache-aware (chunked_limited) encoder in a Sortformer model is not supported")

    r.target("sortformer_modules", "SortformerModules")
    r.target("transformer_encoder", "TransformerEncoder")
    n_spk = r.get_int("sortformer_modules.num_spks", 4, minimum=1)
    max_spk = r.get_int("max_num_of_spks", n_spk, minimum=1)
    if max_spk != n_spk:
        r.problem(f"max_num_of_spks {max_spk} differs from sortformer_modules.num_spks {n_spk}")
    fc = r.get_int("sortformer_modules.fc_d_model", 512, minimum=1)
    tf = r.get_int("model_defaults.tf_d_model", r.get_int("sortformer_modules.tf_d_model", 192), minimum=1)
    if fc != enc["d_model"]:
        r.problem(f"sortformer_modules.fc_d_model {fc} differs from the encoder's d_model {enc['d_model']}")
    if r.get_int("sortformer_modules.subsampling_factor", 8) != enc["subsampling_factor"]:
        r.problem("sortformer_modules.subsampling_factor differs from the encoder's")
    tfl = _transformer(r, check, tf)
    _head(check, fc, tf, n_spk)

    meta: List[MetaValue] = [MetaValue(schema.ARCH, "str", schema.ARCH_DIARIZATION)]
    meta += [MetaValue(key, kind, enc[k]) for k, key, kind in _ENCODER_KEYS]
    meta += [MetaValue(key, kind, pre[k]) for k, key, kind in _PREPROCESSOR_KEYS]
    meta += [
        MetaValue(schema.DIAR_N_SPEAKERS, "u32", n_spk),
        MetaValue(schema.DIAR_TF_D_MODEL, "u32", tf),
        MetaValue(schema.DIAR_TF_N_LAYERS, "u32", tfl["n_layers"]),
        MetaValue(schema.DIAR_TF_N_HEADS, "u32", tfl["n_heads"]),
        MetaValue(schema.DIAR_TF_INNER_SIZE, "u32", tfl["inner"]),
        MetaValue(schema.DIAR_UPSAMPLE_FACTOR, "u32", SUBSAMPLING_UNITS_10MS),
        MetaValue(schema.DIAR_FRAME_RESOLUTION_SEC, "f32", 0.01 * SUBSAMPLING_UNITS_10MS),
        # NeMo's PostProcessingParams defaults
        MetaValue(schema.DIAR_ONSET_THRESHOLD, "f32", 0.5),
        MetaValue(schema.DIAR_OFFSET_THRESHOLD, "f32", 0.5),
        MetaValue(schema.DIAR_STREAMING_MODE, "bool", r.get_bool("streaming_mode", False)),
    ]
    for name, key, kind, default in _STREAMING:
        path = f"sortformer_modules.{name}"
        value = r.get_int(path, default) if kind == "u32" else r.get_float(path, default)
        meta.append(MetaValue(key, kind, value))
    if r.problems:
        lines = "\n".join(f"  - {p}" for p in r.problems)
        raise UnsupportedModelError(f"this diarization model cannot be converted for the parakeet engine:\n{lines}")
    return ModelSpec(arch=schema.ARCH_DIARIZATION, vocab_size=0, metadata=meta, warnings=r.warnings)


def _transformer(r: _Reader, check: _ShapeCheck, tf: int) -> Dict[str, Any]:
    """NeMo's TransformerEncoder: post-LN, ReLU FFN; its tensors."""
    n_layers = r.get_int("transformer_encoder.num_layers", minimum=1)
    hidden = r.get_int("transformer_encoder.hidden_size", minimum=1)
    inner = r.get_int("transformer_encoder.inner_size", minimum=1)
    heads = r.get_int("transformer_encoder.num_attention_heads", 1, minimum=1)
    act = r.get_str("transformer_encoder.hidden_act", "relu")
    if hidden != tf:
        r.problem(f"transformer_encoder.hidden_size {hidden} differs from tf_d_model {tf}")
    if heads and hidden % heads:
        r.problem(f"transformer_encoder.hidden_size {hidden} is not divisible by {heads} heads")
    if act != "relu":
        r.problem(f"transformer_encoder.hidden_act={act!r} is not supported (only relu)")
    if r.get_bool("transformer_encoder.pre_ln", False):
        r.problem("transformer_encoder.pre_ln=true is not supported (Sortformer's is post-LN)")
    if r.raw("transformer_encoder.mask_future", False):
        r.problem("transformer_encoder.mask_future is not supported")
    for i in range(n_layers):
        def m(module: str) -> str:
            return schema.tf_layer_module(i, module)

        for proj in (schema.TF_QUERY, schema.TF_KEY, schema.TF_VALUE, schema.ATTN_OUT_PROJ):
            check.need(f"{m(proj)}.weight", (hidden, hidden))
            check.need(f"{m(proj)}.bias", (hidden,))
        for norm in (schema.TF_NORM1, schema.TF_NORM2):
            check.need(f"{m(norm)}.weight", (hidden,))
            check.need(f"{m(norm)}.bias", (hidden,))
        check.need(f"{m(schema.TF_DENSE_IN)}.weight", (inner, hidden))
        check.need(f"{m(schema.TF_DENSE_IN)}.bias", (inner,))
        check.need(f"{m(schema.TF_DENSE_OUT)}.weight", (hidden, inner))
        check.need(f"{m(schema.TF_DENSE_OUT)}.bias", (hidden,))
    return dict(n_layers=n_layers, n_heads=heads, inner=inner)


def _head(check: _ShapeCheck, fc: int, tf: int, n_spk: int) -> None:
    """encoder_proj (only when the widths differ: NeMo drops it otherwise) and the head."""
    if fc != tf:
        check.need(f"{schema.DIAR_ENCODER_PROJ}.weight", (tf, fc))
        check.need(f"{schema.DIAR_ENCODER_PROJ}.bias", (tf,))
    elif f"{schema.DIAR_ENCODER_PROJ}.weight" in check.shapes:
        check.problems.append("the checkpoint has an encoder_proj although fc_d_model == tf_d_model")
    check.need(f"{schema.DIAR_HEAD_HIDDEN}.weight", (tf, tf))
    check.need(f"{schema.DIAR_HEAD_HIDDEN}.bias", (tf,))
    check.need(f"{schema.DIAR_HEAD_SPKS}.weight", (n_spk, tf))
    check.need(f"{schema.DIAR_HEAD_SPKS}.bias", (n_spk,))
