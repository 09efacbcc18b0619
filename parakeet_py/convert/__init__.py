"""Convert NVIDIA NeMo ``.nemo`` checkpoints to the parakeet GGUF format, without PyTorch.

    from parakeet_py.convert import convert_nemo, requantize_gguf
    report = convert_nemo("model.nemo", "model.gguf", out_type="q8_0")

The GGUF schema is the one of the published parakeet.cpp files (``general.architecture =
"parakeet"``, NeMo state_dict names verbatim, ``parakeet.*`` metadata).
"""

from .convert import convert_nemo
from .errors import (
    ArchiveError,
    CheckpointError,
    ConversionError,
    TokenizerError,
    UnsafePickleError,
    UnsupportedModelError,
)
from .quantize import OUT_TYPES
from .report import ConversionReport
from .requantize import requantize_gguf

__all__ = [
    "convert_nemo",
    "requantize_gguf",
    "ConversionReport",
    "ConversionError",
    "ArchiveError",
    "CheckpointError",
    "UnsafePickleError",
    "UnsupportedModelError",
    "TokenizerError",
    "OUT_TYPES",
]
