"""``stream=true`` on ``/v1/audio/transcriptions``: the uploaded file decoded chunk by chunk,
answered as Server-Sent Events in the shapes the official ``openai`` client parses
(``client.audio.transcriptions.create(..., stream=True)``):

    data: {"type": "transcript.text.delta", "delta": " some words"}
    data: {"type": "transcript.text.done", "text": "the whole transcript"}

Deltas are the text as it becomes final; joined they are the done event's text. A failure
after the answer has begun is sent as ``data: {"error": {...}}``, which the client raises as
an ``APIError``. Each feed waits for the previous event to be handed to the connection, so a
slow reader slows the decoding down instead of growing a buffer.
"""

from __future__ import annotations

import json
from typing import Any, AsyncIterator, Dict

import numpy as np

from parakeet_py import ParakeetError

from .errors import transcription_error
from .live import Lease, LiveStreams

MEDIA_TYPE = "text/event-stream"
HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def sse(data: Dict[str, Any]) -> bytes:
    return ("data: " + json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n\n").encode("utf-8")


def delta(text: str) -> bytes:
    return sse({"type": "transcript.text.delta", "delta": text})


async def transcript_events(live: LiveStreams, lease: Lease, audio: np.ndarray, piece: int) -> AsyncIterator[bytes]:
    """The events of one file: ``piece`` samples per feed (one chunk), then the last chunk."""
    try:
        stream = lease.stream
        assert stream is not None
        for begin in range(0, audio.size, piece):
            update = await live.feed(lease, audio[begin:begin + piece])
            if update.text:
                yield delta(update.text)
        update = await live.feed(lease, None)
        if update.text:
            yield delta(update.text)
        yield sse({"type": "transcript.text.done", "text": stream.text})
    except ParakeetError as e:  # answered as the status's error would have been, in an event
        answer = transcription_error(e)
        yield sse({"error": {"message": answer.message, "type": answer.type, "param": answer.param,
                             "code": answer.code}})
    finally:
        live.end(lease)  # also when the client went away (the generator is then cancelled)
