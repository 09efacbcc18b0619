"""Progress callbacks of the library's long calls, from Python: one request's callback is
handed to the C call as user_data behind one shared C trampoline; returning ``False`` (or
raising) makes the library stop the request (Cancelled, or the callback's own exception)."""

from typing import Any, Callable, Optional

from . import _native
from .errors import InvalidArgument

#: A progress callback: gets the fraction done (0..1, never decreasing); returning ``False``
#: cancels the request (``None`` or ``True`` go on).
ProgressCallback = Callable[[float], Optional[bool]]


def check_progress(progress: Optional[ProgressCallback]) -> None:
    """InvalidArgument unless ``progress`` is None or callable."""
    if progress is not None and not callable(progress):
        raise InvalidArgument(f"progress must be callable, not a {type(progress).__name__}")


class _ProgressCall:
    """One request's progress callback and how it ended. The C callback never lets an
    exception into the C frames (cffi would print it and go on): it keeps it, asks the library
    to stop, and the exception is raised once the call returns."""

    __slots__ = ("progress", "error")

    def __init__(self, progress: ProgressCallback):
        self.progress, self.error = progress, None

    def __call__(self, fraction: float) -> int:
        try:
            verdict = self.progress(float(fraction))
        except BaseException as e:  # KeyboardInterrupt too: it should stop the request
            self.error = e
            return 1
        return 1 if verdict is not None and not verdict else 0


_progress_trampoline: Any = None


def _progress_callback() -> Any:
    """The one C callback every request shares (cffi allocates executable memory for each
    callback, so none is made per call); it finds the request's _ProgressCall through
    user_data."""
    global _progress_trampoline
    if _progress_trampoline is None:
        ffi, _ = _native.load()
        _progress_trampoline = ffi.callback("parakeet_progress_fn",
                                            lambda fraction, user_data: ffi.from_handle(user_data)(fraction))
    return _progress_trampoline


def call_with_progress(progress: ProgressCallback, invoke: Callable[[Any, Any], Any]) -> str:
    """``invoke(fn, user_data)``: one library call with ``progress`` as its callback; its string."""
    ffi, _ = _native.load()
    call = _ProgressCall(progress)
    handle = ffi.new_handle(call)  # kept alive for the whole call
    result = invoke(_progress_callback(), handle)
    if result == ffi.NULL and call.error is not None:
        raise call.error  # the callback's own exception (the library reports "cancelled")
    # A callback that returned False makes the library fail with PARAKEET_ERROR_CANCELLED: Cancelled.
    return _native.string_result(result)
