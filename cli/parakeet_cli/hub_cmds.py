"""``parakeet-cli pull`` and ``parakeet-cli models``: fetch a model by name ahead of time, list
and free the model cache (docs/models.md)."""

from __future__ import annotations

import json
from typing import Any, Optional

import click
from tabulate import tabulate

from parakeet_py.hub import resolve_model
from parakeet_py.hub.aliases import KINDS

from .common import ModelArg


class _KindModelArg(ModelArg):
    """A model name whose kind comes from the command's --kind (checked once the kind is known)."""

    def __init__(self) -> None:
        super().__init__("asr")

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> Any:
        self.kind = (ctx.params.get("kind") if ctx is not None else None) or "asr"
        return super().convert(value, param, ctx)


@click.command("pull")
@click.option("--kind", type=click.Choice(KINDS), default="asr", show_default=True, is_eager=True,
              help="What the model is: a recogniser, a Sortformer diarizer, a VAD, a speaker encoder or a sound "
                   "tagger (picks the aliases, the files a repo may hold and the default type).")
@click.argument("name", type=_KindModelArg())
def pull(kind: str, name: str) -> None:
    """Download NAME from the Hugging Face Hub and convert it once, without transcribing.

    NAME is OWNER/REPO[/FILE][@REVISION][:TYPE] or a short alias: the repo's single .nemo is
    converted to GGUF at TYPE (default q8_0; f32 gives NeMo-exact results), a published .gguf
    is used as it is. Prints the path of the GGUF file. HF_ENDPOINT, HF_HOME, HF_TOKEN and
    HF_HUB_OFFLINE apply as for every Hub client.

    \b
    Examples:
      parakeet-cli pull nvidia/parakeet-tdt-0.6b-v3
      parakeet-cli pull nvidia/parakeet-tdt-0.6b-v3:f32
      parakeet-cli pull --kind diarize sortformer
      parakeet-cli pull --kind sound mudler/ced-gguf/ced-tiny-q8_0.gguf
    """
    click.echo(resolve_model(name, kind=kind))


@click.command("models")
@click.option("--rm", "remove", metavar="NAME",
              help="Free the space of OWNER/REPO (its downloads and every conversion), or only of its "
                   "conversions to TYPE with OWNER/REPO:TYPE.")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
def models(remove: "str | None", as_json: bool) -> None:
    """List the models the cache holds (name, type, size, path), or remove one with --rm.

    The cache is huggingface_hub's ($HF_HOME/hub, default ~/.cache/huggingface/hub); each
    conversion is kept beside its download.
    """
    from parakeet_py.hub import inventory

    if remove:
        for path in inventory.remove(remove):
            click.echo(f"removed {path}")
        return
    found = inventory.cached_models()
    if as_json:
        click.echo(json.dumps(found, indent=2))
        return
    if not found:
        click.echo("no models in the cache (parakeet-cli pull NAME fetches one)")
        return
    rows = [(m["name"] + (f"@{m['revision']}" if m["revision"] != "main" else ""), m["file"], m["type"],
             f"{m['bytes'] / 1e6:.1f} MB", m["commit"][:10], m["gguf"]) for m in found]
    click.echo(tabulate(rows, headers=["name", "file", "type", "size", "commit", "path"], tablefmt="plain"))
