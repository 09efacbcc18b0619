"""Errors as OpenAI's API reports them: ``{"error": {"message", "type", "param", "code"}}``,
and the one mapping from a failure's kind (``parakeet_py``'s error classes, one per error code
of the C ABI) to its HTTP status: :func:`transcription_error`, used by the transcription
endpoint, the Server-Sent Events and the realtime sessions alike."""

from __future__ import annotations

import logging
from typing import Mapping, Optional

from starlette.responses import JSONResponse

from parakeet_py import Cancelled, InvalidArgument, InvalidAudio, OutOfMemory, ParakeetError, Unsupported

log = logging.getLogger("parakeet.server")

# OpenAI's error types: client mistakes are "invalid_request_error", our own failures and
# overload are "server_error".
INVALID_REQUEST = "invalid_request_error"
SERVER_ERROR = "server_error"


class APIError(Exception):
    """An HTTP error answer; raised anywhere in a handler, turned into a JSON response."""

    def __init__(self, status: int, message: str, *, type: str = INVALID_REQUEST,
                 param: Optional[str] = None, code: Optional[str] = None,
                 headers: Optional[Mapping[str, str]] = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.param = param
        self.code = code
        self.headers = dict(headers or {})

    def response(self) -> JSONResponse:
        return error_response(self.status, self.message, type=self.type, param=self.param,
                              code=self.code, headers=self.headers)


def error_response(status: int, message: str, *, type: str = INVALID_REQUEST,
                   param: Optional[str] = None, code: Optional[str] = None,
                   headers: Optional[Mapping[str, str]] = None) -> JSONResponse:
    body = {"error": {"message": message, "type": type, "param": param, "code": code}}
    return JSONResponse(body, status_code=status, headers=dict(headers or {}))


class BadAudio(InvalidAudio):
    """The upload is not audio this server can read (or not usable audio)."""


class AudioTooLong(BadAudio):
    """The audio is over the server's duration limit (or decodes to too many samples)."""


# Seconds a client is asked to wait before retrying a request the library had no memory for.
OUT_OF_MEMORY_RETRY_AFTER = 5


def transcription_error(e: ParakeetError) -> APIError:
    """The answer to a failure decoding or transcribing audio, by the error's kind (its code):
    the status says whose fault it is, and a caller's mistake is never a 500.

    * audio over the server's limits: 413 ``audio_too_long``;
    * audio that cannot be read or used (``InvalidAudio``, found by the decoder here or by the
      library): 400 ``invalid_audio``, as OpenAI answers an unreadable file and as every other
      malformed part of a request is answered here;
    * a bad argument (``InvalidArgument``): 400 ``invalid_value``;
    * something this model cannot do (``Unsupported``: ``beam_size`` on a CTC-only model):
      422 ``unsupported_by_model``: the request is well-formed, and would work on another model;
    * the client went away (``Cancelled``): 499 (nginx's "client closed request"; nobody reads
      it, but it keeps cancellations apart in the logs and metrics);
    * no memory for the request (``OutOfMemory``): 503 ``out_of_memory`` with ``Retry-After``:
      the server is short of memory now (other requests hold it), not broken, and the same
      request can succeed once they finish; OpenAI's clients retry a 503;
    * anything else (``InternalError``, ``BadModel``: the served model itself): 500, logged.
    """
    if isinstance(e, AudioTooLong):
        return APIError(413, str(e), param="file", code="audio_too_long")
    if isinstance(e, InvalidAudio):
        return APIError(400, str(e), param="file", code="invalid_audio")
    if isinstance(e, InvalidArgument):
        return APIError(400, str(e), code="invalid_value")
    if isinstance(e, Unsupported):
        return APIError(422, f"this model cannot do that: {e}", code="unsupported_by_model")
    if isinstance(e, Cancelled):
        return APIError(499, "the client disconnected; the transcription was cancelled", code="client_disconnected")
    if isinstance(e, OutOfMemory):
        log.error("out of memory: %s", e)
        return APIError(503, f"the server has not enough memory for this request now; retry later ({e})",
                        type=SERVER_ERROR, code="out_of_memory",
                        headers={"Retry-After": str(OUT_OF_MEMORY_RETRY_AFTER)})
    log.error("transcription failed: %s", e)
    return APIError(500, f"transcription failed: {e}", type=SERVER_ERROR, code="transcription_failed")
