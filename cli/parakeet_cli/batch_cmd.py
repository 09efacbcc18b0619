"""``parakeet-cli batch``: a corpus of recordings → one JSONL or Parquet table, resumable;
on this machine, or on a Ray cluster with ``--ray``."""

from __future__ import annotations

import os
import sys
from typing import List, Optional

import click
from tqdm import tqdm

from parakeet_py.batch import BatchOptions, BatchStats, run_batch
from parakeet_py.batch_call import BATCH
from parakeet_py.hub.names import is_model_name

from .common import ATTENTION, ATTENTION_HELP, DECODER_CHOICE, DIARIZE_MODEL, VAD_MODEL
from .progress_bar import progress_wanted


class _Bar:
    """Files done, audio hours, aggregate RTFx and the ETA, on standard error."""

    def __init__(self, enabled: bool) -> None:
        self.enabled, self.bar = enabled, None

    def start(self, stats: BatchStats) -> None:
        if self.enabled:
            self.bar = tqdm(total=stats.total, unit="file", file=sys.stderr, dynamic_ncols=True,
                            desc="batch", bar_format="{desc}: {n_fmt}/{total_fmt} files|{bar}| "
                                                     "{elapsed}<{remaining}{postfix}")

    def row(self, row: dict, stats: BatchStats) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(f"{stats.audio_seconds / 3600:.2f} h audio, RTFx {stats.rtfx:.1f}, "
                                     f"{stats.errors} errors", refresh=False)
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _summary(rows: int, errors: int, skipped: Optional[int], audio: float, wall: float, output: str) -> str:
    rtfx = audio / wall if wall > 0 else 0.0
    skip = f", {skipped} already done" if skipped else ""
    return (f"{rows} files ({errors} errors{skip}): {audio / 3600:.3f} h of audio in {wall:.1f} s, "
            f"RTFx {rtfx:.1f}; wrote {output}")


@click.command("batch")
@click.argument("inputs", nargs=-1, required=True)
@click.option("-m", "--model", required=True,
              help="The model, a parakeet GGUF file or a model name (docs/models.md; with --ray: a name, a path "
                   "every node sees, or an s3://, gs://, hdfs:// or file:// URI copied once per node).")
@click.option("-o", "--output", required=True,
              help="The table to write: .jsonl or .parquet (with --ray: a directory of part files by that name).")
@click.option("-c", "--concurrency", type=click.IntRange(min=1), default=1, show_default=True,
              help="Backends of the model's pool (with --ray: per actor); files go to the library's batched "
                   "passes 16 per backend at a time (with --vad or --diarize-model: one file per backend).")
@click.option("-t", "--threads", type=click.IntRange(min=1),
              help="Compute threads per backend. Default: the physical cores divided among the backends "
                   "(with --ray: the actor's CPUs divided among them).")
@click.option("-d", "--decoder", type=DECODER_CHOICE, default="default", show_default=True,
              help="Which head decodes (as for `transcribe`).")
@click.option("--timestamps", is_flag=True, help="Add each file's word and token timestamps (words, tokens).")
@click.option("--attention", type=ATTENTION, help=ATTENTION_HELP)
@click.option("--diarize-model", type=DIARIZE_MODEL,
              help="Who said what: a Sortformer diarization GGUF file or name; adds the columns speakers and "
                   "utterances (and a speaker to each word with --timestamps). The default decoder; not with --ray.")
@click.option("--resume", is_flag=True, help="Keep the rows OUTPUT already holds and transcribe only the other ids.")
@click.option("--retry-errors", is_flag=True,
              help="With --resume, transcribe again the files whose rows are errors (their rows are replaced).")
@click.option("--overwrite", is_flag=True, help="Replace an existing OUTPUT.")
@click.option("--prefetch", type=click.IntRange(min=1),
              help="Decoded clips held ready ahead of the backends. Default: one batch call's window, "
                   "16 x --concurrency (2 x --concurrency with --vad or --diarize-model).")
@click.option("--decoders", type=click.IntRange(min=1), default=2, show_default=True,
              help="Threads decoding audio ahead of the backends.")
@click.option("--progress/--no-progress", default=None,
              help="A progress bar (files, audio hours, RTFx, ETA) on standard error. Default: when it is a terminal.")
@click.option("--ray", "use_ray", is_flag=True, help="Run the job on Ray Data (pip install 'parakeet[ray]').")
@click.option("--ray-address", help="The Ray cluster to join (default: $RAY_ADDRESS, else Ray in this process).")
@click.option("--ray-network", is_flag=True,
              help="Let the Ray this job starts (no --ray-address) listen on the machine's network address; "
                   "by default its every listener is on 127.0.0.1.")
@click.option("--actors", type=click.IntRange(min=1), default=1, show_default=True,
              help="With --ray: model-holding actors (one per node is the usual shape).")
