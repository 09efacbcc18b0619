"""``parakeet-cli``: transcribe, benchmark, convert, quantise and inspect Parakeet models.

Exit status: 0 success, 1 a runtime error (the reason on standard error, no traceback; set
PARAKEET_DEBUG=1 to get one for unexpected errors), 2 a usage error.
"""

from __future__ import annotations

import os
from typing import Any, Tuple

import click

from parakeet_py import ParakeetError, __version__
from parakeet_py.convert import ConversionError

from .batch_cmd import batch
from .bench import bench
from .bundle_cmd import bundle
from .diarize_cmd import diarize
from .hub_cmds import models, pull
from .model_cmds import convert, info, quantize
from .speakers_cmd import speakers
from .transcribe_cmd import transcribe
from .sounds_cmd import sounds
from .vad_cmd import vad
from .wyoming.command import wyoming


class _Cli(click.Group):
    """Turns the errors a user can cause into a one-line message and exit status 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except (ParakeetError, ConversionError) as e:
            raise click.ClickException(str(e)) from e
        except OSError as e:
            raise click.ClickException(f"{e.filename + ': ' if e.filename else ''}{e.strerror or e}") from e
        except Exception as e:
            if os.environ.get("PARAKEET_DEBUG"):
                raise
            raise click.ClickException(
                f"unexpected {type(e).__name__}: {e} (run with PARAKEET_DEBUG=1 for a traceback)") from e


@click.group(cls=_Cli, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="parakeet-cli")
def cli() -> None:
    """Fast CPU speech recognition with NVIDIA Parakeet models (GGUF files).

    \b
    Typical use:
      parakeet-cli transcribe -m nvidia/parakeet-tdt-0.6b-v3 speech.wav   # a model by name
      parakeet-cli convert model.nemo model.gguf --type q8_0   # once, from a NeMo checkpoint
      parakeet-cli info -m model.gguf
      parakeet-cli transcribe -m model.gguf speech.wav
      parakeet-cli bench -m model.gguf --manifest clips.txt -c 4

    Run `parakeet-cli COMMAND --help` for each command's options. Environment:
    PARAKEET_THREADS (default compute threads), PARAKEET_CACHE (where `bench` keeps its
    generated model), HF_ENDPOINT / HF_HOME / HF_TOKEN / HF_HUB_OFFLINE (models by name).
    """


cli.add_command(transcribe)
cli.add_command(info)
cli.add_command(convert)
cli.add_command(quantize)
cli.add_command(bench)
cli.add_command(batch)
cli.add_command(vad)
cli.add_command(sounds)
cli.add_command(diarize)
cli.add_command(wyoming)
cli.add_command(pull)
cli.add_command(models)
cli.add_command(bundle)
cli.add_command(speakers)


# ---- server ---------------------------------------------------------------------------------
# Owned by the server engineer (cli/parakeet_cli/server*.py). `parakeet-cli server ARGS...`
# hands every argument, --help included, to `parakeet_cli.server.main` (a click command),
# imported only when this subcommand runs so the other commands never load the server stack.
@cli.command("server", add_help_option=False,
             context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def server(args: Tuple[str, ...]) -> None:
    """Serve a model over HTTP with an OpenAI-compatible API (see `parakeet-cli server --help`)."""
    from . import server as server_module

    server_module.main.main(args=list(args), prog_name="parakeet-cli server")


if __name__ == "__main__":
    cli()
