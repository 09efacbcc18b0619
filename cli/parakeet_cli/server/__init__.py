"""``parakeet-server``: an OpenAI-compatible transcription server (see docs/server.md).

This module holds only the command line; the web application is in :mod:`.app` and is
imported when the server starts, so ``parakeet-cli`` can offer ``server`` without paying for
starlette and uvicorn on every invocation.
"""

from __future__ import annotations

import os
from typing import Any, Optional

import click

from parakeet_py import __version__

from ..common import (ATTENTION, ATTENTION_HELP, DIARIZE_MODEL, MODEL_HELP, MODEL_PATH, SOUND_MODEL, STREAM_CONTEXT,
                      check_stream_context, component_option, kernel_options)
from .limits import (DEFAULT_BATCH_WAIT_MS, DEFAULT_BODY_TIMEOUT, DEFAULT_BUFFERED_BATCH_WAIT_MS, DEFAULT_CLIENT_SHARE,
                     DEFAULT_HEADER_TIMEOUT, DEFAULT_MAX_APPEND_MB, DEFAULT_MAX_AUDIO_SECONDS, DEFAULT_MAX_BATCH,
                     DEFAULT_MAX_CONNECTIONS,
                     DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
                     DEFAULT_MAX_QUEUE_WAIT, DEFAULT_MAX_SESSION_SECONDS, DEFAULT_MAX_STREAMS, DEFAULT_MAX_UPLOAD_MB,
                     DEFAULT_REALTIME_DIARIZE_LATENCY, DEFAULT_REALTIME_WINDOW,
                     DEFAULT_SHUTDOWN_TIMEOUT, DEFAULT_SSE_WINDOW, DEFAULT_STREAM_IDLE_SECONDS, DEFAULT_UPLOAD_BATCH,
                     LOOPBACK_HOSTS, LOOPBACK_ORIGINS, REALTIME_DIARIZE_LATENCIES)
from .voices import load_voices, voice_options

# --host values that mean every address: no name of their own to trust.
_WILDCARD_HOSTS = ("0.0.0.0", "::", "")

# Every option can also come from the environment as PARAKEET_SERVER_<OPTION> (--max-queue:
# PARAKEET_SERVER_MAX_QUEUE), which is how a container image is configured; a flag given on the
# command line wins. The three variables below predate that scheme and are kept as they are.
ENV_PREFIX = "PARAKEET_SERVER"
MODEL_ENV = "PARAKEET_SERVER_MODEL"
API_KEY_ENV = "PARAKEET_API_KEY"
MAX_UPLOAD_ENV = "PARAKEET_MAX_UPLOAD_MB"
MAX_AUDIO_ENV = "PARAKEET_MAX_AUDIO_SECONDS"


class WindowType(click.ParamType):
    """``LEFT,CHUNK,RIGHT`` seconds (NeMo's "10-2-2" order) → a (left, chunk, right) tuple."""

    name = "LEFT,CHUNK,RIGHT"

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> Any:
        if isinstance(value, tuple):
            return value
        try:
            left, chunk, right = (float(v) for v in str(value).replace("-", ",").split(","))
        except ValueError:
            self.fail(f"{value!r}: give LEFT,CHUNK,RIGHT seconds, e.g. 10,2,2", param, ctx)
        if chunk < 0.08 or left < 0 or right < 0:
            self.fail(f"{value!r}: CHUNK must be >= 0.08 s, LEFT and RIGHT >= 0", param, ctx)
        return (left, chunk, right)


def _window_text(window: Any) -> str:
    return ",".join(f"{v:g}" for v in window)


@click.command(context_settings={"help_option_names": ["-h", "--help"], "auto_envvar_prefix": ENV_PREFIX})
@click.version_option(__version__, prog_name="parakeet-server")
@click.option("--model", "-m", "model_path", required=True, envvar=MODEL_ENV,
              type=MODEL_PATH, help=f"The model to serve: {MODEL_HELP}.")
@component_option()
@click.option("--concurrency", "-k", default=1, show_default=True, type=click.IntRange(1, 64),
              help="Requests transcribed at once (backends sharing one copy of the weights).")
@click.option("--threads", "-t", default=None, type=click.IntRange(min=1),
              help="Compute threads per backend [default: the physical cores divided among the backends].")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; use 0.0.0.0 to accept other machines.")
