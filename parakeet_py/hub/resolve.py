"""``resolve_model``: the one function every place that opens a model calls, turning a path or
a model name into the path of a GGUF file.

* an existing path is returned as it is (a local file always wins), and so is anything that
  is not a name, so a missing file is reported by the loader as before;
* ``OWNER/REPO[/PATH][@REVISION][:TYPE]`` (or a short alias) downloads the file with
  huggingface_hub; a ``.nemo`` (``.onnx`` for a VAD, SpeechBrain's ``embedding_model.ckpt``
  for a speaker encoder, CED's ``pytorch_model.bin`` for a sound tagger) is converted once to
  GGUF at TYPE, a ``.gguf`` is used as it is (or requantised to an explicit TYPE);
* a VAD named ``silero`` is the installed silero-vad package's model.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Callable, Optional, Union

from ..silero_package import default_model
from .aliases import DEFAULT_TYPES, PACKAGE_VAD_NAMES
from .errors import HubError, disk_full, disk_full_error
from .names import HubName, parse_name


def resolve_model(model: Union[str, "os.PathLike[str]"], kind: str = "asr") -> str:
    """The path of the GGUF file that ``model`` (a path or a name) stands for; ``kind`` (asr,
    diarize, vad, speaker, sound) picks the aliases, the default type and the files a repo may
    hold. Raises
    HubError (one line) when a name cannot be served."""
    text = os.fspath(model)
    if os.path.exists(text):
        return text
    if kind == "vad" and text.partition(":")[0].lower() in PACKAGE_VAD_NAMES:
        return str(default_model(text.partition(":")[2].lower() or DEFAULT_TYPES["vad"]))
    name = parse_name(text, kind)
    return text if name is None else str(pull(name, kind, shown=text))


def pull(name: HubName, kind: str, shown: Optional[str] = None) -> Path:
    """Download ``name``'s file and convert it once; the path of the GGUF file to load."""
    # Imported here: opening a local file needs neither huggingface_hub nor the converter.
    from ..convert import OUT_TYPES, ConversionError
    from . import cache, download

    shown = shown or str(name)
    if name.out_type is not None and name.out_type not in OUT_TYPES:
        raise HubError(f"{shown}: unknown type {name.out_type!r}; choose one of {', '.join(OUT_TYPES)}")
    source = download.fetch(name, kind, shown)
    folder = download.repo_folder(name.repo_id)
    commit, file = download.place_in_snapshot(source)
    record = {"name": name.repo_id, "file": file, "commit": commit, "revision": name.revision or "main", "kind": kind}
    if source.suffix.lower() == ".gguf" and name.out_type is None:
        cache.remember(source, folder, {**record, "type": "as published"})
        return source
    out_type = name.out_type or DEFAULT_TYPES[kind]
    target = cache.converted_path(folder, source, out_type)
    try:
        cache.convert_once(target, _converter(source, out_type, shown, name.repo_id.rpartition("/")[2]))
    except ConversionError as e:
        if disk_full(e, target.parent, source.stat().st_size):
            raise disk_full_error(shown, f"converting to {out_type}", str(target.parent)) from e
        raise HubError(f"{shown}: cannot convert {file} to {out_type}: {e}") from e
    cache.remember(target, folder, {**record, "type": out_type})  # the latest revision that gave these bytes
    return target


def _converter(source: Path, out_type: str, shown: str, repo_name: str) -> Callable[[Path], Any]:
    """How to make ``source``'s GGUF at ``out_type``: the NeMo converter, the Silero ONNX one,
    SpeechBrain's ECAPA one, CED's (both name the model after its repo, not after the snapshot
    folder the checkpoint lies in), or the requantiser for a GGUF given with an explicit type."""
    from ..convert import convert_nemo, requantize_gguf
    from ..convert.ced_checkpoint import convert_ced
    from ..convert.silero_onnx import convert_silero_onnx
    from ..convert.speechbrain_ecapa import convert_speechbrain_ecapa

    def run(target: Path) -> Any:
        _notice(f"parakeet: converting {shown} to GGUF ({out_type}), once; cached in {target.parent}")
        suffix = source.suffix.lower()
        if suffix == ".nemo":
            return convert_nemo(source, target, out_type)
        if suffix == ".onnx":
            return convert_silero_onnx(source, target, out_type)
        if suffix == ".ckpt":
            return convert_speechbrain_ecapa(source, target, out_type, name=repo_name)
        if suffix == ".bin":
            return convert_ced(source, target, out_type, name=repo_name)
        return requantize_gguf(source, target, out_type)

    return run


def _notice(line: str) -> None:
    """A line on stderr beside huggingface_hub's progress bars (silenced with them, by
    HF_HUB_DISABLE_PROGRESS_BARS)."""
    from huggingface_hub.utils import are_progress_bars_disabled

    if not are_progress_bars_disabled():
        print(line, file=sys.stderr, flush=True)


__all__ = ["resolve_model", "pull"]
