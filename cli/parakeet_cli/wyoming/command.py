"""``parakeet-cli wyoming``: the command line of the Wyoming speech-to-text service.

Options follow wyoming-faster-whisper's where they mean the same (``--uri``, ``--model``,
``--language``, ``--beam-size``, ``--zeroconf``, ``--debug``); the rest are this project's
(``--concurrency``, ``--threads``, the kernel options, the live-text window, and parakeet-server's
``--max-batch`` and ``--batch-wait-ms`` for the live streams).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any, Optional

import click

from ..common import (ATTENTION, ATTENTION_HELP, DECODER_CHOICE, MODEL_HELP, MODEL_PATH, STREAM_CONTEXT,
                      check_stream_context, component_option, kernel_options, threads_per_backend)
from ..server import WindowType
from ..server.limits import DEFAULT_BATCH_WAIT_MS, DEFAULT_BUFFERED_BATCH_WAIT_MS, DEFAULT_MAX_BATCH

DEFAULT_URI = "tcp://127.0.0.1:10300"
DEFAULT_WINDOW = "10,2,2"
DEFAULT_MAX_SECONDS = 300.0


@click.command("wyoming")
@click.option("-m", "--model", required=True, type=MODEL_PATH, help=MODEL_HELP + ".")
@click.option("--uri", default=DEFAULT_URI, show_default=True,
              help="Where to listen: tcp://HOST:PORT (tcp://0.0.0.0:10300 for other machines, such as Home "
                   "Assistant's; port 0 picks a free one) or unix://PATH.")
@click.option("-c", "--concurrency", type=click.IntRange(min=1), default=1, show_default=True,
              help="Library calls run at once, for all clients together (backends in the model's pool).")
@click.option("-t", "--threads", type=click.IntRange(min=1),
              help="Compute threads: of the one backend, or of each backend when --concurrency > 1. "
                   "Default: all physical cores ($PARAKEET_THREADS), divided among the backends.")
@click.option("-d", "--decoder", type=DECODER_CHOICE, default="default", show_default=True,
              help="Which head decodes (as `transcribe --decoder`).")
@click.option("--beam-size", type=click.IntRange(min=1), default=None,
              help="Beam search with N beams for the final transcript (as `transcribe --beam`) [default: greedy].")
@click.option("--language", default=None, metavar="LOCALE",
              help="A prompt-conditioned model's locale for clients that name none, e.g. de-DE [default: the "
                   "model's].")
@click.option("--languages", default="en", show_default=True, metavar="CODES",
              help="Languages `info` lists for a model without prompts, comma-separated (Home Assistant offers "
                   "the service to pipelines in these). A prompt model lists its own locales.")
@click.option("--stream-window", default=DEFAULT_WINDOW, show_default=True, type=WindowType(),
              help="Seconds of left context, chunk and right context of the live text of an offline model "
                   "(words are final chunk + right seconds after they are spoken).")
@click.option("--att-context", type=STREAM_CONTEXT, default=None,
              help="The live text of a cache-aware streaming model: its attention context, one of those `info` "
                   "lists (chunks of (R + 1) x 80 ms) [default: the model's first].")
@click.option("--streaming/--no-streaming", default=True, show_default=True,
              help="Live text: transcript-start, transcript-chunk as words become final, transcript-stop "
                   "(info's supports_transcript_streaming). Without it, only the transcript, and no stream runs.")
@click.option("--max-batch", default=DEFAULT_MAX_BATCH, show_default=True, type=click.IntRange(1, 1024),
              help="Live streams, of all clients together, whose chunks run in one batched encoder pass (the "
                   "steps of a cache-aware model, the buffered windows of an offline one; 1: each runs alone).")
@click.option("--batch-wait-ms", default=None, show_default=f"{DEFAULT_BATCH_WAIT_MS}; {DEFAULT_BUFFERED_BATCH_WAIT_MS} on an "
              "offline model", type=click.IntRange(0, 1000),
              help="Milliseconds a live stream's ready chunk may wait for other clients' streams to fill its batch.")
@click.option("--max-seconds", type=click.FloatRange(min=0, min_open=True), default=DEFAULT_MAX_SECONDS,
              show_default=True, help="Longest utterance; a longer one gets an error event and is dropped.")
@click.option("--model-name", default=None,
              help="The model's name in `info` [default: the file's name, or the model name given to -m].")
@click.option("--zeroconf", is_flag=False, flag_value="parakeet", default=None, metavar="[NAME]",
              help="Announce the service over mDNS as NAME (default parakeet), so Home Assistant discovers it "
                   "(tcp:// only).")
@click.option("--attention", type=ATTENTION, help=ATTENTION_HELP)
@kernel_options
@click.option("--debug", is_flag=True, help="Log every utterance's events and errors (DEBUG).")
@component_option()
def wyoming(model: str, uri: str, concurrency: int, threads: Optional[int], decoder: str, beam_size: Optional[int],
            language: Optional[str], languages: str, stream_window: Any, att_context: Optional[Any], streaming: bool,
            max_batch: int,
            batch_wait_ms: Optional[int], max_seconds: float,
            model_name: Optional[str], zeroconf: Optional[str], attention: Any, isa: Optional[str],
            bf16: Optional[bool], debug: bool, component: Optional[str]) -> None:
    """Serve a model to Home Assistant (and other clients) over the Wyoming protocol.

    A client's `describe` gets `info`; `transcribe`, `audio-start`, `audio-chunk`s and
    `audio-stop` get a `transcript`: exactly `parakeet-cli transcribe`'s text for the same audio
    as a WAV file, at whatever rate, width and channels the client sends. With live text (the
    default) the words also come as `transcript-chunk`s while the client speaks. See
    docs/wyoming.md for Home Assistant's side.

    \b
    Example:
      parakeet-cli wyoming -m model.gguf --uri tcp://0.0.0.0:10300 -c 2
    """
    from parakeet_py import Context

    from ..stream_batching import stream_group
    from .program import model_locales, program_info, resolve_language, UnknownLanguage
    from .discovery import DiscoveryError
    from .service import Service, serve
    from .utterance import Settings

    logging.basicConfig(level=logging.DEBUG if debug else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    per_backend = threads_per_backend(concurrency, threads)
    with Context(model, concurrency=concurrency, threads=per_backend if concurrency > 1 else None,
                 attention=attention, isa=isa, bf16=bf16, component=component) as context:
        check_stream_context(context, att_context)
        locales = model_locales(context.info)
        try:
            default_language = resolve_language(language, locales)
        except UnknownLanguage as e:
            raise click.BadParameter(str(e), param_hint="--language")
        listed = locales or [code.strip() for code in languages.split(",") if code.strip()]
        name = model_name or (Path(model).name if Path(model).exists() else model)
        settings = Settings(decoder=decoder, beam=beam_size, window=stream_window if streaming else None,
                            max_seconds=max_seconds, att_context=att_context)
        # no live streams, nothing to batch
        group = stream_group(context, max_batch, batch_wait_ms) if streaming else None
        service = Service(context, settings, program_info(name, context.info, listed, streaming).event(), locales,
                          default_language, group)

        def ready(address: str) -> None:
            logging.getLogger("parakeet.wyoming").info("serving %s on %s", name, address)

        try:
            asyncio.run(serve(service, uri, ready, zeroconf))
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--uri")
        except DiscoveryError as e:
            raise click.ClickException(str(e))
        finally:
            service.shutdown()