@click.option("--port", "-p", default=8000, show_default=True, type=click.IntRange(0, 65535))
@click.option("--api-key", envvar=API_KEY_ENV, default=None,
              help="Require 'Authorization: Bearer KEY' on /v1 endpoints.")
@click.option("--max-upload-mb", envvar=MAX_UPLOAD_ENV, default=DEFAULT_MAX_UPLOAD_MB, show_default=True,
              type=click.FloatRange(min=0, min_open=True),
              help="Largest audio file accepted, in MiB (larger uploads get 413).")
@click.option("--max-audio-seconds", envvar=MAX_AUDIO_ENV, default=DEFAULT_MAX_AUDIO_SECONDS, show_default=True,
              type=click.FloatRange(min=0, min_open=True),
              help="Longest audio accepted, in seconds (longer audio gets 413 before it is transcribed).")
@click.option("--attention", type=ATTENTION, help=ATTENTION_HELP)
@kernel_options
@click.option("--max-queue", default=None, type=click.IntRange(min=0),
              help="Requests allowed to wait for a backend before new ones get 503 [default: 2 x concurrency].")
@click.option("--max-queue-wait", default=DEFAULT_MAX_QUEUE_WAIT, show_default=True,
              type=click.FloatRange(min=0, min_open=True),
              help="Seconds a request may wait for a backend; then it is answered 503 with Retry-After.")
@click.option("--max-streams", default=DEFAULT_MAX_STREAMS, show_default=True, type=click.IntRange(min=1),
              help="Live streams (stream=true transcriptions and /v1/realtime sessions) open at once; one more "
                   "is refused (503, or an error event and close code 1013).")
@click.option("--max-batch", default=DEFAULT_MAX_BATCH, show_default=True, type=click.IntRange(1, 1024),
              help="Chunks of live streams (the steps of a cache-aware model, the buffered windows of an offline "
                   "one) that run in one batched encoder pass (1: no batching).")
@click.option("--batch-wait-ms", default=None, show_default=f"{DEFAULT_BATCH_WAIT_MS}; {DEFAULT_BUFFERED_BATCH_WAIT_MS} for an offline "
              "model's live streams", type=click.IntRange(0, 1000),
              help="Milliseconds a live stream's ready chunk, or an upload, may wait for others to join its "
                   "batch.")
@click.option("--upload-batch", default=DEFAULT_UPLOAD_BATCH, show_default=True, type=click.IntRange(1, 256),
              help="Uploads per backend transcribed as one batch (one encoder pass and greedy decode for all; "
                   "1: no batching). Beam search, hotwords, VAD-cut, diarized and over-30 s uploads run alone.")
@click.option("--realtime-window", default=_window_text(DEFAULT_REALTIME_WINDOW), show_default=True,
              type=WindowType(), help="Seconds of left context, chunk and right context of /v1/realtime sessions "
                                      "(text is final chunk + right seconds after it is spoken).")
@click.option("--att-context", type=STREAM_CONTEXT, default=None,
              help="A cache-aware streaming model's attention context for live streams (both kinds), one of those "
                   "/v1/models lists: chunks of (R + 1) x 80 ms, text final that long after it is spoken [default: "
                   "the model's first]. Offline models stream in the windows above instead.")
@click.option("--sse-window", default=_window_text(DEFAULT_SSE_WINDOW), show_default=True, type=WindowType(),
              help="The same for stream=true transcriptions of uploaded files.")
@click.option("--stream-idle-timeout", default=DEFAULT_STREAM_IDLE_SECONDS, show_default=True,
              type=click.FloatRange(min=0, min_open=True),
              help="Seconds a /v1/realtime session may send no audio before it is closed (other events do not "
                   "count).")
@click.option("--max-session-seconds", default=DEFAULT_MAX_SESSION_SECONDS, show_default=True,
              type=click.FloatRange(min=0, min_open=True),
              help="Seconds a /v1/realtime session may stay open, audio or not.")
@click.option("--client-share", default=DEFAULT_CLIENT_SHARE, show_default=True,
              type=click.FloatRange(min=0, max=1, min_open=True),
              help="Fraction of the queue's places (concurrency + max-queue) and of the live streams that one "
                   "client (IP address) may hold; at least one each.")
@click.option("--max-connections", default=DEFAULT_MAX_CONNECTIONS, show_default=True, type=click.IntRange(min=1),
              help="Open connections in all; one more is answered 503 and closed.")