@click.option("--cpus-per-actor", type=click.FloatRange(min=0.0, min_open=True), default=1.0, show_default=True,
              help="With --ray: CPUs each actor reserves; leave one CPU of the cluster for Ray's reads and writes.")
@click.option("--vad", "use_vad", is_flag=True,
              help="Cut each file at pauses with the Silero VAD before transcription (speech in chunks of at "
                   "most 30 s, silence skipped, times on the file's timeline); each row gets its `segments`. "
                   "Not with --ray.")
@click.option("--vad-model", type=VAD_MODEL,
              help="--vad: a silero_vad GGUF file or a VAD name (default: the silero-vad package's model, "
                   "converted once into the cache).")
@click.option("--batch-size", type=click.IntRange(min=1),
              help=f"With --ray: rows per actor call. Default: {BATCH} x --concurrency, a full batch of the "
                   "library's batched pass for each backend.")
def batch(inputs: List[str], model: str, output: str, concurrency: int, threads: Optional[int], decoder: str,
          timestamps: bool, attention: Optional[object], resume: bool, retry_errors: bool, overwrite: bool,
          prefetch: Optional[int], decoders: int, progress: Optional[bool], use_ray: bool, ray_address: Optional[str],
          ray_network: bool, actors: int, cpus_per_actor: float, use_vad: bool, vad_model: Optional[str],
          batch_size: Optional[int], diarize_model: Optional[str]) -> None:
    """Transcribe every recording of INPUT... into one table, OUTPUT.

    INPUT: a JSONL or Parquet manifest (a `path` or `audio_filepath` column, an optional unique
    `id`, other columns passed through), a text file with one path per line, a directory
    (searched recursively for audio files) or a glob. OUTPUT gets one row per input, in input
    order (after --resume, after the rows written before; with --vad or --diarize-model, in the
    order they finish): id, path, text, duration, decoder, model, error (a file that fails is a
    row with its error; the job goes on), words and tokens with --timestamps, segments with
    --vad, speakers and utterances with --diarize-model, then the manifest's other columns. Rows are written as they finish; after a crash, --resume
    transcribes only what is missing (--retry-errors: and the files that failed). Error rows do
    not change the exit status.

    \b
    Examples:
      parakeet-cli batch -m model.gguf recordings/ -o transcripts.parquet -c 2 -t 4
      parakeet-cli batch -m model.gguf manifest.jsonl -o out.jsonl --resume
      parakeet-cli batch --ray --ray-address auto -m /shared/model.gguf manifest.parquet \\
          -o /shared/transcripts.parquet --actors 8 --cpus-per-actor 15 -c 4
    """
    if resume and overwrite:
        raise click.UsageError("--resume and --overwrite exclude each other")
    if retry_errors and not resume:
        raise click.UsageError("--retry-errors works with --resume")
    if vad_model and not use_vad:
        raise click.UsageError("--vad-model goes with --vad")
    if use_vad and use_ray:
        raise click.UsageError("--vad runs in local jobs only (not with --ray)")
    if diarize_model and (use_ray or decoder != "default"):
        raise click.UsageError("--diarize-model does not go with --ray or --decoder")
    if diarize_model and use_vad:
        raise click.UsageError("--diarize-model does not go with --vad")
    vad = None
    if use_vad:
        from parakeet_py.vad import default_model

        vad = vad_model or str(default_model())
    options = BatchOptions(concurrency=concurrency, threads=threads, decoder=decoder, timestamps=timestamps,
                           attention=attention, decoders=decoders, prefetch=prefetch, vad=vad,
                           diarize_model=diarize_model)
    if use_ray:
        from parakeet_py.batch.ray_job import run_ray_job

        s = run_ray_job(model, inputs, output, options, address=ray_address, actors=actors, num_cpus=cpus_per_actor,
                        batch_size=batch_size, resume=resume, overwrite=overwrite, retry_errors=retry_errors,
                        network=ray_network)
        click.echo(_summary(s["rows"], s["errors"], None, s["audio_seconds"], s["wall_seconds"], output), err=True)
        return
    if "://" in model or not (os.path.isfile(model) or is_model_name(model, "asr")):
        raise click.BadParameter(f"{model}: no such file or model name (a URI needs --ray)",
                                 param_hint="'-m' / '--model'")
    bar = _Bar(progress_wanted(progress, "batch", sys.stderr))
    try:
        stats = run_batch(model, inputs, output, options, resume=resume, overwrite=overwrite,
                          retry_errors=retry_errors, on_start=bar.start, on_row=bar.row)
    finally:
        bar.close()
    if stats.dropped_lines:
        click.echo(f"warning: {output} held {stats.dropped_lines} corrupt line(s); dropped, their files were "
                   "transcribed again", err=True)
    click.echo(_summary(stats.done, stats.errors, stats.skipped, stats.audio_seconds, stats.wall_seconds, output),
               err=True)
