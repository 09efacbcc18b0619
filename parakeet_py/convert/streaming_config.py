"""The cache-aware streaming part of a NeMo encoder config → ``parakeet.encoder.*`` / ``parakeet.streaming.*``.

Cache-aware FastConformer models (NeMo's ``examples/asr/conf/fastconformer/cache_aware_streaming``)
are trained with ``att_context_style: chunked_limited``, one or more ``att_context_size`` pairs
[L, R] (the first is the default), causal downsampling and causal depthwise convolutions. The keys
are parakeet.cpp's (``../docs/gguf.md``): the default pair as ``att_context_left/right``, every pair
flattened in ``att_context_presets``, and the streaming sizes NeMo's ``setup_streaming_params``
derives for the default pair (``parakeet.streaming.*``; the engine derives them itself for any pair,
they are written for other readers of the file).
"""

from typing import Any, List, Optional, Tuple

from . import gguf_schema as schema
from .meta_value import MetaValue

STYLES = ("regular", "chunked_limited")


def _pairs(raw: Any) -> Optional[List[Tuple[int, int]]]:
    """[L, R] or [[L, R], ...] as a list of int pairs; None when the shape is wrong."""
    if not isinstance(raw, list) or not raw:
        return None
    items = raw if isinstance(raw[0], list) else [raw]
    out = []
    for item in items:
        if not isinstance(item, list) or len(item) != 2 or not all(type(v) is int for v in item):
            return None
        out.append((item[0], item[1]))
    return out


def streaming_sizes(left: int, right: int, factor: int) -> dict:
    """NeMo's setup_streaming_params for chunked_limited with dw_striding (sampling frames [1, factor])."""
    return {
        "chunk_size": [1 + factor * right, factor + factor * right],
        "shift_size": [1 + factor * right, factor + factor * right],
        "pre_encode_cache_size": [0, factor + 1],
        "cache_drop_size": 0,
        "last_channel_cache_size": left,
        "valid_out_len": right + 1,
        "drop_extra_pre_encoded": 1 + ((factor + 1) - 1) // factor,  # 1 + (pre_encode_cache - 1) // factor
    }


def encoder_streaming(r, kernel: int, factor: int) -> Tuple[dict, List[MetaValue]]:
    """Validates the streaming keys of ``encoder``; returns (fields for the encoder, metadata).

    ``r`` is nemo_config's reader (problems are collected on it). Regular (offline) models give
    no metadata, so their files stay as they were.
    """
    style = r.get_str("encoder.att_context_style", "regular")
    causal_sub = r.get_bool("encoder.causal_downsampling", False)
    conv_ctx = r.raw("encoder.conv_context_size", None)
    conv_causal = conv_ctx == "causal" or conv_ctx == [kernel - 1, 0]
    if conv_ctx is not None and not conv_causal and conv_ctx != [(kernel - 1) // 2, (kernel - 1) // 2]:
        r.problem(f"encoder conv_context_size={conv_ctx!r} is not supported (symmetric or 'causal' only)")
    if style not in STYLES:
        r.problem(f"encoder att_context_style={style!r} is not supported (supported: {', '.join(STYLES)})")
        return {}, []
    raw_ctx = r.raw("encoder.att_context_size", None)
    if style == "regular":
        if raw_ctx not in (None, [-1, -1]):
            r.problem(f"encoder att_context_size={raw_ctx!r} (limited-context attention) is not supported "
                      "with att_context_style 'regular'")
        if causal_sub or conv_causal:
            r.problem("causal downsampling or causal convolutions are supported only in cache-aware models "
                      "(att_context_style chunked_limited)")
        return {}, []

    pairs = _pairs(raw_ctx)
    if pairs is None:
        r.problem(f"encoder att_context_size={raw_ctx!r} is not an [L, R] pair or a list of them")
        return {}, []
    for left, right in pairs:
        if left < 0 or right < 0:
            r.problem(f"encoder att_context_size [{left}, {right}]: unlimited context (-1) is not supported for "
                      "cache-aware streaming")
        elif left % (right + 1):
            r.problem(f"encoder att_context_size [{left}, {right}]: L must be a multiple of R + 1 (NeMo's rule)")
    if not causal_sub:
        r.problem("a chunked_limited encoder without causal_downsampling is not supported")
    if not conv_causal:
        r.problem("a chunked_limited encoder without conv_context_size 'causal' is not supported")
    if r.problems:
        return {}, []
    left, right = pairs[0]
    sizes = streaming_sizes(left, right, factor)
    meta = [
        MetaValue(schema.ENCODER_ATT_CONTEXT_STYLE, "str", style),
        MetaValue(schema.ENCODER_ATT_CONTEXT_LEFT, "u32", left),
        MetaValue(schema.ENCODER_ATT_CONTEXT_RIGHT, "u32", right),
        MetaValue(schema.ENCODER_ATT_CONTEXT_PRESETS, "i32[]", [v for p in pairs for v in p]),
        MetaValue(schema.ENCODER_CAUSAL_DOWNSAMPLING, "bool", True),
        MetaValue(schema.ENCODER_CONV_CAUSAL, "bool", True),
        MetaValue(schema.STREAMING_CHUNK_SIZE, "i32[]", sizes["chunk_size"]),
        MetaValue(schema.STREAMING_SHIFT_SIZE, "i32[]", sizes["shift_size"]),
        MetaValue(schema.STREAMING_PRE_ENCODE_CACHE_SIZE, "i32[]", sizes["pre_encode_cache_size"]),
        MetaValue(schema.STREAMING_CACHE_DROP_SIZE, "u32", sizes["cache_drop_size"]),
        MetaValue(schema.STREAMING_LAST_CHANNEL_CACHE_SIZE, "u32", sizes["last_channel_cache_size"]),
        MetaValue(schema.STREAMING_VALID_OUT_LEN, "u32", sizes["valid_out_len"]),
        MetaValue(schema.STREAMING_DROP_EXTRA_PRE_ENCODED, "u32", sizes["drop_extra_pre_encoded"]),
    ]
    return {"causal": True, "contexts": pairs}, meta
