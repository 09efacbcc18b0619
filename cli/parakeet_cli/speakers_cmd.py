"""``parakeet-cli speakers``: enrol voices by name in a registry file, identify a voice, list the
names (a voicedetect speaker encoder in libparakeet; docs/api.md "Voice registry")."""

from __future__ import annotations

import json
import os
from typing import List

import click

from parakeet_py import SpeakerEncoder, VoiceRegistry
from parakeet_py.speakers.registry_file import registry_names

from .common import SPEAKER_MODEL

MODEL = click.option("-m", "--model", "model", required=True, type=SPEAKER_MODEL,
                     help="A voicedetect speaker-encoder GGUF (parakeet-cli convert embedding_model.ckpt), or a model "
                          "name: a repo's .gguf or SpeechBrain embedding_model.ckpt (docs/models.md).")


@click.group("speakers")
def speakers() -> None:
    """Named voices: `enroll` recordings under a name, `identify` who speaks in a file, `list`
    the names of a registry file."""


@speakers.command("enroll")
@click.argument("registry", type=click.Path(dir_okay=False))
@click.argument("name")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@MODEL
def enroll(registry: str, name: str, files: List[str], model: str) -> None:
    """Add the voice in each FILE under NAME to REGISTRY (created when missing).

    \b
    Example:
      parakeet-cli speakers enroll voices.pksr Ada ada1.wav ada2.wav -m ecapa.gguf
    """
    with SpeakerEncoder(model) as encoder:
        reg = VoiceRegistry.load(registry) if os.path.exists(registry) else VoiceRegistry()
        with reg:
            for path in files:
                reg.enroll(name, path, encoder)
            reg.save(registry)
            if encoder.last_warning:
                click.echo(f"warning: {encoder.last_warning}", err=True)
            click.echo(f"{name}: enrolled {len(files)} recording(s); {len(reg)} name(s) in {registry}")


@speakers.command("identify")
@click.argument("registry", type=click.Path(exists=True, dir_okay=False))
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@MODEL
@click.option("--json", "as_json", is_flag=True, help="One {\"file\", \"name\", \"score\"} document per line.")
def identify(registry: str, files: List[str], model: str, as_json: bool) -> None:
    """Say whose voice each FILE holds ("unknown" when no name is clearly best).

    \b
    Example:
      parakeet-cli speakers identify voices.pksr call.wav -m ecapa.gguf
    """
    with SpeakerEncoder(model) as encoder, VoiceRegistry.load(registry) as reg:
        for path in files:
            name, score = reg.identify(path, encoder)
            if as_json:
                click.echo(json.dumps({"file": path, "name": name, "score": score}))
            else:
                click.echo(f"{path}: {name or 'unknown'} ({score:.4f})")
            if encoder.last_warning:
                click.echo(f"warning: {encoder.last_warning}", err=True)


@speakers.command("list")
@click.argument("registry", type=click.Path(exists=True, dir_okay=False))
def list_names(registry: str) -> None:
    """Print the names in REGISTRY and how many recordings each was enrolled from."""
    for name, count in registry_names(registry):
        click.echo(f"{name}\t{count}")
