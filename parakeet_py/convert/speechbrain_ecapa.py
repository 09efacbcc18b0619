"""Convert a SpeechBrain ECAPA-TDNN speaker encoder into voice-detect.cpp's ``voicedetect`` GGUF.

A SpeechBrain speaker model folder (``speechbrain/spkrec-ecapa-voxceleb``) holds
``hyperparams.yaml`` (the ``embedding_model: !new:speechbrain.lobes.models.ECAPA_TDNN.ECAPA_TDNN``
arguments) and ``embedding_model.ckpt`` (a plain ``torch.save`` of that module's state_dict).
The checkpoint is read with the converter's tensor-only unpickler (no PyTorch); every tensor is
written under its state-dict name, in F32, as voice-detect.cpp's converter does; with ``q8_0``
the kernel-1 convolutions with both widths at least 32 (and the input width a multiple of 32)
are stored as Q8_0 matrices [out, in] instead, as voice-detect.cpp quantises them: the bulk of
the work (tdnn1/tdnn2 of every block, mfa, the pooling's attention, fc); the kernel-3/5
convolutions and everything else stay F32. The engine
derives every width and kernel from the tensor shapes and runs block i with dilation i + 1, so a
configuration with other dilations, grouped convolutions or no global context is refused.

    from parakeet_py.convert.speechbrain_ecapa import convert_speechbrain_ecapa
    convert_speechbrain_ecapa("spkrec/embedding_model.ckpt", "ecapa.gguf")
"""

from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy as np
import yaml

from . import quantize
from . import voicedetect_schema as vd
from .errors import ConversionError, UnsupportedModelError
from .gguf_writer import GGML_TYPES, TensorPlan, write_gguf
from .meta_value import MetaValue
from .torch_checkpoint import TorchCheckpoint
from .voicedetect_meta import speaker_metadata

OUT_TYPES = ("f32", "q8_0")
ECAPA_CLASS = "speechbrain.lobes.models.ECAPA_TDNN.ECAPA_TDNN"
# ECAPA_TDNN's defaults (speechbrain 1.x), for arguments hyperparams.yaml leaves out.
_DEFAULTS = dict(channels=[512, 512, 512, 512, 1536], kernel_sizes=[5, 3, 3, 3, 1], dilations=[1, 2, 3, 4, 1],
                 attention_channels=128, res2net_scale=8, se_channels=128, global_context=True,
                 groups=[1, 1, 1, 1, 1], lin_neurons=192)


class _Tagged:
    """A HyperPyYAML node with a tag (``!new:...``, ``!ref``, ``!name:...``): kept, never run."""

    def __init__(self, tag: str, value: Any):
        self.tag, self.value = tag, value


class _HyperparamsLoader(yaml.SafeLoader):
    pass


