"""parakeet: CPU inference for NVIDIA Parakeet speech-recognition models.

The compute lives in the bundled C library ``libparakeet``; this package binds it (cffi) and
holds the tools that need no native code, such as the ``.nemo`` → GGUF converter.
"""

__version__ = "0.1.0"
