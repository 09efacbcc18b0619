"""Batched live streams: :meth:`Context.stream_group` gives a :class:`StreamGroup`.

A group wraps a ``parakeet_stream_group`` (the C ABI's "Stream groups" section): the live
streams of one context that join it share their encoder passes (the steps of a cache-aware
model's streams; the windows of an offline model's buffered streams). A member's
:meth:`~parakeet_py.stream.Stream.feed` takes its audio and, when a chunk is ready, waits for
the group to run it in one batch with the ready chunks of other members: as soon as
``max_batch`` members wait, or every member waits (a lone member runs at once), or its chunk
has waited ``max_wait_ms``. Feeding the members from their own threads is what fills batches
(the GIL is released while a feed waits). Every member's results are bitwise what it gets
alone; streams join and leave at any time between their calls.
"""

from __future__ import annotations

import json
import threading
import weakref
from typing import Any, Dict

from . import _native
from .errors import InvalidArgument
from .owned_handle import OwnedHandle
from .stream import Stream


class StreamGroup(OwnedHandle):
    """Batches the feeds of its member streams (see the module docstring). A context manager;
    closing it (or the context) makes its members leave, then frees it."""

    _FREE = "parakeet_capi_stream_group_free"
    _CLOSED = "the stream group is closed"

    def __init__(self, context: Any, ptr: Any, max_batch: int, max_wait_ms: int) -> None:
        self._context = context
        self._ptr = ptr
        self._lock = threading.Lock()  # join / leave / close one at a time
        self._members: "weakref.WeakSet[Any]" = weakref.WeakSet()
        #: The most streams one batch holds.
        self.max_batch = max_batch
        #: The longest a ready chunk waits for other members' (milliseconds).
        self.max_wait_ms = max_wait_ms

    def join(self, stream: Any) -> None:
        """Make ``stream`` (a :class:`~parakeet_py.stream.Stream` of this group's context) a
        member. Raises :class:`ParakeetError`: a stream of another context, finalized, closed,
        or in a group already."""
        with self._lock, _checked(stream)._lock:
            lib = _native.load()[1]
            _native.check_status(lib.parakeet_capi_stream_group_join(self.handle(), self._stream_ptr(stream)))
            self._members.add(stream)

    def leave(self, stream: Any) -> None:
        """Take ``stream`` out of the group (it then runs its chunks alone)."""
        with self._lock, _checked(stream)._lock:
            lib = _native.load()[1]
            _native.check_status(lib.parakeet_capi_stream_group_leave(self.handle(), self._stream_ptr(stream)))
            self._members.discard(stream)

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._ptr is None

    def __len__(self) -> int:
        """The streams in the group."""
        return _native.check_count(_native.load()[1].parakeet_capi_stream_group_size(self.handle()))

    def stats(self) -> Dict[str, Any]:
        """What the group did: ``batches`` run, ``batch_sizes`` (index i: batches of i + 1
        streams), ``waited_ms_max`` / ``waited_ms_mean`` (how long chunks waited for their
        batch), and ``max_batch``, ``max_wait_ms``, ``members``."""
        lib = _native.load()[1]
        return json.loads(_native.string_result(lib.parakeet_capi_stream_group_stats_json(self.handle())))

    def close(self) -> None:
        """Make every member leave, then free the group. Idempotent."""
        with self._lock:
            ptr, self._ptr = self._ptr, None
            if ptr is None:
                return
            lib = _native.load()[1]
            for stream in list(self._members):
                with stream._lock:
                    if stream._ptr is not None:  # a closed stream left when it was freed
                        lib.parakeet_capi_stream_group_leave(ptr, stream._ptr)
            self._members.clear()
            lib.parakeet_capi_stream_group_free(ptr)

    @staticmethod
    def _stream_ptr(stream: Any) -> Any:
        if stream._ptr is None:
            raise InvalidArgument("the stream is closed")
        return stream._ptr

    def __repr__(self) -> str:
        state = "closed" if self._ptr is None else f"{len(self)} streams"
        return f"StreamGroup(max_batch={self.max_batch}, max_wait_ms={self.max_wait_ms}, {state})"


def _checked(stream: Any) -> Stream:
    """``stream`` if it is a :class:`Stream` (InvalidArgument otherwise)."""
    if not isinstance(stream, Stream):
        raise InvalidArgument(f"a stream group takes the Stream of a Context.stream(), not {type(stream).__name__}")
    return stream


def new(context: Any, ctx_ptr: Any, max_batch: int, max_wait_ms: int) -> StreamGroup:
    """A new :class:`StreamGroup` on ``ctx_ptr`` (``parakeet_capi_stream_group_new``)."""
    for name, value in (("max_batch", max_batch), ("max_wait_ms", max_wait_ms)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise InvalidArgument(f"{name} must be an int, not {value!r}")
    lib = _native.load()[1]
    ptr = _native.check_pointer(lib.parakeet_capi_stream_group_new(ctx_ptr, max_batch, max_wait_ms))
    return StreamGroup(context, ptr, max_batch, max_wait_ms)
