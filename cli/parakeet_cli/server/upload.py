"""Reading a multipart/form-data upload without ever holding more than the size limit.

The body is counted while it streams in; the upload is refused with 413 as soon as it passes
the limit (or at once when Content-Length already says so). File parts are spooled by
starlette (in memory up to 1 MiB, then a temporary file). When an answer goes out before the
body was read in full, uvicorn reads and drops the rest of it and keeps the connection, so a
client that sends its whole body before reading the answer still gets it.
"""

from __future__ import annotations

from typing import AsyncGenerator

from starlette.datastructures import FormData
from starlette.formparsers import MultiPartException, MultiPartParser
from starlette.requests import ClientDisconnect, Request

from .errors import APIError

# Room for the form's other fields and the multipart framing on top of the file itself.
FORM_OVERHEAD_BYTES = 64 * 1024
# Text fields (model, language, prompt...) are short; a larger one is a mistake or abuse.
MAX_FIELD_BYTES = 16 * 1024
MAX_FIELDS = 32


class ClientGone(Exception):
    """The client disconnected before sending its whole request."""


def too_large(limit: int) -> APIError:
    return APIError(413, f"the upload is larger than the server's limit of {limit} bytes "
                         f"({limit / (1024 * 1024):g} MiB)", param="file", code="file_too_large")


async def _counted(request: Request, body_limit: int, max_file_bytes: int) -> AsyncGenerator[bytes, None]:
    received = 0
    async for chunk in request.stream():
        received += len(chunk)
        if received > body_limit:
            raise too_large(max_file_bytes)
        yield chunk


async def read_form(request: Request, max_file_bytes: int) -> FormData:
    """The parsed form. Raises APIError (400, 413, 415) or ClientGone."""
    content_type = request.headers.get("content-type", "")
    if content_type.split(";", 1)[0].strip().lower() != "multipart/form-data":
        raise APIError(415, "the request must be multipart/form-data with the audio in a 'file' field "
                            f"(got Content-Type {content_type or 'none'!r})", code="unsupported_media_type")
    body_limit = max_file_bytes + FORM_OVERHEAD_BYTES
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > body_limit:
        raise too_large(max_file_bytes)
    parser = MultiPartParser(request.headers, _counted(request, body_limit, max_file_bytes), max_files=1,
                             max_fields=MAX_FIELDS, max_part_size=MAX_FIELD_BYTES)
    try:
        form = await parser.parse()
    except MultiPartException as e:
        raise APIError(400, f"malformed multipart/form-data: {e.message}", code="invalid_form") from e
    except KeyError as e:  # multipart parser: a header it needs is missing
        raise APIError(400, f"malformed multipart/form-data: missing {e}", code="invalid_form") from e
    except ClientDisconnect as e:
        raise ClientGone() from e
    for value in form.values():
        size = getattr(value, "size", None)
        if size is not None and size > max_file_bytes:
            await form.close()
            raise too_large(max_file_bytes)
    return form

