"""Silero VAD's official model, the ONNX file inside the installed ``silero-vad`` package,
converted once to GGUF. Apart from ``vad`` so that model names (``parakeet_py.hub``) can offer
it as an alias while ``vad`` resolves names through the hub, without an import circle."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Optional

from .errors import InvalidArgument
from .synthetic_model import cache_dir


def package_onnx() -> Path:
    """The ONNX file the installed ``silero-vad`` package ships (found without importing it,
    which would import torch)."""
    import importlib.util

    spec = importlib.util.find_spec("silero_vad")
    if spec is None or not spec.submodule_search_locations:
        raise InvalidArgument("the silero-vad package is not installed (pip install 'parakeet[vad]')")
    path = Path(list(spec.submodule_search_locations)[0]) / "data" / "silero_vad.onnx"
    if not path.is_file():
        raise InvalidArgument(f"the silero-vad package has no {path.name}")
    return path


def default_model(out_type: str = "f32", directory: Optional[Path] = None) -> Path:
    """The installed ``silero-vad`` package's model as a GGUF file, converted once into the
    cache ($PARAKEET_CACHE or ~/.cache/parakeet; the name holds the ONNX's hash)."""
    from .convert.silero_onnx import convert_silero_onnx

    onnx_path = package_onnx()
    digest = hashlib.sha256(onnx_path.read_bytes()).hexdigest()[:16]
    directory = cache_dir() if directory is None else Path(directory)
    path = directory / f"silero-vad-{digest}-{out_type}.gguf"
    if not path.exists():
        directory.mkdir(parents=True, exist_ok=True)
        try:
            from importlib.metadata import version

            source_version = version("silero-vad")
        except Exception:
            source_version = ""
        convert_silero_onnx(onnx_path, path, out_type, version=source_version)  # written atomically
    return path
