"""``parakeet-cli vad``: where the speech is in audio files (Silero VAD v6 in libparakeet)."""

from __future__ import annotations

from typing import Dict, List, Optional

import click

from parakeet_py import load_audio
from parakeet_py.vad import MODEL_RATE, Vad, default_model

from .common import VAD_MODEL, component_option, echo_documents, given_options
from .subtitles import _timestamp


def _srt(segments: List[Dict[str, float]]) -> str:
    cues = [f"{i}\n{_timestamp(s['start'], ',')} --> {_timestamp(s['end'], ',')}\nspeech\n"
            for i, s in enumerate(segments, 1)]
    return "\n".join(cues)


@click.command("vad")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("-m", "--model", "model", type=VAD_MODEL,
              help="A silero_vad GGUF file or a VAD name (docs/models.md; default: the silero-vad package's "
                   "model, converted once into the cache).")
@click.option("--format", "fmt", type=click.Choice(["json", "srt", "text"]), default="text", show_default=True,
              help="json: one document per file (a JSON list for several); srt: one cue per segment; "
                   "text: 'start end' in seconds, one segment a line.")
@click.option("--threshold", type=float, help="Speech threshold (0, 1]; default 0.5.")
@click.option("--min-pause", type=float, help="Seconds of silence that end a segment; default 0.1.")
@click.option("--min-speech", type=float, help="Shorter segments are dropped (seconds); default 0.25.")
@click.option("--speech-pad", type=float, help="Padding each side (seconds); default 0.03.")
@click.option("--max-segment", type=float, help="Longest segment (seconds); default no limit.")
@component_option()
def vad(files: List[str], model: Optional[str], fmt: str, threshold: Optional[float], min_pause: Optional[float],
        min_speech: Optional[float], speech_pad: Optional[float], max_segment: Optional[float],
        component: Optional[str]) -> None:
    """Print the speech segments of each FILE (any format `transcribe` reads).

    The segments are Silero's get_speech_timestamps' (same defaults, hysteresis included).

    \b
    Examples:
      parakeet-cli vad meeting.wav
      parakeet-cli vad --format json --min-pause 0.5 a.flac b.mp3
    """
    options = given_options(threshold=threshold, min_pause=min_pause, min_speech=min_speech,
                            speech_pad=speech_pad, max_segment=max_segment)
    docs = []
    if component is not None and not model:
        raise click.UsageError("--component goes with -m")
    with Vad(model or default_model(), component=component) as detector:
        for path in files:
            doc = detector.detect(load_audio(path, target_rate=MODEL_RATE), MODEL_RATE, **options)
            doc["file"] = path
            docs.append(doc)
    if fmt == "json":
        echo_documents(docs)
        return
    for doc in docs:
        if len(docs) > 1:
            click.echo(f"# {doc['file']}")
        if fmt == "srt":
            click.echo(_srt(doc["segments"]))
        else:
            for s in doc["segments"]:
                click.echo(f"{s['start']:.3f} {s['end']:.3f}")
