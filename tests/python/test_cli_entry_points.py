"""The console programs start and document themselves."""

from click.testing import CliRunner

from parakeet_cli.main import cli
from parakeet_cli.server import main as server_main


def test_cli_help_lists_usage():
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    assert "Usage:" in result.output


def test_server_help_lists_usage():
    result = CliRunner().invoke(server_main, ["--help"])
    assert result.exit_code == 0
    assert "OpenAI-compatible" in result.output
