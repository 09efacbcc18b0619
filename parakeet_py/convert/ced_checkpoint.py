"""Convert a CED checkpoint (Xiaomi's ``mispeech/ced-*``: ``config.json`` and the PyTorch
``pytorch_model.bin`` state_dict) into ced.cpp's ``ced`` GGUF, which libparakeet loads as a
sound-event tagger. The state_dict is read with the tensor-only unpickler: no torch import.

Tensor names stay the state_dict's (``encoder.*``, ``outputlayer.{0,1}.*``); the front end's
filterbank and window are added as ``ced.mel_filterbank`` / ``ced.mel_window`` (ced_mel.py).
With ``f16`` or ``q8_0`` only the attention and MLP matrices and the output Linear are stored in
that type (q8_0 where the row length is a multiple of 32, as ced.cpp does); everything else F32.

    from parakeet_py.convert.ced_checkpoint import convert_ced
    convert_ced("ced-tiny/", "ced-tiny-q8_0.gguf", out_type="q8_0")
"""

import json
import re
from pathlib import Path
from typing import Dict, List

import numpy as np

from . import quantize
from .ced_mel import htk_mel_filterbank, periodic_hann
from .errors import ConversionError
from .gguf_writer import GGML_TYPES, TensorPlan, write_gguf
from .meta_value import MetaValue
from .torch_checkpoint import TorchCheckpoint

ARCHITECTURE = "ced"
OUT_TYPES = ("f32", "f16", "q8_0")
_QUANTISABLE = re.compile(r"^(encoder\.blocks\.\d+\.(attn\.qkv|attn\.proj|mlp\.fc1|mlp\.fc2)|outputlayer\.1)\.weight$")
# config.json keys the engine needs, with the defaults of CED's CedConfig.
_DEFAULTS = dict(embed_dim=768, depth=12, num_heads=12, mlp_ratio=4.0, outputdim=527, patch_size=16, patch_stride=16,
                 target_length=1012, pooling="mean", qkv_bias=True, n_mels=64, n_fft=512, win_size=512,
                 hop_size=160, f_min=0.0, f_max=8000.0, center=True)


def _stored_type(name: str, shape, out_type: str) -> str:
    if out_type == "f32" or not _QUANTISABLE.match(name) or len(shape) != 2 or min(shape) < 32:
        return "f32"
    if out_type == "q8_0" and shape[-1] % quantize.QK8_0:
        return "f32"
    return out_type


def _paths(in_path: Path):
    if in_path.is_dir():
        return in_path / "config.json", in_path / "pytorch_model.bin"
    return in_path.with_name("config.json"), in_path


def _metadata(cfg: dict, name: str) -> List[MetaValue]:
    c = {k: cfg.get(k, v) for k, v in _DEFAULTS.items()}
    if c["pooling"] != "mean":
        raise ConversionError(f"CED pooling {c['pooling']!r} is not supported (only 'mean')")
    id2label = cfg.get("id2label") or {}
    labels = [str(id2label.get(str(i), id2label.get(i, f"class {i}"))) for i in range(int(c["outputdim"]))]
    u32 = ("embed_dim", "depth", "num_heads", "outputdim", "patch_size", "patch_stride", "target_length", "n_mels",
           "n_fft", "win_size", "hop_size")
    meta = [MetaValue("general.name", "str", name), MetaValue("ced.arch", "str", "ced")]
    meta += [MetaValue(f"ced.{k}", "u32", int(c[k])) for k in u32]
    meta += [
        MetaValue("ced.mlp_ratio", "f32", float(c["mlp_ratio"])),
        MetaValue("ced.qkv_bias", "bool", bool(c["qkv_bias"])),
        MetaValue("ced.pooling", "str", "mean"),
        MetaValue("ced.ln_eps_encoder", "f32", 1e-6),
        MetaValue("ced.ln_eps_head", "f32", 1e-5),
        MetaValue("ced.bn_eps", "f32", 1e-5),
        MetaValue("ced.sample_rate", "u32", 16000),
        MetaValue("ced.n_freqs", "u32", int(c["n_fft"]) // 2 + 1),
        MetaValue("ced.f_min", "f32", float(c["f_min"])),
        MetaValue("ced.f_max", "f32", float(c["f_max"] or 8000.0)),
        MetaValue("ced.center", "bool", bool(c["center"])),
        MetaValue("ced.a2db_multiplier", "f32", 10.0),
        MetaValue("ced.a2db_amin", "f32", 1e-10),
        MetaValue("ced.a2db_top_db", "f32", 120.0),
        MetaValue("ced.a2db_ref", "f32", 1.0),
        MetaValue("ced.labels", "str[]", labels),
    ]
    return meta


def _plan(name: str, array: np.ndarray, type_name: str) -> TensorPlan:
    data = quantize.encode(array, type_name, name)
    return TensorPlan(name, tuple(array.shape), GGML_TYPES[type_name], data.nbytes, (lambda d=data: d))


def convert_ced(in_path, out_path, out_type: str = "f32", name: str = "") -> int:
    """Write ``out_path`` from the CED checkpoint at ``in_path`` (a folder with ``config.json`` and
    ``pytorch_model.bin``, or the ``.bin`` with ``config.json`` beside it); returns the file size.
    Raises ConversionError with a readable message on any problem."""
    if out_type not in OUT_TYPES:
        raise ConversionError(f"unknown type {out_type!r} for a CED file (known: {', '.join(OUT_TYPES)})")
    in_path = Path(in_path)
    config_path, weights_path = _paths(in_path)
    try:
        cfg = json.loads(config_path.read_text())
    except (OSError, ValueError) as e:
        raise ConversionError(f"cannot read the CED config {config_path}: {e}") from e
    if not isinstance(cfg, dict):
        raise ConversionError(f"{config_path} is not a JSON object")
    meta = _metadata(cfg, name or in_path.stem)
    n_mels, n_fft = int(cfg.get("n_mels", 64)), int(cfg.get("n_fft", 512))
    fb = htk_mel_filterbank(n_fft, n_mels, 16000, float(cfg.get("f_min", 0.0)), float(cfg.get("f_max") or 8000.0))
    plans = [_plan("ced.mel_filterbank", fb, "f32"), _plan("ced.mel_window", periodic_hann(n_fft), "f32")]
    try:
        with open(weights_path, "rb") as stream:
            tensors: Dict[str, np.ndarray] = {k: t.numpy().astype(np.float32) for k, t in
                                              TorchCheckpoint(stream).tensors.items() if t.ndim > 0}
    except OSError as e:
        raise ConversionError(f"cannot read the CED weights {weights_path}: {e}") from e
    for required in ("encoder.patch_embed.proj.weight", "outputlayer.1.weight"):
        if required not in tensors:
            raise ConversionError(f"{weights_path} is not a CED checkpoint: it has no '{required}'")
    for tname, array in tensors.items():
        if tname.startswith(("encoder.", "outputlayer.")):
            plans.append(_plan(tname, array, _stored_type(tname, array.shape, out_type)))
    return write_gguf(out_path, meta, plans, architecture=ARCHITECTURE)
