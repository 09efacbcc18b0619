"""``parakeet-cli diarize``: who spoke when in audio files (Sortformer in libparakeet)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import click

from parakeet_py import Diarizer, Segment

from .common import DIARIZE_MODEL, component_option, echo_documents, given_options
from .progress_bar import progress_option, progress_wanted, with_progress


def rttm_lines(file_id: str, segments: List[Segment]) -> List[str]:
    """RTTM, the format diarization tools exchange: one SPEAKER line per segment (onset and
    duration in seconds; speakers named speaker_<n> as NeMo's diarize() names them)."""
    return [f"SPEAKER {file_id} 1 {s.start:.2f} {s.end - s.start:.2f} <NA> <NA> speaker_{s.speaker} <NA> <NA>"
            for s in segments]


@click.command("diarize")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("-m", "--model", "model", required=True, type=DIARIZE_MODEL,
              help="A Sortformer diarization GGUF file (parakeet-cli convert sortformer.nemo out.gguf), or a "
                   "name: sortformer, OWNER/REPO[/FILE][@REVISION][:TYPE] (docs/models.md).")
@click.option("--format", "fmt", type=click.Choice(["json", "rttm", "text"]), default="text", show_default=True,
              help="json: one document per file (a JSON list for several); rttm: SPEAKER lines; "
                   "text: 'start end speaker' in seconds, one segment a line.")
@click.option("--onset", type=float, help="Probability above which a turn opens (default: the model's, 0.5).")
@click.option("--offset", type=float, help="Probability below which it closes (default: the model's, 0.5).")
@click.option("--pad-onset", type=float, help="Seconds added before each turn; default 0.")
@click.option("--pad-offset", type=float, help="Seconds added after each turn; default 0.")
@click.option("--min-duration-on", type=float, help="Shorter turns are dropped (seconds); default 0.")
@click.option("--min-duration-off", type=float, help="Shorter pauses within a speaker's turns are filled; default 0.")
@progress_option
@component_option()
def diarize(files: List[str], model: str, fmt: str, onset: Optional[float], offset: Optional[float],
            pad_onset: Optional[float], pad_offset: Optional[float], min_duration_on: Optional[float],
            min_duration_off: Optional[float], progress: Optional[bool], component: Optional[str]) -> None:
    """Print who spoke when in each FILE (any format `transcribe` reads).

    Speakers are numbered from 0 in order of arrival. The post-processing is NeMo's diarize()
    (same defaults and parameters; docs/diarization.md).

    \b
    Examples:
      parakeet-cli diarize meeting.wav -m sortformer.gguf
      parakeet-cli diarize --format rttm -m sortformer.gguf a.flac b.wav > out.rttm
    """
    options = given_options(onset=onset, offset=offset, pad_onset=pad_onset, pad_offset=pad_offset,
                            min_duration_on=min_duration_on, min_duration_off=min_duration_off)
    bars = progress_wanted(progress, fmt, sys.stderr)
    docs = []
    with Diarizer(model, component=component) as d:
        for path in files:
            document = with_progress(d.document, Path(path).name, 0) if bars else d.document
            doc = document(path, **options)
            doc["file"] = path
            docs.append(doc)
    if fmt == "json":
        echo_documents(docs)
        return
    for doc in docs:
        segments = [Segment(s["speaker"], s["start"], s["end"]) for s in doc["segments"]]
        if fmt == "rttm":
            for line in rttm_lines(Path(doc["file"]).stem, segments):
                click.echo(line)
            continue
        if len(docs) > 1:
            click.echo(f"# {doc['file']}")
        for s in segments:
            click.echo(f"{s.start:.2f} {s.end:.2f} speaker_{s.speaker}")
