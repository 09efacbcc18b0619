"""The batch job on one machine: inputs → one loaded model with K backends → an output file.

A :class:`Prefetcher` decodes the next files ahead of the transcription and hands them out in
input order. A plain job takes them in windows of 16 per backend, each transcribed in one call of
the library's batched pass (:mod:`..batch_call`: results bitwise those of the files one by one,
every file with its own error), so its rows follow the inputs; a VAD-cut or diarized job runs K
threads of one file at a time (rows in the order they finish). Every row is written the moment
its window (or file) is done (:mod:`.output`), so a crash loses only the rows in flight and
``resume`` skips the ids already written.
A file that cannot be read, decoded or transcribed becomes a row with its ``error``; the job
goes on. Long recordings take the library's long-form path (local attention under "auto").
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Callable, Iterable, List, Optional

from ..batch_call import transcribe_decoded, window_size
from ..context import Context
from ..speakers.diarize import Diarizer
from ..errors import InternalError, InvalidArgument
from ..transcript import Attention, Transcript
from ..vad import Vad
from .manifest import Entry, read_inputs
from .output import open_output, output_format
from .prefetch import Prefetcher
from .rows import arrow_schema, decoder_label, exception_message, make_row, model_id, passthrough_schema


@dataclass
class BatchOptions:
    """How a batch job runs (the same fields locally and on Ray where they apply)."""

    concurrency: int = 1                 # K: backends of the pool, files transcribed at once
    threads: Optional[int] = None        # compute threads per backend (None: the library's default split)
    decoder: Optional[str] = None        # None/"default", "ctc", "tdt"/"rnnt"/"transducer"
    timestamps: bool = False             # add word and token timestamps to each row
    attention: Optional[Attention] = None
    decoders: int = 2                    # decoding threads ahead of the backends
    prefetch: Optional[int] = None       # decoded clips held ready (None: a batch call's window, 16 x
                                         # concurrency; with vad or diarize_model 2 x concurrency)
    prefetch_bytes: int = 1 << 30        # and at most this many bytes of samples
    vad: Optional[str] = None            # a Silero VAD GGUF: cut each file at pauses, keep its segments
                                         # (local jobs only)
    diarize_model: Optional[str] = None  # a Sortformer GGUF file: speakers and utterances per row (local jobs)


@dataclass
class BatchStats:
    """Where a job stands: updated after each row."""

    total: int                           # inputs this run transcribes (after resume's skip)
    skipped: int = 0                     # inputs already in the output (resume)
    dropped_lines: int = 0               # corrupt output lines resume dropped (their files are redone)
    done: int = 0
    errors: int = 0
    audio_seconds: float = 0.0
    started: float = field(default_factory=time.perf_counter)
    wall_seconds: float = 0.0

    @property
    def rtfx(self) -> float:
        """Aggregate real-time factor so far: audio seconds per wall second."""
        return self.audio_seconds / self.wall_seconds if self.wall_seconds > 0 else 0.0


def _row_writer(write: Callable[[dict], None], options: BatchOptions, decoder: str, model: str, vad: bool,
                diarized: bool) -> Callable[[Entry, Optional[Transcript], Optional[str]], None]:
    """Writes the row of one entry from its transcript or its error."""
    def row(entry: Entry, transcript: Optional[Transcript], error: Optional[str]) -> None:
        write(make_row(entry, transcript, error, decoder=decoder, model=model, timestamps=options.timestamps,
                       vad=vad, diarized=diarized))
    return row


def _transcribe_entries(prefetcher: Prefetcher, ctx: Context, row: Callable[..., None], options: BatchOptions,
                        vad: Optional[Vad], diarizer: Optional[Diarizer]) -> None:
    """One transcribing thread of a VAD-cut or diarized job: take decoded clips one at a time
    until none are left, write each row."""
    for entry, samples, error in prefetcher:
        transcript = None
        if error is None:
            try:
                if diarizer is not None:
                    transcript = ctx.transcribe(samples, sample_rate=ctx.sample_rate, diarizer=diarizer)
                else:
                    # only the speech, in chunks of <= 30 s of it (docs/vad.md)
                    transcript = ctx.transcribe(samples, sample_rate=ctx.sample_rate, decoder=options.decoder,
                                                timestamps=options.timestamps, vad=vad)
            except Exception as e:  # any failure of one file is that file's row, never the job's end
                error = exception_message(entry.path, e)
        row(entry, transcript, error)


def _transcribe_windows(prefetcher: Prefetcher, ctx: Context, row: Callable[..., None],
                        options: BatchOptions) -> None:
    """A plain job's transcribing thread: take windows of decoded clips until none are left,
    transcribe each in one batch call, write its rows. A clip that fails gets the error of its
    own call (:mod:`..batch_call`)."""
    for entry, result in transcribe_decoded(ctx, prefetcher, decoder=options.decoder, timestamps=options.timestamps):
        if isinstance(result, Transcript):
            row(entry, result, None)
        else:  # the decoder's message, or the exception of the clip's own call
            row(entry, None, result if isinstance(result, str) else exception_message(entry.path, result))


def run_batch(model_path: str, inputs: Iterable[str], output: str, options: Optional[BatchOptions] = None, *,
              resume: bool = False, overwrite: bool = False, retry_errors: bool = False,
              on_start: Optional[Callable[[BatchStats], None]] = None,
              on_row: Optional[Callable[[dict, BatchStats], None]] = None) -> BatchStats:
    """Transcribe every input (manifests, lists, directories, globs: see :mod:`.manifest`) into
    ``output`` (``.jsonl`` or ``.parquet``). ``resume`` skips the ids ``output`` already holds
    (with ``retry_errors``, not those of error rows, which are replaced); without it an existing
    output is an error unless ``overwrite``. ``on_start`` gets the stats
    once the skip is known, ``on_row`` each row as it is written (from the transcribing
    threads, one at a time). Returns the final stats."""
    options = options or BatchOptions()
    output_format(output)  # refuse a bad extension before reading anything
    entries = read_inputs(inputs)
    schema = None
    if output_format(output) == "parquet":
        schema = arrow_schema(options.timestamps, passthrough_schema(entries), vad=options.vad is not None,
                              diarized=options.diarize_model is not None)
    writer = open_output(output, schema=schema, resume=resume, overwrite=overwrite, retry_errors=retry_errors)
    todo: List[Entry] = [e for e in entries if e.id not in writer.done]
    stats = BatchStats(total=len(todo), skipped=len(entries) - len(todo), dropped_lines=writer.dropped_lines)
    lock = threading.Lock()

    def write(row: dict) -> None:
        writer.write(row)
        with lock:
            stats.done += 1
            stats.errors += row["error"] is not None
            stats.audio_seconds += row["duration"] or 0.0
            stats.wall_seconds = time.perf_counter() - stats.started
            if on_row is not None:
                on_row(row, stats)

    vad = None
    diarizer = None
    try:
        if options.vad is not None and options.diarize_model is not None:
            raise InvalidArgument("a batch is either VAD-cut or diarized, not both")
        # one VAD for every thread (thread-safe, read-only), loaded before the model so that a
        # bad VAD file stops the job before any work
        vad = Vad(options.vad) if options.vad is not None else None
        if options.diarize_model is not None:
            if options.decoder not in (None, "default"):
                raise InvalidArgument("a diarized batch runs the default decoder")
            diarizer = Diarizer(options.diarize_model, concurrency=options.concurrency)
        with Context(model_path, concurrency=options.concurrency, threads=options.threads,
                     attention=options.attention) as ctx:
            decoder, model = decoder_label(ctx.info, options.decoder), model_id(ctx.model_path)
            if on_start is not None:
                on_start(stats)
            stats.started = time.perf_counter()  # the model's load is not the job's throughput
            row = _row_writer(write, options, decoder, model, vad is not None, diarizer is not None)
            plain = vad is None and diarizer is None  # the library's batched pass; the others run file by file
            if plain:
                # one thread: each call runs a batch on every backend. A second call in flight (to
                # keep the backends busy while a window's rows are written) measured no faster.
                threads, prefetch = 1, options.prefetch or window_size(ctx.concurrency)
                work = partial(_transcribe_windows, ctx=ctx, row=row, options=options)
            else:
                threads, prefetch = options.concurrency, options.prefetch or 2 * options.concurrency
                work = partial(_transcribe_entries, ctx=ctx, row=row, options=options, vad=vad, diarizer=diarizer)
            with Prefetcher(todo, ctx.sample_rate, decoders=options.decoders, max_items=prefetch,
                            max_bytes=options.prefetch_bytes) as prefetcher:
                with ThreadPoolExecutor(threads, thread_name_prefix="batch") as pool:
                    workers = [pool.submit(work, prefetcher) for _ in range(threads)]
                for w in workers:
                    w.result()  # a failure outside one file's transcription (the output's disk) ends the job
                deaths = prefetcher.deaths
        stats.wall_seconds = time.perf_counter() - stats.started
        # Every input is a row, good or error; anything less is a failure of the job itself.
        if deaths or stats.done != stats.total:
            why = f"a decoder thread died ({'; '.join(deaths)}); " if deaths else ""
            raise InternalError(f"the batch job is incomplete: {why}{stats.done} rows of {stats.total} were written "
                                "(run again with --resume to do the rest)")
    finally:
        if vad is not None:
            vad.close()
        writer.close()
        if diarizer is not None:
            diarizer.close()
    return stats