@click.option("--max-connections-per-client", default=DEFAULT_MAX_CONNECTIONS_PER_CLIENT, show_default=True,
              type=click.IntRange(min=1), help="Open connections from one IP address; one more is answered 503 "
                                               "and closed.")
@click.option("--header-timeout", default=DEFAULT_HEADER_TIMEOUT, show_default=True,
              type=click.FloatRange(min=0, min_open=True),
              help="Seconds a request's line and headers may take to arrive; then the connection is closed.")
@click.option("--body-timeout", default=DEFAULT_BODY_TIMEOUT, show_default=True,
              type=click.FloatRange(min=0, min_open=True),
              help="Seconds a request's body may take to arrive after its headers; then 408 and close.")
@click.option("--trusted-host", "trusted_hosts", multiple=True,
              help="A Host name clients use, trusted beyond loopback and --host (repeat; '*': any). Others get 400.")
@click.option("--allowed-origin", "allowed_origins", multiple=True,
              help="A web origin (scheme://host[:port]) whose pages may use the server, beyond loopback's "
                   "(repeat; '*': any). A request with another Origin gets 403.")
@click.option("--shutdown-timeout", default=DEFAULT_SHUTDOWN_TIMEOUT, show_default=True,
              type=click.FloatRange(min=0),
              help="On SIGINT/SIGTERM, seconds the requests in flight get before they are cancelled.")
@click.option("--max-append-mb", default=DEFAULT_MAX_APPEND_MB, show_default=True,
              type=click.FloatRange(min=0, min_open=True),
              help="Largest audio in one input_audio_buffer.append, in MiB (decoded).")
@click.option("--vad-model", default=None, metavar="PATH|NAME|none",
              help="Silero VAD GGUF file or name for realtime turn detection (server_vad, the sessions' default) and "
                   "chunking_strategy server_vad; 'none': no VAD [default: the installed silero-vad package's "
                   "model, converted once into the cache, or none without the package].")
@click.option("--diarize-model", type=DIARIZE_MODEL, default=None,
              help="A Sortformer diarization GGUF file or name: response_format=diarized_json, and speakers on "
                   "the words of verbose_json and the cues of srt/vtt (docs/server.md).")
@click.option("--sound-model", type=SOUND_MODEL, default=None,
              help="A CED sound-tagger GGUF file or model name: verbose_json responses get \"sound_events\" (what "
                   "else is heard, by the sound stream's rules; docs/sound.md), and realtime sessions sound events "
                   "(transcription.sounds).")
@click.option("--realtime-diarize-latency", default=DEFAULT_REALTIME_DIARIZE_LATENCY, show_default=True,
              type=click.Choice(REALTIME_DIARIZE_LATENCIES),
              help="Latency preset of the diarization of /v1/realtime sessions that ask for speakers "
                   "(transcription.speakers, with --diarize-model): very_low (0.64 s) leaves at most a turn's "
                   "last 0.14 s of speech undiarized when server_vad commits it (500 ms after the speech) and "
                   "those words take the nearest speaker; ultra_low (0.32 s) none, at twice the diarizer's "
                   "chunks; low (1.04 s) and model lag more than the closing silence.")
@click.option("--model-id", default=None,
              help="Model id reported by /v1/models [default: the model file's name].")
@click.option("--log-level", default="info", show_default=True,
              type=click.Choice(["critical", "error", "warning", "info", "debug"]))
