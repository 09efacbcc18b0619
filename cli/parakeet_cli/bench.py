"""``parakeet-cli bench``: speed (and, given references, accuracy) over a list of audio files.

Procedure: load the model (timed: ``load_ms``), decode every file to the model's rate in
memory, run one warm-up request per backend, then time each file's ``transcribe`` call
(``perf_counter`` around it). With ``--concurrency`` K > 1 all files are submitted at once
through K worker threads, so K requests run in parallel on the model's pool; the wall time of
the whole batch gives the aggregate real-time factor.

Manifest format (``parakeet_py.batch.manifest``, the batch command's parser): one audio path
per line (relative paths are relative to the manifest's folder, or failing that to the current
directory); blank lines and lines whose first non-blank character is ``#`` are skipped; a TAB
separates an optional reference transcript, which turns on WER scoring. A JSONL or Parquet
manifest works too (its ``text`` or ``reference`` column is the reference).
"""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import click
import numpy as np
from tabulate import tabulate
from tqdm import tqdm

import parakeet_py
from parakeet_py import Context, ParakeetError, Transcript, load_audio
from parakeet_py.batch.manifest import Entry, ManifestError, read_one
from parakeet_py.synthetic_model import ARCHS, ensure_synthetic_model

from .common import (ATTENTION, ATTENTION_HELP, DECODER_CHOICE, MODEL_HELP, MODEL_PATH, attention_label,
                     component_option, file_error, kernel_options, kernels_label, threads_per_backend)
from .wer import word_errors

DEFAULT_MANIFEST = Path(parakeet_py.__file__).resolve().parent / "data" / "bench_manifest.tsv"
RANDOM_NOTE = "random weights: for speed measurements only"


def read_manifest(path: "str | os.PathLike[str]") -> List[Entry]:
    """The entries of a bench manifest (parakeet_py.batch.manifest's parser: a plain list with
    optional TAB references, or a JSONL/Parquet manifest whose ``text``/``reference`` column is
    the reference). Raises ManifestError when it is unreadable or lists nothing."""
    entries = read_one(os.fspath(path))
    if not entries:
        raise ManifestError(f"{path} lists no audio files")
    return entries


def _timed(ctx: Context, audio: np.ndarray, decoder: str) -> Tuple[Transcript, float]:
    start = time.perf_counter()
    transcript = ctx.transcribe(audio, sample_rate=ctx.sample_rate, decoder=decoder)
    return transcript, (time.perf_counter() - start) * 1000.0


def run_bench(ctx: Context, audio: List[np.ndarray], decoder: str,
              progress: bool) -> Tuple[List[Tuple[Transcript, float]], Optional[float]]:
    """Warm up, then time every file. Returns ([(transcript, proc_ms)] in input order, wall_ms
    of the concurrent batch or None when run one by one)."""
    k = ctx.concurrency
    # One warm-up per backend, by the path timed below (transcribe_many would take the batched pass).
    with ThreadPoolExecutor(max_workers=k, thread_name_prefix="warm-up") as pool:
        list(pool.map(lambda _: _timed(ctx, audio[0], decoder), range(k)))
    bar = tqdm(total=len(audio), desc="bench", unit="file", disable=None if progress else True,
               leave=False)
    try:
        if k == 1:
            results = []
            for a in audio:
                results.append(_timed(ctx, a, decoder))
                bar.update(1)
            return results, None
        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=k, thread_name_prefix="bench") as pool:
            futures = {pool.submit(_timed, ctx, a, decoder): i for i, a in enumerate(audio)}
            out: List[Any] = [None] * len(audio)
            for future in as_completed(futures):
                out[futures[future]] = future.result()
                bar.update(1)
        return out, (time.perf_counter() - start) * 1000.0
    finally:
        bar.close()


