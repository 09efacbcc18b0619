"""What the ``parakeet-cli`` subcommands share: option types, thread settings, error reporting."""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, Optional

import click

from parakeet_py import ParakeetError, _native
from parakeet_py.context import ISA_LEVELS, attention_pair
from parakeet_py.decoders import DECODERS
from parakeet_py.transcript import Attention, attention_from_json

DECODER_CHOICE = click.Choice(list(DECODERS), case_sensitive=False)


class AttentionType(click.ParamType):
    """``--attention auto|full|L,R`` → "auto", "full" or ``(L, R)`` (the Python API's values)."""

    name = "auto|full|L,R"

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> Attention:
        if not isinstance(value, str):
            return value
        text = value.strip().lower()
        if text in ("auto", "full"):
            return text
        parts = text.split(",")
        try:
            attention: Attention = (int(parts[0]), int(parts[1])) if len(parts) == 2 else text
            attention_pair(attention)
            return attention
        except (ValueError, ParakeetError):
            self.fail(f"{value!r}: use auto, full, or L,R with both > 0 (local attention, e.g. 128,128)", param, ctx)


ATTENTION = AttentionType()
ATTENTION_HELP = ("Encoder attention: auto (full attention up to the model's auto_full_max_frames encoder frames, "
                  "local [128,128] above), full, or L,R for local attention with L frames of context before and R "
                  "after. Default: $PARAKEET_ATT_CONTEXT, else auto.")


class StreamContextType(click.ParamType):
    """``--att-context L,R`` → ``(L, R)``: a cache-aware streaming model's attention context, two
    whole numbers of encoder frames (whether the model has it is the model's to say)."""

    name = "L,R"

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> Any:
        if isinstance(value, tuple):
            return value
        try:
            left, right = (int(v) for v in str(value).split(","))
        except ValueError:
            self.fail(f"{value!r} is not L,R (two whole numbers)", param, ctx)
        return (left, right)


STREAM_CONTEXT = StreamContextType()


def check_stream_context(context: Any, pair: "tuple[int, int] | None", flag: str = "--att-context") -> None:
    """A usage error unless ``pair`` is None or one of the cache-aware ``context``'s contexts."""
    if pair is None:
        return
    streaming = context.info.get("streaming", {})
    if streaming.get("mode") != "cache_aware":
        raise click.UsageError(f"{flag} applies to cache-aware streaming models; this one streams in buffered windows")
    offered = [(c["left"], c["right"]) for c in streaming["contexts"]]
    if tuple(pair) not in offered:
        listed = ", ".join(f"{left},{right}" for left, right in offered)
        raise click.UsageError(f"{flag} {pair[0]},{pair[1]} is not one of this model's contexts ({listed})")


def attention_label(attention: "Attention | Dict[str, Any] | None") -> str:
    """"auto", "full", "local[L,R]" (from a Python value or the library's JSON object); "" for None."""
    if isinstance(attention, dict):
        attention = attention_from_json(attention)
    if attention is None:
        return ""
    if isinstance(attention, tuple):
        return f"local[{attention[0]},{attention[1]}]"
    return str(attention)


def kernel_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--isa`` and ``--bf16/--no-bf16``: the load options of the kernels (the command's
    ``isa`` and ``bf16`` parameters, None when not given; pass them to ``Context``)."""
    command = click.option(
        "--bf16/--no-bf16", default=None,
        help="Round an f32/f16 model's encoder matrices to bfloat16 at load (~1.8x faster, numbers close to "
             "f32's but not equal; needs AVX512_BF16). Default: $PARAKEET_BF16, else off.")(command)
    return click.option(
        "--isa", type=click.Choice(ISA_LEVELS), default=None,
        help="Kernel level to run (at most the CPU's: asking for more is an error). Default: $PARAKEET_CPU, "
             "else the CPU's own.")(command)


def kernels_label(info: Dict[str, Any]) -> str:
    """The kernel level a loaded model runs ("avx512"), plus "+bf16" when the bf16 load option
    (or PARAKEET_BF16=1) gave it a bfloat16 encoder."""
    return str(info.get("isa", "")) + ("+bf16" if info.get("bf16_encoder") else "")


class ModelArg(click.ParamType):
    """A model: an existing file, or a name ``OWNER/REPO[/PATH][@REVISION][:TYPE]`` (or a short
    alias) of ``kind`` (asr, diarize, vad, speaker, sound), downloaded and converted when the model loads
    (docs/models.md). Anything else is checked as a file path, with click's own message."""

    name = "PATH|NAME"

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> Any:
        from parakeet_py.hub.names import is_model_name

        if isinstance(value, str) and not os.path.exists(value) and is_model_name(value, self.kind):
            return value
        return _FILE.convert(value, param, ctx)


_FILE = click.Path(exists=True, dir_okay=False, readable=True)
MODEL_PATH = ModelArg("asr")
VAD_MODEL = ModelArg("vad")
DIARIZE_MODEL = ModelArg("diarize")
SPEAKER_MODEL = ModelArg("speaker")
SOUND_MODEL = ModelArg("sound")
MODEL_HELP = "A parakeet GGUF file, or a model name OWNER/REPO[/FILE][@REVISION][:TYPE] (docs/models.md)"


def component_option(flag: str = "--component", model_flag: str = "-m") -> Callable[..., Any]:
    """The option that picks a bundle's component by name for the model of ``model_flag``."""
    return click.option(flag, metavar="NAME", default=None,
                        help=f"When {model_flag} is a bundle (docs/bundles.md): its component NAME "
                             "[default: its only asr component, else its only loadable one].")


def threads_per_backend(concurrency: int, threads: "int | None") -> int:
    """Apply the CLI's thread rules and return the compute threads each request gets.

    Concurrency 1: ``threads`` (or the default budget) becomes the process-wide backend's
    thread count. Concurrency K > 1: ``threads`` is per backend; without it the default budget
    (physical cores, or $PARAKEET_THREADS) is divided by K, at least 1 each, as the library does.
    """
    if concurrency <= 1:
        return _native.set_threads(threads or 0)
    if threads:
        return threads
    budget = _native.set_threads(0)  # returns the default budget (that backend is unused with a pool)
    return max(1, budget // concurrency)


def file_error(path: str, message: str) -> str:
    """``path: message``, without repeating the path when the message already starts with it."""
    return message if message.startswith(path) else f"{path}: {message}"


def given_options(**options: Any) -> Dict[str, Any]:
    """The options the user gave (None: not given, so the library's default applies)."""
    return {k: v for k, v in options.items() if v is not None}


def echo_documents(docs: "list[Dict[str, Any]]") -> None:
    """Per-file JSON documents: the document itself for one file, a JSON list for several."""
    import json

    click.echo(json.dumps(docs[0] if len(docs) == 1 else docs, indent=2))
