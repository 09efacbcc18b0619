"""The server's default request limits, shared by the command line and the application
(kept apart from :mod:`.app` so that the command line does not import starlette)."""

# Largest upload, in MiB (OpenAI's limit for this endpoint).
DEFAULT_MAX_UPLOAD_MB = 25.0
# Longest audio one request may hold, in seconds. The library takes any length (long audio
# runs with local attention, memory linear in the length); a server still bounds what one
# request may cost.
DEFAULT_MAX_AUDIO_SECONDS = 3600.0
# Seconds a transcription may wait for a worker; then 503 with Retry-After.
DEFAULT_MAX_QUEUE_WAIT = 120.0
# Live streams (SSE and realtime) open at once; one more is refused (503 / an error event).
DEFAULT_MAX_STREAMS = 16
# The live streams' stream group (batching.py): the most chunks in one batched encoder pass,
# and the longest a ready chunk waits for others. 32: the per-stream cost of a cache-aware step
# stops falling there (docs/performance.md, "Batch size against per-stream step cost"); 20 ms:
# an eighth of a 160 ms chunk, what docs/performance.md's live-batch figures were measured with.
DEFAULT_MAX_BATCH = 32
DEFAULT_BATCH_WAIT_MS = 20
# An offline model's buffered windows do not wait for others: a 10-2-2 window is 175 encoder
# frames, compute-bound alone, so batching saves no CPU and a wait only adds latency (20 ms
# wait: p95 +25-40 %; 0 ms: as unbatched; docs/performance.md).
DEFAULT_BUFFERED_BATCH_WAIT_MS = 0
# Uploads of one backend transcribed as one batch (request batching, upload_batching.py): 16
# doubled 3 s uploads' throughput on 2 cores and lowered their p95, where 8 and 32 gained less
# (docs/performance.md, "Batched uploads"). With a backend free an upload waits at most the
# batch wait (DEFAULT_BATCH_WAIT_MS) for others.
DEFAULT_UPLOAD_BATCH = 16
# (left, chunk, right) seconds of NeMo's buffered chunked inference: realtime sessions use
# 10-2-2 (text final about 4 s after it is spoken); a streamed file uses 10-10-5, whose result
# is close to offline and which re-encodes 2.5x the audio instead of 7x.
DEFAULT_REALTIME_WINDOW = (10.0, 2.0, 2.0)
DEFAULT_SSE_WINDOW = (10.0, 10.0, 5.0)
# A realtime connection that sends nothing for this long is closed.
DEFAULT_STREAM_IDLE_SECONDS = 30.0
# Largest decoded input_audio_buffer.append, in MiB (OpenAI's limit is 15 MiB).
DEFAULT_MAX_APPEND_MB = 15.0
# One client's (IP address's) share of the transcription queue and of the live streams.
DEFAULT_CLIENT_SHARE = 0.5
# The diarization latency presets of realtime sessions with speakers (Diarizer.stream's names).
# very_low lags the audio by 0.16-0.64 s (its 0.48 s chunk runs once it and its 0.16 s right
# context are in): server_vad commits a turn 0.5 s after its speech, so at most the last 0.14 s
# of speech lies beyond the diarized time, within the nearest-segment rule's 0.5 s. ultra_low
# (0.08-0.32 s) leaves none, with twice the chunks per second of audio; low and model lag more
# than the closing silence.
REALTIME_DIARIZE_LATENCIES = ("model", "low", "very_low", "ultra_low")
DEFAULT_REALTIME_DIARIZE_LATENCY = "very_low"
# A realtime session is closed after this long, audio or not.
DEFAULT_MAX_SESSION_SECONDS = 3600.0
# Open connections in all and from one IP address; more are answered 503 and closed.
DEFAULT_MAX_CONNECTIONS = 1024
DEFAULT_MAX_CONNECTIONS_PER_CLIENT = 64
# Seconds a request's head may take to arrive, and then its body.
DEFAULT_HEADER_TIMEOUT = 10.0
DEFAULT_BODY_TIMEOUT = 120.0
# On SIGTERM, seconds the requests in flight get before they are cancelled.
DEFAULT_SHUTDOWN_TIMEOUT = 30.0
# Host headers and browser origins answered by default: loopback only (origins.py says why).
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
LOOPBACK_ORIGINS = ("http://localhost", "http://127.0.0.1", "http://[::1]",
                    "https://localhost", "https://127.0.0.1", "https://[::1]")
