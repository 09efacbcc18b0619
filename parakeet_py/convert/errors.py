"""Exceptions raised by the ``.nemo`` → GGUF converter.

Every failure the user can cause (a bad path, a corrupt archive, a model the engine cannot
run, an unsafe checkpoint) is a :class:`ConversionError` with a message that names the
file or setting at fault, so the CLI can print it as is.
"""


class ConversionError(Exception):
    """Base class: the conversion cannot proceed; the message says why."""


class ArchiveError(ConversionError):
    """The ``.nemo`` file is not a readable tar, or a required member is missing or unsafe."""


class CheckpointError(ConversionError):
    """``model_weights.ckpt`` is not a PyTorch zip checkpoint we can read."""


class UnsafePickleError(CheckpointError):
    """The checkpoint's pickle asked for something other than rebuilding tensors."""


class UnsupportedModelError(ConversionError):
    """The model uses a feature the engine does not implement (or its config is inconsistent)."""


class TokenizerError(ConversionError):
    """No usable SentencePiece vocabulary was found in the archive."""
