"""The exceptions of the ``parakeet_py`` inference API: :class:`ParakeetError` and its
subclass :class:`Cancelled`."""

from __future__ import annotations


class ParakeetError(Exception):
    """A request could not be served: the message says why.

    For failures inside libparakeet the message is the library's own, read from
    ``parakeet_capi_thread_last_error()`` right after the failing call on the same thread, so
    it is exact even when several threads fail at once. Failures found in Python (unreadable
    audio, an unknown decoder name, a closed context) carry a message written here.
    """

    @property
    def message(self) -> str:
        """The error message (the same as ``str(err)``)."""
        return str(self.args[0]) if self.args else ""


class Cancelled(ParakeetError):
    """A request stopped because its progress callback asked for it (returned ``False``).

    A callback that raises also cancels the request, but then ``transcribe`` raises the
    callback's own exception, not this one.
    """
