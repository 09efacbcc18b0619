"""Audio in (libparakeet's ``src/audio``): any file, bytes, file object or numpy array → float32
mono samples at the model's rate.

``prepare`` is the entry point (:func:`prepare_audio`, :func:`load_audio`); ``decode`` picks the
decoder for a file from its first bytes (``formats`` sniffs them), ``sndfile`` (libsndfile) or
``pyav`` (FFmpeg), and ``samples`` holds the conversions every path shares.
"""

from .prepare import AudioSource, load_audio, prepare_audio

__all__ = ["AudioSource", "load_audio", "prepare_audio"]
