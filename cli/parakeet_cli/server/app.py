"""The server: a starlette application around one :class:`parakeet_py.Context`, run by uvicorn.

Endpoints (docs/server.md describes each): ``POST /v1/audio/transcriptions``,
``GET /v1/models``, ``GET /v1/models/{id}``, ``GET /health``, ``GET /metrics``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import threading
import logging
import os
import time
from dataclasses import dataclass
from typing import Any, Optional

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route, WebSocketRoute

from parakeet_py import Cancelled, ParakeetError
from parakeet_py.audio import prepare_audio
from parakeet_py.audio_formats import UPLOAD_CONTAINERS

from . import formats, request_fields, sse
from .errors import SERVER_ERROR, APIError, AudioTooLong, BadAudio, error_response, transcription_error
from .limits import (DEFAULT_MAX_APPEND_MB, DEFAULT_MAX_AUDIO_SECONDS, DEFAULT_MAX_STREAMS, DEFAULT_MAX_UPLOAD_MB,
                     DEFAULT_REALTIME_WINDOW, DEFAULT_SSE_WINDOW, DEFAULT_STREAM_IDLE_SECONDS)
from .live import LiveStreams, Window
from .metrics import Metrics, RequestMetricsMiddleware
from .queue import Overloaded, TranscriptionQueue
from .realtime import RealtimeConfig, realtime_endpoint
from .upload import ClientGone, read_form

log = logging.getLogger("parakeet.server")

# Most samples (frames x channels) one upload may decode to, per second of allowed audio: 48 kHz
# stereo. Compressed formats make tiny files of hours of audio (a 30 KB FLAC of silence holds
# 20 minutes), so the header is checked before anything is decoded, and the decoded length
# after every block (a header may understate it, or state nothing).
DECODED_SAMPLES_PER_SECOND = 48000 * 2


@dataclass(frozen=True)
class ServerConfig:
    model_id: str
    model_path: str
    api_key: Optional[str] = None
    max_upload_bytes: int = int(DEFAULT_MAX_UPLOAD_MB * 1024 * 1024)
    max_queue: int = 2
    max_audio_seconds: float = DEFAULT_MAX_AUDIO_SECONDS
    # Live streams (SSE and realtime): how many at once, the (left, chunk, right) seconds of
    # each kind, how long a realtime connection may stay silent, the largest append.
    max_streams: int = DEFAULT_MAX_STREAMS
    sse_window: Window = DEFAULT_SSE_WINDOW
    realtime_window: Window = DEFAULT_REALTIME_WINDOW
    stream_idle_seconds: float = DEFAULT_STREAM_IDLE_SECONDS
    max_append_bytes: int = int(DEFAULT_MAX_APPEND_MB * 1024 * 1024)

    def limits(self) -> dict:
        """The limits a client may want to know before uploading (advertised by /health and
        /v1/models). The duration is checked from the file's header before anything is decoded
        and again after every decoded block; over either limit is answered 413."""
        return {"max_upload_bytes": self.max_upload_bytes, "max_audio_seconds": self.max_audio_seconds}

    def stream_limits(self) -> dict:
        """The live-stream limits (advertised by /health under "streams")."""
        return {"max_streams": self.max_streams, "max_append_bytes": self.max_append_bytes,
                "idle_seconds": self.stream_idle_seconds, "sse_window": list(self.sse_window),
                "realtime_window": list(self.realtime_window)}


def check_audio_size(frames: int, sample_rate: int, channels: int, max_seconds: float) -> None:
    """Raises AudioTooLong for audio over ``max_seconds`` or too large to decode."""
    if sample_rate > 0 and frames / sample_rate > max_seconds:
        raise AudioTooLong(f"the audio is {frames / sample_rate:.1f} s long; this server's limit is "
                           f"{max_seconds:g} s (split longer recordings)")
    max_samples = int(max_seconds * DECODED_SAMPLES_PER_SECOND)
    if frames * channels > max_samples:
        raise AudioTooLong(f"the audio decodes to {frames} frames x {channels} channels, more than this server "
                           f"decodes for one request ({max_samples} samples); mix down or resample it first")


async def watch_disconnect(request: Request, gone: threading.Event) -> None:
    """Sets ``gone`` when the client goes away. The body has been read by then, so the next
    ASGI message is ``http.disconnect`` (the server sends it when the connection closes)."""
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            gone.set()
            return


def create_app(context, config: ServerConfig) -> Starlette:
    """The ASGI application serving ``context`` (which the caller keeps and closes)."""
    backends = int(context.concurrency)
    sample_rate = int(context.info.get("sample_rate", 16000))
    metrics = Metrics(backends=backends, queue_limit=config.max_queue)
    queue = TranscriptionQueue(workers=backends, max_waiting=config.max_queue, metrics=metrics)
    live = LiveStreams(context, config.max_streams, metrics)
    try:
        created = int(os.path.getmtime(config.model_path))
    except OSError:
        created = int(time.time())
    model_card = {"id": config.model_id, "object": "model", "created": created, "owned_by": "parakeet",
                  "limits": config.limits()}

    def check_api_key(request: Request) -> None:
        if config.api_key is None:
            return
        auth = request.headers.get("authorization", "")
        scheme, _, token = auth.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise APIError(401, "missing API key: send 'Authorization: Bearer <key>'", code="missing_api_key",
                           headers={"WWW-Authenticate": "Bearer"})
        if not hmac.compare_digest(token.strip().encode(), config.api_key.encode()):
            raise APIError(401, "incorrect API key", code="invalid_api_key", headers={"WWW-Authenticate": "Bearer"})

    def decode_upload(upload) -> Any:
        # Runs on a worker thread (blocking work). Only the upload containers and codecs are
        # decoded; the length limit is checked against the header, then after every block.
        upload.file.seek(0)
        try:
            audio = prepare_audio(upload.file, target_rate=sample_rate, formats=UPLOAD_CONTAINERS,
                                  limit=lambda frames, rate, channels: check_audio_size(
                                      frames, rate, channels, config.max_audio_seconds))
        except AudioTooLong:
            raise
        except ParakeetError as e:
            raise BadAudio(f"could not read {upload.filename or 'the upload'!r} as audio: {e}") from e
        if audio.size == 0:
            raise BadAudio("the audio file contains no samples")
        return audio

    def transcribe_job(upload, timestamps: bool, gone: threading.Event, beam: Optional[int] = None) -> Any:
        # Runs on a worker thread: decoding and transcription are both blocking work.
        audio = decode_upload(upload)
        metrics.backends_in_use.inc()
        try:
            # The request stops at its next progress report once the client has gone (a beam
            # search request has no progress reports: it runs to the end).
            transcript = context.transcribe(audio, sample_rate=sample_rate, timestamps=timestamps, beam=beam,
                                            progress=None if beam else lambda _fraction: not gone.is_set())
        finally:
            metrics.backends_in_use.dec()
        metrics.audio_seconds.inc(audio.size / sample_rate)
        return transcript

    async def transcriptions(request: Request) -> Response:
        try:
            check_api_key(request)
            form = await read_form(request, config.max_upload_bytes)
        except APIError as e:
            return e.response()
        except ClientGone:
            return error_response(400, "the client disconnected before sending the whole request",
                                  code="incomplete_request")
        try:
            return await _transcribe_form(request, form)
        finally:
            await form.close()

    async def _transcribe_form(request: Request, form) -> Response:
        fields = request_fields.parse(form)
        if fields.stream:
            return await _stream_form(fields)
        response_format, granularities, language, upload = (fields.response_format, fields.granularities,
                                                            fields.language, fields.upload)

        gone = threading.Event()
        watcher = asyncio.ensure_future(watch_disconnect(request, gone))
        try:
            # json and text need no word/token times (the transcript's JSON is still built, for
            # the progress callback, but it is small).
            timestamps = response_format in ("verbose_json", "srt", "vtt")
            transcript = await queue.run(lambda: transcribe_job(upload, timestamps, gone, fields.beam_size))
        except Cancelled as e:
            metrics.cancelled.inc()
            log.info("request cancelled: the client disconnected")
            raise transcription_error(e) from e
        except Overloaded as e:
            raise APIError(503, f"the server is busy ({queue.workers} transcribing, {config.max_queue} waiting); "
                                f"retry after {e.retry_after} s", type=SERVER_ERROR, code="server_overloaded",
                           headers={"Retry-After": str(e.retry_after)}) from e
        except ParakeetError as e:
            raise transcription_error(e) from e
        finally:
            watcher.cancel()

        if response_format == "json":
            return JSONResponse(formats.json_body(transcript))
        if response_format == "verbose_json":
            return JSONResponse(formats.verbose_json_body(transcript, granularities, language))
        if response_format == "text":
            return PlainTextResponse(formats.text_body(transcript))
        if response_format == "srt":
            return PlainTextResponse(formats.srt_body(transcript))
        return PlainTextResponse(formats.vtt_body(transcript), media_type="text/vtt")

    async def _stream_form(fields: request_fields.TranscriptionRequest) -> Response:
        """stream=true: the file decoded chunk by chunk, answered as Server-Sent Events."""
        lease = live.admit("sse")
        if lease is None:
            raise streams_full()
        try:
            audio = await live.run(decode_upload, fields.upload)
            await live.begin(lease, config.sse_window, sample_rate)
        except ParakeetError as e:
            live.end(lease)
            raise transcription_error(e) from e
        except BaseException:
            live.end(lease)
            raise
        piece = max(1, int(config.sse_window[1] * sample_rate))  # one chunk per feed: one delta each
        return StreamingResponse(sse.transcript_events(live, lease, audio, piece), media_type=sse.MEDIA_TYPE,
                                 headers=sse.HEADERS)

    def streams_full() -> APIError:
        return APIError(503, f"the server is at its limit of {config.max_streams} live streams; retry later",
                        type=SERVER_ERROR, code="too_many_streams", headers={"Retry-After": "1"})

    async def list_models(request: Request) -> Response:
        check_api_key(request)
        return JSONResponse({"object": "list", "data": [model_card]})

    async def get_model(request: Request) -> Response:
        check_api_key(request)
        if request.path_params["model"] != config.model_id:
            raise APIError(404, f"the model {request.path_params['model']!r} does not exist; this server has "
                                f"{config.model_id!r}", param="model", code="model_not_found")
        return JSONResponse(model_card)

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok", "limits": config.limits(), "attention": context.attention,
                             "streams": {"open": live.open, **config.stream_limits()}})

    async def metrics_endpoint(request: Request) -> Response:
        return Response(metrics.exposition(), media_type=metrics.content_type)

    async def api_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, APIError)
        return exc.response()

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        return error_response(exc.status_code, str(exc.detail), headers=exc.headers)

    async def internal_error(request: Request, exc: Exception) -> Response:
        log.exception("unexpected error serving %s %s", request.method, request.url.path, exc_info=exc)
        return error_response(500, "internal server error", type=SERVER_ERROR, code="internal_error")

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette):
        try:
            yield
        finally:
            queue.shutdown()
            live.shutdown()

    app = Starlette(
        routes=[
            Route("/v1/audio/transcriptions", transcriptions, methods=["POST"]),
            Route("/v1/models", list_models, methods=["GET"]),
            Route("/v1/models/{model:path}", get_model, methods=["GET"]),
            Route("/health", health, methods=["GET"]),
            Route("/metrics", metrics_endpoint, methods=["GET"]),
            WebSocketRoute("/v1/realtime", realtime_endpoint(live, RealtimeConfig.from_server(config), metrics)),
        ],
        exception_handlers={APIError: api_error, HTTPException: http_error, Exception: internal_error},
        lifespan=lifespan,
    )
    app.add_middleware(RequestMetricsMiddleware, metrics=metrics)
    app.state.metrics = metrics
    app.state.queue = queue
    app.state.live = live
    return app


def serve(context, config: ServerConfig, *, host: str, port: int, log_level: str = "info") -> None:
    """Runs the server until SIGINT/SIGTERM (blocking)."""
    import uvicorn

    app = create_app(context, config)
    # A realtime append is base64 JSON: the frame limit is the append limit plus a third and framing.
    uvicorn.run(app, host=host, port=port, log_level=log_level, access_log=log_level in ("info", "debug"),
                timeout_graceful_shutdown=30, ws="websockets",
                ws_max_size=config.max_append_bytes * 4 // 3 + 64 * 1024)
