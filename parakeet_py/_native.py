"""Locating and loading ``libparakeet`` through cffi (ABI mode, no compiler needed)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import cffi

# Declarations of the C ABI used from Python; they mirror libparakeet/include/parakeet_capi.h
# (tests/python/test_native.py checks that every function declared here exists there).
CDEF = """
int parakeet_capi_abi_version(void);
"""

# The ABI version this binding was written for.
EXPECTED_ABI_VERSION = 1

_LIB_ENV = "PARAKEET_LIBRARY"
_lock = threading.Lock()
_loaded = None


def library_path() -> Path:
    """Path of the libparakeet to load: $PARAKEET_LIBRARY if set, else the bundled one."""
    override = os.environ.get(_LIB_ENV)
    if override:
        return Path(override)
    return Path(__file__).with_name("libparakeet.so")


def load():
    """Return ``(ffi, lib)``, loading the library on first use (thread-safe)."""
    global _loaded
    with _lock:
        if _loaded is None:
            path = library_path()
            if not path.exists():
                raise OSError(
                    f"libparakeet not found at {path}; reinstall the package or set "
                    f"{_LIB_ENV} to a built libparakeet.so"
                )
            ffi = cffi.FFI()
            ffi.cdef(CDEF)
            lib = ffi.dlopen(str(path))
            version = lib.parakeet_capi_abi_version()
            if version != EXPECTED_ABI_VERSION:
                raise OSError(
                    f"{path} has C ABI version {version}, this binding needs "
                    f"{EXPECTED_ABI_VERSION}"
                )
            _loaded = (ffi, lib)
        return _loaded
