"""``parakeet-cli``: transcribe, benchmark, convert, quantise and inspect Parakeet models."""

import click

from parakeet_py import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="parakeet-cli")
def cli() -> None:
    """Fast CPU speech recognition with NVIDIA Parakeet models (GGUF files)."""


if __name__ == "__main__":
    cli()