@voice_options
def main(model_path: str, concurrency: int, threads: Optional[int], host: str, port: int,
         api_key: Optional[str], max_upload_mb: float, max_audio_seconds: float, attention: Optional[Any],
         isa: Optional[str], bf16: Optional[bool],
         max_queue: Optional[int], max_queue_wait: float, max_streams: int, max_batch: int,
         batch_wait_ms: Optional[int], upload_batch: int, realtime_window: Any, att_context: Optional[Any],
         sse_window: Any,
         stream_idle_timeout: float, max_session_seconds: float, client_share: float, max_connections: int,
         max_connections_per_client: int, header_timeout: float, body_timeout: float, trusted_hosts: tuple,
         allowed_origins: tuple, shutdown_timeout: float, max_append_mb: float, vad_model: Optional[str],
         diarize_model: Optional[str], sound_model: Optional[str], realtime_diarize_latency: str,
         model_id: Optional[str], log_level: str, component: Optional[str],
         voices: Optional[str], speaker_model: Optional[str], voice_min_seconds: Optional[float]) -> None:
    """Serve a Parakeet model over HTTP with an OpenAI-compatible API.

    POST /v1/audio/transcriptions (stream=true: Server-Sent Events), WebSocket
    /v1/realtime?intent=transcription, GET /v1/models, GET /health and GET /metrics.
    """
    # Imported here so that `--help` and `parakeet-cli` stay fast and work without the
    # server's dependencies installed.
    from parakeet_py import Context, Diarizer, ParakeetError, SoundTagger

    from .app import ServerConfig, serve

    config = ServerConfig(
        model_id=model_id or (os.path.basename(model_path) if os.path.exists(model_path) else model_path),  # or a name
        model_path=model_path,
        api_key=api_key or None,
        max_upload_bytes=int(max_upload_mb * 1024 * 1024),
        max_queue=2 * concurrency if max_queue is None else max_queue,
        max_queue_wait=max_queue_wait,
        max_audio_seconds=max_audio_seconds,
        max_streams=max_streams,
        max_batch=max_batch,
        batch_wait_ms=batch_wait_ms,
        upload_batch=upload_batch,
        sse_window=sse_window,
        realtime_window=realtime_window,
        att_context=att_context,
        stream_idle_seconds=stream_idle_timeout,
        max_append_bytes=int(max_append_mb * 1024 * 1024),
        max_session_seconds=max_session_seconds,
        realtime_diarize_latency=realtime_diarize_latency,
        client_share=client_share,
        max_connections=max_connections,
        max_connections_per_client=max_connections_per_client,
        header_timeout=header_timeout,
        body_timeout=body_timeout,
        trusted_hosts=LOOPBACK_HOSTS + (() if host in _WILDCARD_HOSTS else (host,)) + trusted_hosts,
        allowed_origins=LOOPBACK_ORIGINS + allowed_origins,
        shutdown_timeout=shutdown_timeout,
    )
    try:
        context = Context(model_path, concurrency=concurrency, threads=threads, attention=attention, isa=isa,
                          bf16=bf16, component=component)
    except ParakeetError as e:
        raise click.ClickException(f"cannot load {model_path}: {e}") from e
    try:
        check_stream_context(context, att_context)
    except click.UsageError:
        context.close()
        raise
    vad = diarizer = tagger = named = None
    try:
        vad = _load_vad(vad_model)
        if diarize_model:
            try:  # its pool as wide as the ASR's: each transcribing worker may diarize at once
                diarizer = Diarizer(diarize_model, concurrency=concurrency)
            except ParakeetError as e:
                raise click.ClickException(f"cannot load {diarize_model}: {e}") from e
        if sound_model:
            try:
                tagger = SoundTagger(sound_model)
            except ParakeetError as e:
                raise click.ClickException(f"cannot load {sound_model}: {e}") from e
        named = load_voices(voices, speaker_model, voice_min_seconds)
    except BaseException:
        for loaded in (vad, diarizer, tagger):
            if loaded is not None:
                loaded.close()
        context.close()
        raise
    try:
        serve(context, config, host=host, port=port, log_level=log_level, vad=vad, diarizer=diarizer,
              sound_tagger=tagger, voices=named)
    finally:
        for loaded in (vad, diarizer, tagger, named):
            if loaded is not None:
                loaded.close()
        context.close()


def _load_vad(path: Optional[str]) -> Optional[Any]:
    """The --vad-model VAD: the given file, none, or the silero-vad package's model when it is
    installed (without it the server offers no turn detection, and says so)."""
    from parakeet_py import ParakeetError, Vad
    from parakeet_py.vad import default_model

    if path is not None and path.lower() == "none":
        return None
    if path is None:
        try:
            path = str(default_model())
        except ParakeetError as e:
            click.echo(f"parakeet-server: no VAD ({e}): realtime sessions default to turn_detection null, "
                       "and server_vad is refused", err=True)
            return None
    try:
        return Vad(path)
    except ParakeetError as e:
        raise click.ClickException(f"cannot load the VAD model {path}: {e}") from e


__all__ = ["main"]


# `--help` names each option's variable (--version and --help have none).
for _option in main.params:
    if isinstance(_option, click.Option) and _option.expose_value:
        _option.show_envvar = True
