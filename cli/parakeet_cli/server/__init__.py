"""``parakeet-server``: an OpenAI-compatible transcription server (work in progress)."""

import click

from parakeet_py import __version__


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="parakeet-server")
def main() -> None:
    """Serve a Parakeet model over HTTP with an OpenAI-compatible API."""
    raise click.ClickException("the server is not implemented yet")


if __name__ == "__main__":
    main()
