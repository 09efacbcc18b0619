"""``parakeet-cli sounds``: what is heard in audio files besides speech (a CED sound tagger)."""

from __future__ import annotations

from typing import List, Optional

import click

from parakeet_py import load_audio
from parakeet_py.sound import MODEL_RATE, SoundTagger

from .common import SOUND_MODEL, echo_documents, given_options


@click.command("sounds")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("-m", "--model", "model", required=True, type=SOUND_MODEL,
              help="A CED sound-tagger GGUF file (ced.cpp's, or parakeet-cli convert of a mispeech/ced-* folder), or "
                   "a model name: a repo's .gguf or CED pytorch_model.bin (docs/models.md).")
@click.option("--top-k", type=click.IntRange(1), default=5, show_default=True, help="Labels listed for the whole file.")
@click.option("--window", "window_sec", type=float, help="Seconds of audio per scored window; default 3.")
@click.option("--hop", "hop_sec", type=float, help="Seconds between windows; default 1.")
@click.option("--on", "on_threshold", type=float, help="Score that opens a sound event; default 0.4.")
@click.option("--off", "off_threshold", type=float, help="Score below which it closes; default 0.3.")
@click.option("--min-duration", "min_duration_sec", type=float, help="Shorter events are dropped (seconds); default 0.3.")
@click.option("--json", "as_json", is_flag=True, help="One JSON document per file: {file, duration, labels, events}.")
def sounds(files: List[str], model: str, top_k: int, window_sec: Optional[float], hop_sec: Optional[float],
           on_threshold: Optional[float], off_threshold: Optional[float], min_duration_sec: Optional[float],
           as_json: bool) -> None:
    """Print the top sound labels of each FILE and its sound events over time.

    The labels score the whole file (clips over 10.12 s are scored in chunks and averaged);
    the events follow the sound stream's rules (3 s windows every second, open at 0.4, close
    below 0.3; docs/sound.md).

    \b
    Example:
      parakeet-cli sounds -m ced-tiny-q8_0.gguf doorbell.wav
    """
    options = given_options(window_sec=window_sec, hop_sec=hop_sec, on_threshold=on_threshold,
                            off_threshold=off_threshold, min_duration_sec=min_duration_sec)
    docs = []
    with SoundTagger(model) as tagger:
        for path in files:
            pcm = load_audio(path, target_rate=MODEL_RATE)
            docs.append({"file": path, "duration": round(len(pcm) / MODEL_RATE, 3),
                         "labels": tagger.classify(pcm, MODEL_RATE, top_k=top_k),
                         "events": tagger.events(pcm, MODEL_RATE, **options)})
    if as_json:
        echo_documents(docs)
        return
    for doc in docs:
        if len(docs) > 1:
            click.echo(f"# {doc['file']}")
        for tag in doc["labels"]:
            click.echo(f"{tag['score']:.3f} {tag['label']}")
        for e in doc["events"]:
            click.echo(f"{e['start']:.3f} {e['end']:.3f} {e['label']} (peak {e['peak']:.3f})")
