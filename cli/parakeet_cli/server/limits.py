"""The server's default request limits, shared by the command line and the application
(kept apart from :mod:`.app` so that the command line does not import starlette)."""

# Largest upload, in MiB (OpenAI's limit for this endpoint).
DEFAULT_MAX_UPLOAD_MB = 25.0
# Longest audio one request may hold, in seconds. The library takes any length (long audio
# runs with local attention, memory linear in the length); a server still bounds what one
# request may cost.
DEFAULT_MAX_AUDIO_SECONDS = 3600.0
