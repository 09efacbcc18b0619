"""The server's command line: `parakeet-server` and `parakeet-cli server` (no server is run)."""

import subprocess
import sys

from click.testing import CliRunner

from parakeet_cli.main import cli
from parakeet_cli.server import main
from server_helpers import MODEL, ROOT


def test_help_lists_every_option():
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    for option in ("--model", "--concurrency", "--threads", "--host", "--port", "--api-key", "--max-upload-mb",
                   "--max-queue", "PARAKEET_API_KEY"):
        assert option in result.output


def test_parakeet_cli_server_forwards_to_the_server_command():
    result = CliRunner().invoke(cli, ["server", "--help"])
    assert result.exit_code == 0, result.output
    assert "--max-upload-mb" in result.output and "parakeet-cli server" in result.output


def test_config_from_options(monkeypatch):
    seen = {}

    def fake_serve(context, config, **kw):
        seen.update(config=config, backends=context.concurrency, **kw)

    monkeypatch.setattr("parakeet_cli.server.app.serve", fake_serve)
    args = ["--model", str(MODEL), "-k", "2", "--max-upload-mb", "1.5", "--port", "0", "--model-id", "parakeet-x"]
    result = CliRunner().invoke(main, args, env={"PARAKEET_API_KEY": "from-env"})
    assert result.exit_code == 0, result.output
    config = seen["config"]
    assert (config.model_id, config.api_key, config.max_upload_bytes, config.max_queue) == \
        ("parakeet-x", "from-env", int(1.5 * 1024 * 1024), 4)
    assert (seen["backends"], seen["host"], seen["port"]) == (2, "127.0.0.1", 0)
    result = CliRunner().invoke(main, ["--model", str(MODEL), "--max-queue", "0", "--api-key", ""], env={})
    assert result.exit_code == 0, result.output
    assert seen["config"].max_queue == 0 and seen["config"].api_key is None
    assert seen["config"].model_id == MODEL.name


def test_bad_model_is_a_clean_error(tmp_path):
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"GGUF but not really")
    r = subprocess.run([sys.executable, "-m", "parakeet_cli.server", "--model", str(bad)], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "cannot load" in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run([sys.executable, "-m", "parakeet_cli.server", "--model", str(tmp_path / "none.gguf")],
                       cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "does not exist" in r.stderr