def build_report(model: str, random_weights: bool, decoder: str, threads: int, concurrency: int, load_ms: float,
                 attention: str, isa: str, entries: List[Entry], audio: List[np.ndarray], sample_rate: int,
                 results: List[Tuple[Transcript, float]], wall_ms: Optional[float]) -> Dict[str, Any]:
    files = []
    total_errors = total_words = 0
    for entry, a, (transcript, proc_ms) in zip(entries, audio, results):
        audio_sec = a.size / sample_rate
        row: Dict[str, Any] = {"path": entry.path, "audio_sec": round(audio_sec, 3), "proc_ms": round(proc_ms, 2),
                               "rtfx": round(audio_sec * 1000.0 / proc_ms, 2) if proc_ms > 0 else None,
                               "attention": attention_label(transcript.attention), "text": transcript.text}
        if entry.reference is not None:
            errors, words = word_errors(entry.reference, transcript.text)
            total_errors += errors
            total_words += words
            row["reference"] = entry.reference
            row["wer"] = round(errors / words, 4) if words else None
        files.append(row)
    total_audio = sum(a.size for a in audio) / sample_rate
    total_proc = sum(ms for _, ms in results)
    report: Dict[str, Any] = {"model": model, "random_weights": random_weights}
    if random_weights:
        report["note"] = RANDOM_NOTE
    report.update(decoder=decoder, threads=threads, attention=attention, isa=isa,
                  load_ms=round(load_ms, 2), files=files,
                  total_audio_sec=round(total_audio, 3), total_proc_ms=round(total_proc, 2),
                  rtfx=round(total_audio * 1000.0 / total_proc, 2) if total_proc > 0 else None)
    if concurrency > 1 and wall_ms is not None:
        report.update(concurrency=concurrency, wall_ms=round(wall_ms, 2),
                      aggregate_rtfx=round(total_audio * 1000.0 / wall_ms, 2) if wall_ms > 0 else None)
    if any(e.reference is not None for e in entries):
        report["wer"] = round(total_errors / total_words, 4) if total_words else None
        report["reference_words"] = total_words
    return report


def _shorten(text: str, width: int = 48) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def format_table(report: Dict[str, Any]) -> str:
    lines = [f"model:   {report['model']}"]
    if report["random_weights"]:
        lines.append(f"         (generated: {report['note']}; transcripts are meaningless)")
    setup = f"threads: {report['threads']}"
    if "concurrency" in report:
        setup += f" per backend, concurrency: {report['concurrency']}"
    lines += [setup + f", decoder: {report['decoder']}, attention: {report['attention']}, kernels: {report['isa']}",
              f"load:    {report['load_ms']:.1f} ms", ""]
    with_wer = "wer" in report
    headers = ["#", "file", "audio s", "proc ms", "RTFx", "attention"] + (["WER"] if with_wer else []) + ["text"]
    rows = []
    for i, f in enumerate(report["files"], start=1):
        row = [i, os.path.basename(f["path"]), f["audio_sec"], f["proc_ms"], f["rtfx"], f["attention"]]
        if with_wer:
            row.append("" if f.get("wer") is None else f"{100 * f['wer']:.1f}%")
        rows.append(row + [_shorten(f["text"])])
    lines.append(tabulate(rows, headers=headers, floatfmt=("", "", ".2f", ".1f", ".1f")))
    lines += ["", f"total:   {report['total_audio_sec']:.2f} s of audio in {report['total_proc_ms']:.1f} ms of "
                  f"requests, RTFx {report['rtfx']}"]
    if "concurrency" in report:
        lines.append(f"wall:    {report['wall_ms']:.1f} ms for all files at concurrency {report['concurrency']}, "
                     f"aggregate RTFx {report['aggregate_rtfx']}")
    if with_wer:
        wer = report["wer"]
        lines.append(f"WER:     {'n/a' if wer is None else f'{100 * wer:.2f}%'} over {report['reference_words']} "
                     "reference words")
    return "\n".join(lines)


def _entries(manifest: Optional[str], files: Tuple[str, ...]) -> List[Entry]:
    """The manifest's entries (if one is given) followed by the AUDIO arguments (no
    references); the shipped manifest when neither is given."""
    try:
        listed = read_manifest(manifest or DEFAULT_MANIFEST) if manifest or not files else []
    except ManifestError as e:
        raise click.BadParameter(str(e), param_hint="'--manifest'") from e
    return listed + [Entry(id=path, path=path) for path in files]


@click.command("bench")
@click.argument("files", nargs=-1, type=click.Path(exists=True, dir_okay=False), metavar="[AUDIO]...")
@click.option("-m", "--model", type=MODEL_PATH,
              help=f"{MODEL_HELP}. Default: a generated model of the 110M architecture with RANDOM "
                   "weights (made once, cached in $PARAKEET_CACHE or ~/.cache/parakeet): speed only.")
