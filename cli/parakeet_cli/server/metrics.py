"""Prometheus metrics of one server application (a registry per app, so apps never share).

``RequestMetricsMiddleware`` counts every HTTP request by route and status and times it; the
transcription queue updates the queue and backend gauges and the audio counter.
"""

from __future__ import annotations

import time

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# Routes get their own label value; anything else is "other", so that scanners probing random
# paths cannot grow the number of series without bound.
ROUTES = ("/v1/audio/transcriptions", "/v1/models", "/health", "/metrics")

# Request latencies from a short clip on a free server to a long one behind a queue.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
# Chunk latencies: a few ms for a small model on a free backend to seconds behind busy ones.
CHUNK_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0)


class Metrics:
    def __init__(self, backends: int, queue_limit: int) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.requests = Counter("parakeet_requests", "HTTP requests answered, by route and status code.",
                                ["route", "status"], registry=r)
        self.latency = Histogram("parakeet_request_duration_seconds",
                                 "Time from receiving a request to the end of its response, by route.",
                                 ["route"], buckets=LATENCY_BUCKETS, registry=r)
        self.queue_depth = Gauge("parakeet_queue_depth",
                                 "Accepted transcription requests waiting for a worker.",
                                 registry=r)
        self.backends_in_use = Gauge("parakeet_backends_in_use", "Backends transcribing right now.", registry=r)
        self.backends = Gauge("parakeet_backends", "Backends of the model (requests transcribed at once).",
                              registry=r)
        self.queue_limit = Gauge("parakeet_queue_limit",
                                 "Requests allowed to wait before new ones are refused with 503.", registry=r)
        self.audio_seconds = Counter("parakeet_audio_seconds", "Seconds of audio transcribed.", registry=r)
        self.cancelled = Counter("parakeet_requests_cancelled",
                                 "Transcriptions stopped because their client disconnected.", registry=r)
        # Live streams (SSE on /v1/audio/transcriptions and /v1/realtime), by kind "sse" | "realtime".
        self.live_streams = Gauge("parakeet_live_streams", "Live transcription streams open now, by kind.",
                                  ["kind"], registry=r)
        self.max_streams = Gauge("parakeet_max_streams", "Live streams allowed at once (more are refused).",
                                 registry=r)
        self.streams = Counter("parakeet_streams", "Live streams begun, by kind.", ["kind"], registry=r)
        self.streams_refused = Counter("parakeet_streams_refused",
                                       "Live streams refused because max_streams were open, by kind.", ["kind"],
                                       registry=r)
        self.chunk_latency = Histogram("parakeet_stream_chunk_latency_seconds",
                                       "From audio arriving to the text of the chunks it completed being final "
                                       "(one observation per feed that decoded chunks), by kind.",
                                       ["kind"], buckets=CHUNK_BUCKETS, registry=r)
        self.stream_audio_seconds = Counter("parakeet_stream_audio_seconds", "Seconds of audio fed to live streams.",
                                            registry=r)
        # The Silero VAD of server_vad / semantic_vad sessions and of chunking_strategy server_vad
        # (it runs on the stream's or the request's own thread, outside the backends).
        self.vad_audio_seconds = Counter("parakeet_vad_audio_seconds", "Seconds of audio the VAD ran on, by kind.",
                                         ["kind"], registry=r)
        self.vad_compute_seconds = Counter("parakeet_vad_compute_seconds",
                                           "Seconds the VAD computed (timed on the thread it ran on, not the wait "
                                           "for that thread), by kind.", ["kind"], registry=r)
        self.turns = Counter("parakeet_realtime_turns", "Realtime turns committed by turn detection, by type.",
                             ["type"], registry=r)
        # A realtime session with speakers holds one diarization stream (realtime_speakers.py).
        self.speaker_streams = Gauge("parakeet_realtime_speaker_streams",
                                     "Diarization streams of realtime sessions with speakers, open now.", registry=r)
        # A realtime session with sounds holds one sound stream (realtime_sounds.py).
        self.sound_streams = Gauge("parakeet_realtime_sound_streams",
                                   "Sound streams of realtime sessions with sound events, open now.", registry=r)
        self.backends.set(backends)
        self.queue_limit.set(queue_limit)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)

    content_type = CONTENT_TYPE_LATEST


class RequestMetricsMiddleware:
    """Pure ASGI middleware (it does not buffer bodies): counts and times each HTTP request."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        route = path if path in ROUTES else ("/v1/models" if path.startswith("/v1/models/") else "other")
        status = {"code": 500}  # what the client sees if the app fails before answering
        started = time.perf_counter()

        async def send_wrapper(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            self.metrics.requests.labels(route, str(status["code"])).inc()
            self.metrics.latency.labels(route).observe(time.perf_counter() - started)
