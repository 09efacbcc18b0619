"""``parakeet-cli transcribe --stream``: live transcription of a file or of raw PCM on stdin.

Text is printed as it becomes final (``chunk + right`` seconds after it is spoken, NeMo's
buffered chunked inference). On a terminal the partial hypothesis is shown after it on
standard error and replaced as it changes. ``-`` reads raw 16 kHz mono s16le PCM from
standard input as it arrives, so ``ffmpeg -i talk.mp3 -f s16le -ac 1 -ar 16000 - |
parakeet-cli transcribe --stream -m model.gguf -`` transcribes live.

With ``--diarize-model`` (a streaming Sortformer) the stream is a SpeakerStream: each utterance
is printed as its words commit, "[Speaker N] text" a line (or one JSON object a line).
"""

from __future__ import annotations

import contextlib
import json
import sys
from typing import BinaryIO, Iterator, List, Optional, TextIO, Tuple

import numpy as np

from parakeet_py import Context, Diarizer, StreamUpdate, Utterance
from parakeet_py.audio.decode import check_complete, open_decoder

from .subtitles import utterance_line

# Raw PCM on standard input: 16 kHz mono signed 16-bit little-endian, read 0.1 s at a time.
STDIN_RATE = 16000
STDIN_BLOCK_BYTES = 3200
# A file is fed 0.5 s at a time, as if it arrived live (the result does not depend on it).
FILE_BLOCK_SEC = 0.5

# Terminal control: save / restore the cursor, clear to the end of the line.
_SAVE, _RESTORE, _CLEAR = "\x1b7", "\x1b8", "\x1b[K"


def stdin_blocks(stdin: BinaryIO) -> Iterator[np.ndarray]:
    """int16 blocks of raw s16le PCM as they arrive (an odd trailing byte waits for its pair)."""
    read = getattr(stdin, "read1", stdin.read)
    pending = b""
    while True:
        data = read(STDIN_BLOCK_BYTES)
        if not data:
            return
        data = pending + data
        cut = len(data) & ~1
        pending = data[cut:]
        if cut:
            yield np.frombuffer(data[:cut], dtype="<i2")


def open_source(source: str) -> Tuple[Iterator[np.ndarray], int]:
    """(blocks of audio, their sample rate) for a path or ``-``."""
    if source == "-":
        return stdin_blocks(sys.stdin.buffer), STDIN_RATE
    opened = contextlib.ExitStack()
    decoder = opened.enter_context(open_decoder(source, source))  # closed when blocks() ends

    def blocks() -> Iterator[np.ndarray]:
        with opened:
            frames = max(1, int(decoder.rate * FILE_BLOCK_SEC))
            decoded = 0
            for block in decoder.blocks():
                decoded += len(block)
                for begin in range(0, len(block), frames):
                    yield block[begin:begin + frames]
            check_complete(decoder, decoded)

    return blocks(), decoder.rate


class TextPrinter:
    """Final text to ``out`` as it comes; the partial after it on ``err`` (when asked); with
    ``events``, an ``[EOU]`` / ``[EOB]`` marker after the text of the update that decoded it
    (the models whose vocabulary has the end-of-utterance / backchannel tokens)."""

    def __init__(self, out: TextIO, err: TextIO, partial: bool, events: bool = False) -> None:
        self.out, self.err, self.partial, self.events = out, err, partial, events
        self.shown = False

    def __call__(self, update: StreamUpdate) -> None:
        if self.partial and self.shown:
            self.err.write(_CLEAR)
            self.err.flush()
        if update.text:
            self.out.write(update.text)
            self.out.flush()
        if self.events and update.events:
            self.out.write("".join(f" [{e.type.upper()}]" for e in update.events))
            self.out.flush()
        if self.partial and update.partial:
            self.err.write(f"{_SAVE}\x1b[2m{update.partial}\x1b[0m{_RESTORE}")
            self.err.flush()
            self.shown = True
        if update.finalized:
            self.out.write("\n")
            self.out.flush()


class JsonPrinter:
    """One JSON object per line for each update that changed the text or the partial."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.last_partial = ""

    def __call__(self, update: StreamUpdate) -> None:
        if update.text or update.partial != self.last_partial or update.finalized:
            self.out.write(json.dumps(update.to_dict(), ensure_ascii=False) + "\n")
            self.out.flush()
        self.last_partial = update.partial


class UtterancePrinter:
    """Each committed utterance as it comes, one line: text as transcribe --diarize-model prints
    it ("[Speaker N] text"), json as its ``utterances`` entries ({"speaker", "text", "start",
    "end", "confidence"})."""

    def __init__(self, out: TextIO, fmt: str) -> None:
        self.out, self.fmt = out, fmt

    def __call__(self, utterances: List[Utterance]) -> None:
        for u in utterances:
            self.out.write((utterance_line(u) if self.fmt == "text" else json.dumps(u.to_dict(), ensure_ascii=False))
                           + "\n")
        self.out.flush()


def stream_speakers(ctx: Context, diarizer: Diarizer, source: str, *, latency: str,
                    printer: UtterancePrinter) -> None:
    """Feeds ``source`` block by block to a SpeakerStream on ``ctx`` and ``diarizer`` at the
    diarizer's ``latency`` preset, handing each feed's utterances to ``printer``."""
    blocks, rate = open_source(source)
    with ctx.stream(diarizer=diarizer, latency=latency, sample_rate=rate) as stream:
        for block in blocks:
            printer(stream.feed(block))
        printer(stream.finish())


def stream_transcribe(ctx: Context, source: str, *, chunk: Optional[float], left: Optional[float],
                      right: Optional[float], decoder: str, printer,  # type: ignore[no-untyped-def]
                      att_context: Optional[Tuple[int, int]] = None, language: Optional[str] = None) -> None:
    """Feeds ``source`` block by block to a stream on ``ctx``, handing each update to ``printer``.
    Unset settings take Context.stream's defaults (10-2-2 windows offline, the model's first
    context on a cache-aware model)."""
    blocks, rate = open_source(source)
    with ctx.stream(chunk, left, right, att_context=att_context, decoder=decoder, sample_rate=rate,
                    language=language) as stream:
        for block in blocks:
            printer(stream.feed(block))
        printer(stream.finalize())
