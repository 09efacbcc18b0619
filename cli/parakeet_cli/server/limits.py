"""The server's default request limits, shared by the command line and the application
(kept apart from :mod:`.app` so that the command line does not import starlette)."""

# Largest upload, in MiB (OpenAI's limit for this endpoint).
DEFAULT_MAX_UPLOAD_MB = 25.0
# Longest audio one request may hold, in seconds. The library takes any length (long audio
# runs with local attention, memory linear in the length); a server still bounds what one
# request may cost.
DEFAULT_MAX_AUDIO_SECONDS = 3600.0
# Live streams (SSE and realtime) open at once; one more is refused (503 / an error event).
DEFAULT_MAX_STREAMS = 16
# (left, chunk, right) seconds of NeMo's buffered chunked inference: realtime sessions use
# 10-2-2 (text final about 4 s after it is spoken); a streamed file uses 10-10-5, whose result
# is close to offline and which re-encodes 2.5x the audio instead of 7x.
DEFAULT_REALTIME_WINDOW = (10.0, 2.0, 2.0)
DEFAULT_SSE_WINDOW = (10.0, 10.0, 5.0)
# A realtime connection that sends nothing for this long is closed.
DEFAULT_STREAM_IDLE_SECONDS = 30.0
# Largest decoded input_audio_buffer.append, in MiB (OpenAI's limit is 15 MiB).
DEFAULT_MAX_APPEND_MB = 15.0