def _tagged(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> _Tagged:
    if isinstance(node, yaml.MappingNode):
        value: Any = loader.construct_mapping(node, deep=True)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_scalar(node)
    return _Tagged("!" + suffix, value)


_HyperparamsLoader.add_multi_constructor("!", _tagged)


def _resolve(value: Any, top: Dict[str, Any], what: str) -> Any:
    """A value with ``!ref <key>`` replaced by the top-level key's value (nothing else is evaluated)."""
    if isinstance(value, list):
        return [_resolve(v, top, what) for v in value]
    if isinstance(value, _Tagged):
        ref = str(value.value).strip()
        if value.tag == "!ref" and ref.startswith("<") and ref.endswith(">") and ref[1:-1] in top:
            return _resolve(top[ref[1:-1]], top, what)
        raise UnsupportedModelError(f"hyperparams.yaml: {what} is '{value.tag} {value.value}', "
                                    "only plain values and '!ref <key>' can be read")
    return value


def read_ecapa_config(text: str) -> Dict[str, Any]:
    """ECAPA_TDNN's arguments from hyperparams.yaml (defaults for those it leaves out)."""
    try:
        top = yaml.load(text, Loader=_HyperparamsLoader)
    except yaml.YAMLError as e:
        raise ConversionError(f"hyperparams.yaml is not valid YAML: {e}") from e
    node = top.get("embedding_model") if isinstance(top, dict) else None
    if not isinstance(node, _Tagged) or node.tag != "!new:" + ECAPA_CLASS or not isinstance(node.value, dict):
        raise UnsupportedModelError(f"hyperparams.yaml: embedding_model is not a !new:{ECAPA_CLASS}")
    cfg = dict(_DEFAULTS)
    for key, value in node.value.items():
        cfg[key] = _resolve(value, top, f"embedding_model.{key}")
    if "input_size" not in cfg:
        raise UnsupportedModelError("hyperparams.yaml: embedding_model has no input_size")
    _check_supported(cfg)
    return cfg


def _check_supported(cfg: Dict[str, Any]) -> None:
    n = len(cfg["channels"])
    problems = []
    if not (len(cfg["kernel_sizes"]) == len(cfg["dilations"]) == n >= 3):
        problems.append("channels, kernel_sizes and dilations must be lists of one length, at least 3")
    elif list(cfg["dilations"]) != [1] + list(range(2, n)) + [1]:
        problems.append(f"dilations {cfg['dilations']} (the engine runs block i with dilation i + 1: "
                        f"{[1] + list(range(2, n)) + [1]})")
    if any(g != 1 for g in cfg["groups"]):
        problems.append(f"grouped convolutions {cfg['groups']}")
    if not cfg["global_context"]:
        problems.append("global_context false")
    if problems:
        raise UnsupportedModelError("this ECAPA_TDNN cannot run on the engine: " + "; ".join(problems))


def _expect(tensors, name: str, shape: tuple) -> None:
    if name not in tensors:
        raise ConversionError(f"embedding_model.ckpt has no tensor {name}")
    if tuple(tensors[name].shape) != shape:
        raise ConversionError(f"embedding_model.ckpt: {name} has shape {list(tensors[name].shape)}, "
                              f"hyperparams.yaml implies {list(shape)}")


def _metadata(cfg: Dict[str, Any], name: str) -> List[MetaValue]:
    ch = cfg["channels"]
    return speaker_metadata(name, vd.ARCH_ECAPA, int(cfg["lin_neurons"]), int(cfg["input_size"])) + [
        MetaValue(vd.ECAPA_CHANNELS, "u32", int(ch[0])),
        MetaValue(vd.ECAPA_N_BLOCKS, "u32", len(ch) - 1),
        MetaValue(vd.ECAPA_SE_CHANNELS, "u32", int(cfg["se_channels"])),
        MetaValue(vd.ECAPA_RES2NET_SCALE, "u32", int(cfg["res2net_scale"])),
        MetaValue(vd.ECAPA_ATTENTION_CHANNELS, "u32", int(cfg["attention_channels"])),
    ]


def _plan(key: str, ref: Any, out_type: str) -> TensorPlan:
    shape = tuple(ref.shape) or (1,)  # num_batches_tracked is a 0-d tensor
    kernel_one = key.endswith("conv.weight") and len(shape) == 3 and shape[2] == 1
    if out_type == "q8_0" and kernel_one and min(shape[:2]) >= 32 and shape[1] % quantize.QK8_0 == 0:
        matrix = shape[:2]
        data = lambda: quantize.encode(ref.numpy().astype(np.float32).reshape(matrix), "q8_0", key)  # noqa: E731
        return TensorPlan(key, matrix, GGML_TYPES["q8_0"], quantize.encoded_nbytes(matrix, "q8_0"), data)
    return TensorPlan(key, shape, GGML_TYPES["f32"], 4 * int(np.prod(shape)),
                      lambda: ref.numpy().astype(np.float32).reshape(shape))


def convert_speechbrain_ecapa(ckpt_path, gguf_path, out_type: str = "f32", name: Optional[str] = None) -> int:
    """Write the voicedetect GGUF of ``ckpt_path`` (hyperparams.yaml beside it); returns its size."""
    if out_type not in OUT_TYPES:
        raise ConversionError(f"a speaker encoder is written as {' or '.join(OUT_TYPES)}, not {out_type}")
    ckpt_path = Path(ckpt_path)
    hyper = ckpt_path.with_name("hyperparams.yaml")
    if not hyper.is_file():
        raise ConversionError(f"{hyper} not found: a SpeechBrain checkpoint needs its hyperparams.yaml beside it")
    cfg = read_ecapa_config(hyper.read_text(encoding="utf-8"))
    with open(ckpt_path, "rb") as stream:
        tensors = TorchCheckpoint(stream).tensors
        ch = cfg["channels"]
        _expect(tensors, "blocks.0.conv.conv.weight", (ch[0], cfg["input_size"], cfg["kernel_sizes"][0]))
        _expect(tensors, "fc.conv.weight", (cfg["lin_neurons"], 2 * ch[-1], 1))
        plans = [_plan(key, ref, out_type) for key, ref in tensors.items()]
        metadata = _metadata(cfg, name if name is not None else ckpt_path.parent.name)
        return write_gguf(gguf_path, metadata, plans, architecture=vd.ARCHITECTURE)