@click.option("--manifest", type=click.Path(exists=True, dir_okay=False),
              help="Audio files to run, one per line (relative to the manifest's folder, else to the current "
                   "one); '#' starts a comment line; 'path<TAB>reference text' adds WER scoring. "
                   "With AUDIO files too, the manifest's files run first, then those. "
                   "Default (neither given): three short clips shipped with the package.")
@click.option("-c", "--concurrency", type=click.IntRange(min=1), default=1, show_default=True,
              help="Requests at once. With K > 1 all files are submitted together through K workers and "
                   "the wall time and aggregate RTFx are reported too.")
@click.option("-t", "--threads", type=click.IntRange(min=1),
              help="Compute threads (per backend when --concurrency > 1). Default: physical cores "
                   "($PARAKEET_THREADS) divided by the concurrency.")
@click.option("-d", "--decoder", type=DECODER_CHOICE, default="default", show_default=True,
              help="Decoder head to time.")
@click.option("--attention", type=ATTENTION, help=ATTENTION_HELP)
@kernel_options
@click.option("--json", "as_json", is_flag=True, help="Print the results as one JSON document.")
@click.option("--progress/--no-progress", default=True, show_default=True,
              help="Progress bar on standard error (only drawn on a terminal).")
@click.option("--synthetic-size", type=click.Choice(sorted(ARCHS)), default="110m", hidden=True,
              help="Architecture of the generated default model (tiny: for tests).")
@component_option()
def bench(files: Tuple[str, ...], model: Optional[str], manifest: Optional[str], concurrency: int,
          threads: Optional[int], decoder: str, attention: Optional[Any], isa: Optional[str], bf16: Optional[bool],
          as_json: bool, progress: bool, synthetic_size: str, component: Optional[str]) -> None:
    """Measure transcription speed: per file, total, and under concurrency.

    Every file is decoded into memory first, so only the model's work is timed; one warm-up
    request per backend runs before timing. RTFx is seconds of audio per second of
    processing (higher is faster). With references in the manifest, the word error rate is
    reported per file and over all files.

    \b
    JSON (--json): {model, random_weights, decoder, threads, attention (the setting), isa (kernel
      level, "+bf16" with --bf16), load_ms,
      files: [{path, audio_sec, proc_ms, rtfx, attention (what ran), text, [reference, wer]}],
      total_audio_sec, total_proc_ms, rtfx,
      [concurrency, wall_ms, aggregate_rtfx]   (with --concurrency > 1)
      [wer, reference_words]}                 (with references)

    \b
    Examples:
      parakeet-cli bench                                  # built-in model and clips
      parakeet-cli bench -m model.gguf a.wav b.flac       # these files (no references)
      parakeet-cli bench -m model.gguf --manifest clips.txt -c 4 -t 2 --json
    """
    entries = _entries(manifest, files)
    random_weights = model is None
    if model is None:
        model = str(ensure_synthetic_model(
            ARCHS[synthetic_size], "q8_0",
            on_generate=lambda p: click.echo(f"generating the random-weight {synthetic_size} benchmark model "
                                             f"(once) at {p} ...", err=True)))
    per_backend = threads_per_backend(concurrency, threads)
    start = time.perf_counter()
    with Context(model, concurrency=concurrency, threads=per_backend if concurrency > 1 else None,
                 attention=attention, isa=isa, bf16=bf16, component=component) as ctx:
        load_ms = (time.perf_counter() - start) * 1000.0
        audio = []
        for entry in entries:
            try:
                audio.append(load_audio(entry.path, target_rate=ctx.sample_rate))
            except ParakeetError as e:
                where = f"manifest line {entry.line}: " if entry.line is not None else ""
                raise click.ClickException(where + file_error(entry.path, str(e))) from e
        results, wall_ms = run_bench(ctx, audio, decoder, progress)
        report = build_report(model, random_weights, decoder, per_backend, ctx.concurrency, load_ms,
                              attention_label(ctx.attention), kernels_label(ctx.info), entries, audio,
                              ctx.sample_rate, results, wall_ms)
    click.echo(json.dumps(report, indent=2, ensure_ascii=False) if as_json else format_table(report))
