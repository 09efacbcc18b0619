"""What every binding object that owns one library handle does the same way.

:class:`OwnedHandle` holds the handle in ``_ptr`` and frees it with the C function named by the
class's ``_FREE``: ``handle()`` (InvalidArgument ``_CLOSED`` once closed), ``close()`` (idempotent, under ``self._lock`` when the object has one, so it
cannot free a handle a call is using), use as a context manager, and a finalizer.
:class:`SharedModel` is a loaded model (Context, Diarizer, Vad) that calls on many threads use
at once and that streams borrow: its ``close()`` waits for the calls running on it and closes
its streams before the handle is freed. :func:`load_model_of_kind` opens a model file as a
library context of one kind.
"""

import contextlib
import os
import threading
import weakref
from typing import Any, Iterator, Optional, TypeVar

from . import _native
from .bundle import component_of_kind
from .errors import InvalidArgument

T = TypeVar("T", bound="OwnedHandle")


class OwnedHandle:
    _FREE: str = "parakeet_capi_free"
    _CLOSED: str = "the handle is closed"  # the InvalidArgument of handle() once closed
    _ptr: Any = None

    def handle(self) -> Any:
        """The library handle, for a call that takes it (InvalidArgument once closed)."""
        if self._ptr is None:
            raise InvalidArgument(self._CLOSED)
        return self._ptr

    def close(self) -> None:
        with getattr(self, "_lock", None) or contextlib.nullcontext():
            ptr, self._ptr = self._ptr, None
            if ptr is not None:
                getattr(_native.load()[1], self._FREE)(ptr)

    def __enter__(self: T) -> T:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        _native.free_in_finalizer(getattr(self, "_ptr", None), self._FREE)


class SharedModel(OwnedHandle):
    """A library context that calls on several threads use at once (``with self._using() as
    ptr``), and that streams borrow (registered with :meth:`_lend`). ``close()`` refuses new
    calls, waits for the running ones, closes the streams, then frees the context: freeing it
    under a running call or a live stream would be a use after free in the library."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._active = 0  # calls inside _using()
        self._streams: "weakref.WeakSet[Any]" = weakref.WeakSet()

    @contextlib.contextmanager
    def _using(self) -> Iterator[Any]:
        """The live handle, counted as in use until the block ends (InvalidArgument once closed)."""
        with self._cond:
            ptr = self.handle()
            self._active += 1
        try:
            yield ptr
        finally:
            with self._cond:
                self._active -= 1
                if not self._active:
                    self._cond.notify_all()

    def _lend(self, stream: Any) -> Any:
        """Registers a stream that borrows this context: closed before the context is freed."""
        self._streams.add(stream)
        return stream

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._ptr is None

    def close(self) -> None:
        """Waits for the calls running on this model, closes its streams, then frees it. Idempotent."""
        with self._cond:
            ptr, self._ptr = self._ptr, None  # new calls are refused from here on
            if ptr is None:
                return
            while self._active:
                self._cond.wait()
        for stream in list(self._streams):
            stream.close()
        getattr(_native.load()[1], self._FREE)(ptr)


# The bundle component kind (docs/bundles.md) of each model kind these classes load.
_BUNDLE_KINDS = {_native.MODEL_KIND_VAD: "vad", _native.MODEL_KIND_DIARIZATION: "diar", _native.MODEL_KIND_SOUND: "ced",
                 _native.MODEL_KIND_SPEAKER: "voice"}


def load_model_of_kind(model_path: "os.PathLike[str] | str", kind: int, what: str,
                       component: Optional[str] = None) -> Any:
    """``parakeet_capi_load_component`` of the file (``component``: a bundle's component by name;
    None: a plain file, or the bundle's only component of ``kind``), refused unless it holds a
    model of ``kind`` (InvalidArgument "<path> is not <what>"); the library's error for a file it
    cannot load."""
    ffi, lib = _native.load_or_raise()
    path = os.fspath(model_path)
    component = component_of_kind(path, _BUNDLE_KINDS[kind], component)
    name = ffi.NULL if component is None else component.encode("utf-8")
    ptr = lib.parakeet_capi_load_component(path.encode("utf-8"), name)
    if ptr == ffi.NULL:
        _native.raise_last_error(ffi.string(lib.parakeet_capi_load_error()).decode("utf-8", "replace"))
    if lib.parakeet_capi_model_kind(ptr) != kind:
        lib.parakeet_capi_free(ptr)
        raise InvalidArgument(f"{path}{'' if component is None else ':' + component} is not {what}")
    return ptr

