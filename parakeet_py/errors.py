"""The exceptions of the ``parakeet_py`` inference API: :class:`ParakeetError` and one subclass
per error code of the C ABI (``PARAKEET_ERROR_*`` in ``parakeet_capi.h``).

Every failure the library reports carries a code beside its message; the binding raises the
subclass for that code (:func:`error_for_code`), so a caller can tell its own mistake
(:class:`InvalidArgument`, :class:`InvalidAudio`, :class:`Unsupported`) from the model file's
(:class:`BadModel`) and the library's (:class:`OutOfMemory`, :class:`InternalError`). Failures
found in Python (unreadable audio, an unknown decoder name, a closed context) raise the same
subclasses. ``except ParakeetError`` still catches them all.
"""

from __future__ import annotations

from typing import Dict, Optional, Type

# The C ABI's error codes (PARAKEET_ERROR_*; tests/python/test_native.py checks them against the header).
ERROR_NONE = 0
ERROR_INVALID_ARGUMENT = 1
ERROR_INVALID_AUDIO = 2
ERROR_BAD_MODEL = 3
ERROR_UNSUPPORTED = 4
ERROR_CANCELLED = 5
ERROR_OUT_OF_MEMORY = 6
ERROR_INTERNAL = 7


class ParakeetError(Exception):
    """A request could not be served: the message says why, :attr:`code` what kind of failure.

    For failures inside libparakeet the message is the library's own, read from
    ``parakeet_capi_thread_last_error()`` right after the failing call on the same thread, so
    it is exact even when several threads fail at once; the exception is the subclass of its
    code. Failures found in Python carry a message written here.
    """

    #: The ``PARAKEET_ERROR_*`` code of this kind of failure (each subclass has its own).
    code: int = ERROR_INTERNAL

    def __init__(self, *args: object, code: Optional[int] = None) -> None:
        super().__init__(*args)
        if code is not None:
            self.code = code

    @property
    def message(self) -> str:
        """The error message (the same as ``str(err)``)."""
        return str(self.args[0]) if self.args else ""


class InvalidArgument(ParakeetError):
    """A bad argument or option: out of range, of the wrong type, an unknown name or key, a
    closed context or stream."""

    code = ERROR_INVALID_ARGUMENT


class InvalidAudio(ParakeetError):
    """Audio that cannot be read or used: a missing or corrupt file, NaN/Inf samples, a bad
    sample rate, an array of the wrong shape."""

    code = ERROR_INVALID_AUDIO


class BadModel(ParakeetError):
    """The file is not a model this library can run (missing, corrupt, another kind of GGUF)."""

    code = ERROR_BAD_MODEL


class Unsupported(ParakeetError):
    """The model cannot do what was asked: a head it lacks (beam search or ``decoder="tdt"`` on a
    CTC-only model, ``decoder="ctc"`` on a TDT-only one), or a context of another model kind."""

    code = ERROR_UNSUPPORTED


class Cancelled(ParakeetError):
    """A request stopped because its progress callback asked for it (returned ``False``).

    A callback that raises also cancels the request, but then ``transcribe`` raises the
    callback's own exception, not this one.
    """

    code = ERROR_CANCELLED


class OutOfMemory(ParakeetError):
    """The library could not allocate the memory a request (or a load) needs."""

    code = ERROR_OUT_OF_MEMORY


class InternalError(ParakeetError):
    """A failure inside the library or the binding (a bug: please report it), or a library that
    cannot be found or loaded."""

    code = ERROR_INTERNAL


_BY_CODE: Dict[int, Type[ParakeetError]] = {cls.code: cls for cls in (
    InvalidArgument, InvalidAudio, BadModel, Unsupported, Cancelled, OutOfMemory, InternalError)}


def error_for_code(code: int, message: str) -> ParakeetError:
    """The exception for a failure the library reported with ``code`` and ``message``.

    A code this binding does not know (a newer library) gives a plain :class:`ParakeetError`
    carrying that code; ``ERROR_NONE`` on a failed call (which the library should never report)
    counts as an internal error.
    """
    cls = _BY_CODE.get(int(code))
    if cls is not None:
        return cls(message)
    if code == ERROR_NONE:
        return InternalError(message)
    return ParakeetError(message, code=int(code))
