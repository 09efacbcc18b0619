"""parakeet-server takes every option from the environment as well (what a container image is
configured with): the variable names are the documented ones, a value set there takes effect
with the option's own validation, and a flag on the command line wins."""

import re

import click
import pytest

from data_helpers import ROOT
from parakeet_cli.server import main

LEGACY = {"--api-key": "PARAKEET_API_KEY", "--max-upload-mb": "PARAKEET_MAX_UPLOAD_MB",
          "--max-audio-seconds": "PARAKEET_MAX_AUDIO_SECONDS"}
REPEATED = {"--trusted-host": "PARAKEET_SERVER_TRUSTED_HOSTS", "--allowed-origin": "PARAKEET_SERVER_ALLOWED_ORIGINS"}
MODEL = str(ROOT / "README.md")  # any existing file passes --model's check


def option_variables():
    """{long flag: the variable `--help` names for it} for every option that takes a value."""
    ctx = main.make_context("parakeet-server", ["--help"], resilient_parsing=True)
    out = {}
    for param in main.params:
        if isinstance(param, click.Option) and param.expose_value:
            flag = next(o for o in param.opts if o.startswith("--"))
            out[flag] = re.search(r"env var: ([A-Z0-9_]+)", param.get_help_record(ctx)[1]).group(1)
    return out


def test_every_option_has_the_documented_variable():
    for flag, variable in option_variables().items():
        expected = LEGACY.get(flag) or REPEATED.get(flag) or "PARAKEET_SERVER_" + flag[2:].upper().replace("-", "_")
        assert variable == expected, flag
    docs = (ROOT / "docs" / "server.md").read_text()
    for variable in [*LEGACY.values(), *REPEATED.values()]:
        assert variable in docs


def params(monkeypatch, env, argv=()):
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return main.make_context("parakeet-server", list(argv)).params


def test_values_from_the_environment_take_effect(monkeypatch):
    got = params(monkeypatch, {"PARAKEET_SERVER_MODEL": MODEL, "PARAKEET_SERVER_MAX_QUEUE": "7",
                               "PARAKEET_SERVER_CLIENT_SHARE": "0.25", "PARAKEET_SERVER_HOST": "0.0.0.0",
                               "PARAKEET_SERVER_TRUSTED_HOSTS": "a.example b.example",
                               "PARAKEET_MAX_UPLOAD_MB": "3"})
    assert got["model_path"] == MODEL
    assert got["max_queue"] == 7 and got["client_share"] == 0.25 and got["host"] == "0.0.0.0"
    assert got["trusted_hosts"] == ("a.example", "b.example")
    assert got["max_upload_mb"] == 3


def test_the_command_line_wins_over_the_environment(monkeypatch):
    got = params(monkeypatch, {"PARAKEET_SERVER_MAX_QUEUE": "7"}, ["-m", MODEL, "--max-queue", "3"])
    assert got["max_queue"] == 3


def test_a_bad_value_in_the_environment_is_the_options_error(monkeypatch):
    with pytest.raises(click.BadParameter, match="x>=0") as error:
        params(monkeypatch, {"PARAKEET_SERVER_MAX_QUEUE": "-1"}, ["-m", MODEL])
    assert error.value.param.name == "max_queue"
