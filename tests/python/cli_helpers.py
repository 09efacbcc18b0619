"""Running parakeet-cli in-process through click's CliRunner, stderr kept apart."""

from click.testing import CliRunner

from parakeet_cli.main import cli
from parakeet_py import _native


def run_cli(*args, catch_exceptions=False):
    try:
        runner = CliRunner(mix_stderr=False)  # click < 8.2
    except TypeError:
        runner = CliRunner()  # click >= 8.2 keeps stderr apart
    result = runner.invoke(cli, [str(a) for a in args], catch_exceptions=catch_exceptions)
    _native.set_threads(0)  # the CLI sets the process-wide thread count; restore the default
    return result
