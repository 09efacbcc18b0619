"""``parakeet-cli info``, ``convert`` and ``quantize``: inspect and produce model files."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, Tuple

import click
from tabulate import tabulate

from parakeet_py import Context
from parakeet_py.bundle import bundle_components, is_bundle
from parakeet_py.convert.quantize import OUT_TYPES

from .bundle_cmd import echo_components
from .common import MODEL_HELP, MODEL_PATH, attention_label, component_option, kernels_label

# info fields in display order, with their labels.
_INFO_ROWS = (
    ("arch", "architecture"), ("sample_rate", "sample rate (Hz)"), ("n_mels", "mel bins"),
    ("d_model", "encoder width"), ("n_layers", "encoder layers"), ("n_heads", "attention heads"),
    ("ff_dim", "feed-forward width"), ("subsampling_factor", "subsampling"), ("frame_sec", "seconds per frame"),
    ("vocab_size", "vocabulary"), ("has_ctc", "CTC head"), ("has_transducer", "transducer head"),
    ("pred_hidden", "prediction net width"), ("joint_hidden", "joint width"), ("max_symbols", "max symbols per frame"),
    ("durations", "TDT durations"),
)


def _megabytes(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def info_rows(info: Dict[str, Any]) -> List[Tuple[str, Any]]:
    rows: List[Tuple[str, Any]] = [("file", info.get("path", ""))]
    for key, label in _INFO_ROWS:
        if key in info:
            value = info[key]
            if isinstance(value, bool):
                value = "yes" if value else "no"
            elif isinstance(value, list):
                value = ", ".join(str(v) for v in value)
            rows.append((label, value))
    types = info.get("tensor_types", {})
    rows.append(("tensors", ", ".join(f"{n} {t}" for t, n in sorted(types.items()))))
    for cls, counts in sorted(info.get("tensor_classes", {}).items()):
        rows.append((f"  {cls} tensors", ", ".join(f"{n} {t}" for t, n in sorted(counts.items()))))
    if "file_bytes" in info:
        rows.append(("file size", _megabytes(int(info["file_bytes"]))))
    if "packed_bytes" in info:
        rows.append(("packed weights", _megabytes(int(info["packed_bytes"]))))
    streaming = info.get("streaming", {})
    if streaming.get("mode") == "cache_aware":
        a = info["attention"]
        rows.append(("attention", f"chunked[{a['left']},{a['right']}] (cache-aware: the model's default context)"))
        contexts = [f"[{c['left']},{c['right']}] {c['chunk_ms']:g} ms" for c in streaming["contexts"]]
        rows.append(("streaming", "cache-aware, contexts " + ", ".join(contexts) + " (the first is the default)"))
    elif "attention" in info:
        rows.append(("attention", f"{attention_label(info['attention'])} (auto: full up to "
                                  f"{info['auto_full_max_frames']} encoder frames, local above)"))
        if streaming:
            rows.append(("streaming", "buffered (NeMo's left / chunk / right windows)"))
    if "isa" in info:
        rows.append(("kernels", kernels_label(info)))
    return rows


@click.command("info")
@click.option("-m", "--model", required=True, type=MODEL_PATH, help=f"{MODEL_HELP}.")
@click.option("--json", "as_json", is_flag=True, help="Print the library's model description as JSON.")
@component_option()
def info(model: str, as_json: bool, component: Optional[str]) -> None:
    """Describe a model: architecture, sizes, decoder heads, tensor types.

    The file is loaded (memory-mapped) and checked exactly as for transcription, so a model
    that `info` accepts will run. A bundle (docs/bundles.md) lists its components; with
    --component, that ASR component is described.
    """
    if component is None and is_bundle(model):
        if as_json:
            click.echo(json.dumps(bundle_components(model), indent=2))
        else:
            echo_components(model)
        return
    with Context(model, component=component) as ctx:
        if as_json:
            click.echo(json.dumps(ctx.info, indent=2))
        else:
            click.echo(tabulate(info_rows(ctx.info), tablefmt="plain"))


def _print_report(report: Any, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
        return
    types = ", ".join(f"{n} {t}" for t, n in sorted(report.type_counts.items()))
    click.echo(f"wrote {report.output}: arch={report.arch} tensors={report.n_tensors} ({types}) "
               f"{report.bytes_written / 1e6:.1f} MB in {report.seconds:.1f} s")
    for warning in report.warnings:
        click.echo(f"warning: {warning}", err=True)
    for why in report.kept:
        click.echo(f"kept: {why}", err=True)


@click.command("convert")
@click.argument("nemo_file", type=click.Path(exists=True))
@click.argument("gguf_file", type=click.Path(dir_okay=False))
@click.option("--type", "out_type", type=click.Choice(OUT_TYPES), default="f32", show_default=True,
              help="Storage of the large matrix weights (everything else stays f32): f16 halves them, "
                   "q8_0 stores 8-bit blocks (about a quarter of f32), q6_k ... q4_0 ggml's 6- to 4-bit "
                   "blocks (K-quants need rows of 256 values; a weight that does not fit stays f32).")
@click.option("--name", help="general.name written into the file (default: the input file's name).")
@click.option("--json", "as_json", is_flag=True, help="Print the conversion report as JSON.")
def convert(nemo_file: str, gguf_file: str, out_type: str, name: Optional[str], as_json: bool) -> None:
    """Convert a NeMo checkpoint (NEMO_FILE, .nemo) into a parakeet GGUF file.

    A Silero VAD v6 ONNX file (silero_vad.onnx, as the silero-vad package ships it) becomes a
    `silero_vad` GGUF file (parakeet.cpp's schema; --type f32 or f16), read with the onnx
    package only. A SpeechBrain ECAPA-TDNN speaker model (embedding_model.ckpt, with its
    hyperparams.yaml beside it) becomes voice-detect.cpp's `voicedetect` GGUF (--type f32 or q8_0),
    and so does a 3D-Speaker CAM++, as its state_dict (campplus_*.bin) or its ONNX export (--type f32,
    f16 or q8_0).
    So does a WeSpeaker ResNet34, as a checkpoint (avg_model.pt, with an optional mean_vec.npy
    beside it) or as WeSpeaker's ONNX export (voxceleb_resnet34_LM.onnx), and 3D-Speaker's
    ERes2Net as its ONNX export (--type f32, f16 or q8_0). Which network an .onnx or .bin file
    holds is read from inside it. A Sortformer diarizer (SortformerEncLabelModel) becomes a
    diarization file (parakeet.arch "diarization", parakeet.cpp's parakeet.diar.* keys;
    docs/diarization.md).
    A CED sound tagger (a mispeech/ced-* folder with config.json and pytorch_model.bin, or the
    .bin with config.json beside it) becomes ced.cpp's `ced` GGUF file (--type f32, f16 or
    q8_0; docs/sound.md).

    No PyTorch or NeMo is needed. Supported: FastConformer CTC, RNN-T, TDT and hybrid
    TDT/RNN-T + CTC models with a SentencePiece tokenizer. A model the engine cannot run is
    refused with the reasons listed; GGUF_FILE is only written when the conversion succeeds.

    \b
    Example:
      parakeet-cli convert parakeet-tdt-0.6b-v2.nemo tdt-0.6b-q8_0.gguf --type q8_0
      parakeet-cli convert silero_vad.onnx silero-vad-f16.gguf --type f16
      parakeet-cli convert ced-tiny/ ced-tiny-q8_0.gguf --type q8_0
      parakeet-cli convert spkrec-ecapa-voxceleb/embedding_model.ckpt ecapa.gguf
      parakeet-cli convert voxceleb_resnet34_LM/avg_model.pt resnet34.gguf
      parakeet-cli convert voxceleb_resnet34_LM.onnx resnet34-q8_0.gguf --type q8_0
      parakeet-cli convert campplus_cn_common.bin campplus.gguf
    """
    speaker = _speaker_source(nemo_file)
    if speaker is not None:
        _convert_speaker(speaker, nemo_file, gguf_file, out_type, name, as_json)
        return
    if nemo_file.lower().endswith(".onnx"):
        _convert_silero(nemo_file, gguf_file, out_type, as_json)
        return
    if os.path.isdir(nemo_file) or nemo_file.lower().endswith(".bin"):
        _convert_ced(nemo_file, gguf_file, out_type, name, as_json)
        return
    from parakeet_py.convert import convert_nemo

    _print_report(convert_nemo(nemo_file, gguf_file, out_type, name=name), as_json)


def _convert_silero(onnx_file: str, gguf_file: str, out_type: str, as_json: bool) -> None:
    from parakeet_py.convert.silero_onnx import OUT_TYPES as VAD_TYPES, convert_silero_onnx

    if out_type not in VAD_TYPES:
        raise click.UsageError(f"a Silero VAD file is written as {' or '.join(VAD_TYPES)}, not {out_type}")
    size = convert_silero_onnx(onnx_file, gguf_file, out_type)
    if as_json:
        click.echo(json.dumps({"output": gguf_file, "kind": "silero_vad", "type": out_type, "bytes": size}))
    else:
        click.echo(f"wrote {gguf_file} (Silero VAD, {out_type}, {_megabytes(size)})")


def _convert_ced(checkpoint: str, gguf_file: str, out_type: str, name: Optional[str], as_json: bool) -> None:
    from parakeet_py.convert.ced_checkpoint import OUT_TYPES as CED_TYPES, convert_ced

    if out_type not in CED_TYPES:
        raise click.UsageError(f"a CED file is written as {', '.join(CED_TYPES)}, not {out_type}")
    size = convert_ced(checkpoint, gguf_file, out_type, name=name or "")
    if as_json:
        click.echo(json.dumps({"output": gguf_file, "kind": "ced", "type": out_type, "bytes": size}))
    else:
        click.echo(f"wrote {gguf_file} (CED sound tagger, {out_type}, {_megabytes(size)})")


def _speaker_source(path: str) -> Optional[str]:
    """The _SPEAKER_CONVERTERS key for `path`, told by its suffix and, for .onnx and .bin, by what
    is inside (an .onnx may be Silero's VAD, a .bin a CED tagger); None: not a speaker encoder."""
    lower = path.lower()
    if lower.endswith(".onnx"):
        from parakeet_py.convert.speaker_onnx import speaker_arch

        arch = speaker_arch(path)
        return None if arch is None else arch + "_onnx"
    if lower.endswith(".bin"):
        from parakeet_py.convert.campplus_checkpoint import is_campplus_checkpoint

        return "campplus" if is_campplus_checkpoint(path) else None
    return {".ckpt": "ecapa", ".pt": "wespeaker_resnet34"}.get(os.path.splitext(lower)[1])


# The speaker converters by source: module, function, and the network's name for the message.
_SPEAKER_CONVERTERS = {
    "ecapa": ("speechbrain_ecapa", "convert_speechbrain_ecapa", "ECAPA-TDNN"),
    "campplus": ("campplus_checkpoint", "convert_campplus", "CAM++"),
    "campplus_onnx": ("campplus_onnx", "convert_campplus_onnx", "CAM++"),
    "wespeaker_resnet34": ("wespeaker_resnet", "convert_wespeaker_resnet", "WeSpeaker ResNet34"),
    "wespeaker_resnet34_onnx": ("wespeaker_onnx", "convert_wespeaker_onnx", "WeSpeaker ResNet34"),
    "eres2net_onnx": ("eres2net_onnx", "convert_eres2net_onnx", "3D-Speaker ERes2Net"),
}


def _convert_speaker(source: str, ckpt_file: str, gguf_file: str, out_type: str, name: Optional[str],
                     as_json: bool) -> None:
    import importlib

    module, function, what = _SPEAKER_CONVERTERS[source]
    convert_speaker = getattr(importlib.import_module(f"parakeet_py.convert.{module}"), function)
    size = convert_speaker(ckpt_file, gguf_file, out_type, name=name)
    if as_json:
        click.echo(json.dumps({"output": gguf_file, "kind": "voicedetect", "type": out_type, "bytes": size}))
    else:
        click.echo(f"wrote {gguf_file} ({what} speaker encoder, {out_type}, {_megabytes(size)})")


@click.command("quantize")
@click.argument("in_file", type=click.Path(exists=True, dir_okay=False))
@click.argument("out_file", type=click.Path(dir_okay=False))
@click.option("--type", "out_type", type=click.Choice(OUT_TYPES), default="q8_0", show_default=True,
              help="New storage of the large matrix weights; f32 decodes every tensor of any file to "
                   "plain floats.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def quantize(in_file: str, out_file: str, out_type: str, as_json: bool) -> None:
    """Rewrite a parakeet GGUF file (IN_FILE) with its matrix weights in another type (OUT_FILE).

    The allowlisted matrix weights that fit the type's blocks are re-encoded (byte for byte as
    ggml's reference quantisers; from a quantised file they are decoded first); every other
    tensor and all metadata are copied unchanged. --type f32 decodes every tensor of any file.

    \b
    Examples:
      parakeet-cli quantize model-f32.gguf model-q4_k.gguf --type q4_k
      parakeet-cli quantize model-q5_k.gguf model-f32.gguf --type f32
    """
    from parakeet_py.convert import requantize_gguf

    _print_report(requantize_gguf(in_file, out_file, out_type), as_json)
