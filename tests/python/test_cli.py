"""parakeet-cli through click's CliRunner (transcribe, info, convert, quantize, server hand-off,
exit codes), plus real subprocesses of the module and of the installed console script."""

import json
import os
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner

from parakeet_cli.main import cli
from parakeet_py import Context, _native

from data_helpers import AUDIO, MODEL, ROOT, SPEECH

NEMO = MODEL.with_name("model.nemo")
SHORT = AUDIO / "short_1s_16k.wav"
STEREO = AUDIO / "speech_44k_stereo.wav"

pytestmark = pytest.mark.skipif(not MODEL.exists(), reason=f"{MODEL} has not been generated")


def runner():
    try:
        return CliRunner(mix_stderr=False)  # click < 8.2
    except TypeError:
        return CliRunner()  # click >= 8.2 keeps stderr apart


def run(*args):
    result = runner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    _native.set_threads(0)  # the CLI sets the process-wide thread count; restore the default
    return result


@pytest.fixture(scope="module")
def expected():
    with Context(MODEL) as ctx:
        return {p: ctx.transcribe(p) for p in (SPEECH, SHORT, STEREO)}


def test_help_reads_like_documentation():
    out = run("--help").output
    for command in ("transcribe", "info", "convert", "quantize", "bench", "server"):
        assert command in out
    for command in ("transcribe", "info", "convert", "quantize", "bench"):
        result = run(command, "--help")
        assert result.exit_code == 0 and "Usage:" in result.output
    assert "Examples:" in run("transcribe", "--help").output


def test_transcribe_one_file_prints_the_text(expected):
    result = run("transcribe", "-m", MODEL, SPEECH)
    assert result.exit_code == 0
    assert result.stdout == expected[SPEECH].text + "\n"


def test_transcribe_several_files_concurrently_in_input_order(expected):
    files = [SPEECH, SHORT, STEREO, SHORT, SPEECH]
    result = run("transcribe", "-m", MODEL, "-c", 3, "-t", 1, *files)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines == [f"{f}\t{expected[f].text}" for f in files]


def test_transcribe_json_lines(expected):
    result = run("transcribe", "-m", MODEL, "-f", "json", SPEECH, STEREO)
    assert result.exit_code == 0
    docs = [json.loads(line) for line in result.stdout.splitlines()]
    assert [d["file"] for d in docs] == [str(SPEECH), str(STEREO)]
    for d, f in zip(docs, (SPEECH, STEREO)):
        assert {k: v for k, v in d.items() if k != "file"} == expected[f].to_dict()


def test_transcribe_ctc_decoder_differs_and_is_accepted():
    result = run("transcribe", "-m", MODEL, "--decoder", "ctc", SPEECH)
    assert result.exit_code == 0
    with Context(MODEL) as ctx:
        assert result.stdout.strip() == ctx.transcribe(SPEECH, decoder="ctc").text


@pytest.mark.parametrize("fmt", ["srt", "vtt"])
def test_transcribe_subtitles(fmt):
    result = run("transcribe", "-m", MODEL, "-f", fmt, SPEECH)
    assert result.exit_code == 0
    out = result.stdout
    if fmt == "vtt":
        assert out.startswith("WEBVTT\n\n00:00:")
        assert " --> " in out and "," not in out.split("\n")[2]
    else:
        assert out.startswith("1\n00:00:")
        assert "," in out.split("\n")[1]


def test_transcribe_output_dir(tmp_path, expected):
    out = tmp_path / "out"
    result = run("transcribe", "-m", MODEL, "-f", "srt", "-o", out, SPEECH, STEREO)
    assert result.exit_code == 0
    assert sorted(p.name for p in out.iterdir()) == ["speech_16k.srt", "speech_44k_stereo.srt"]
    assert "wrote" in result.stderr and result.stdout == ""
    run("transcribe", "-m", MODEL, "-o", out, SPEECH)
    assert (out / "speech_16k.txt").read_text() == expected[SPEECH].text + "\n"


def test_transcribe_failures_are_reported_and_the_rest_still_run(expected, tmp_path):
    broken = tmp_path / "broken.wav"
    broken.write_bytes(b"RIFF" + b"\x00" * 60)
    result = run("transcribe", "-m", MODEL, SHORT, tmp_path / "missing.wav", broken, SPEECH)
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [f"{SHORT}\t{expected[SHORT].text}", f"{SPEECH}\t{expected[SPEECH].text}"]
    assert f"error: {tmp_path / 'missing.wav'}: no such file" in result.stderr
    assert f"error: {broken}: cannot decode audio" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("args,needle", [
    (["transcribe", "-m", MODEL], "Missing argument 'FILES...'"),
    (["transcribe", SPEECH], "Missing option '-m'"),
    (["transcribe", "-m", "/no/model.gguf", SPEECH], "does not exist"),
    (["transcribe", "-m", MODEL, "-f", "docx", SPEECH], "'docx' is not one of"),
    (["transcribe", "-m", MODEL, "--decoder", "beam", SPEECH], "'beam' is not one of"),
    (["transcribe", "-m", MODEL, "-c", 0, SPEECH], "x>=1"),
    (["transcribe", "-m", MODEL, "-f", "srt", SPEECH, SHORT], "needs --output-dir"),
    (["transcribe", "-m", MODEL, "-o", "/tmp/parakeet-test-same-output-name-never-created", SPEECH, SPEECH], "same output name"),
    (["info"], "Missing option '-m'"),
    (["convert", "/no/such.nemo", "out.gguf"], "does not exist"),
    (["quantize", MODEL, "out.gguf", "--type", "q3_k"], "'q3_k' is not one of"),
    (["bench", "--manifest", "/no/list.txt"], "does not exist"),
    (["frobnicate"], "No such command"),
])
def test_usage_errors_exit_2(args, needle):
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert needle in result.stderr


def test_runtime_errors_exit_1_with_one_line(tmp_path):
    not_a_model = tmp_path / "model.gguf"
    not_a_model.write_bytes(b"GGUF" + b"\x00" * 10)
    for args in (["info", "-m", not_a_model], ["transcribe", "-m", SPEECH, SPEECH],
                 ["convert", SPEECH, tmp_path / "o.gguf"], ["quantize", SPEECH, tmp_path / "o.gguf"]):
        result = run(*args)
        assert result.exit_code == 1, (args, result.output)
        assert result.stderr.startswith("Error: ") and "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_info_table_and_json():
    result = run("info", "-m", MODEL)
    assert result.exit_code == 0
    assert "hybrid_tdt_ctc" in result.stdout and "TDT durations" in result.stdout and "0, 1, 2, 3, 4" in result.stdout
    info = json.loads(run("info", "-m", MODEL, "--json").stdout)
    with Context(MODEL) as ctx:
        assert info == ctx.info


@pytest.mark.skipif(not NEMO.exists(), reason="no .nemo fixture")
def test_convert_then_quantize_then_transcribe(tmp_path, expected):
    f32 = tmp_path / "m.gguf"
    result = run("convert", NEMO, f32)
    assert result.exit_code == 0 and "wrote" in result.stdout and "105 F32" in result.stdout
    report = json.loads(run("convert", NEMO, tmp_path / "m16.gguf", "--type", "f16", "--json").stdout)
    assert report["out_type"] == "f16" and report["type_counts"]["F16"] > 0
    q8 = tmp_path / "q8.gguf"
    result = run("quantize", f32, q8)
    assert result.exit_code == 0 and "Q8_0" in result.stdout
    assert json.loads(run("info", "-m", q8, "--json").stdout)["tensor_types"]["q8_0"] > 0
    # The freshly converted f32 file is the fixture model, so it transcribes the same.
    assert run("transcribe", "-m", f32, SPEECH).stdout.strip() == expected[SPEECH].text
    assert run("transcribe", "-m", q8, SPEECH).exit_code == 0


def test_server_subcommand_hands_over_to_the_server_module():
    result = run("server", "--help")
    assert result.exit_code == 0
    assert "parakeet-cli server" in result.output and "OpenAI-compatible" in result.output
    result = run("server", "--no-such-option")
    assert result.exit_code == 2


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "cli"), env.get("PYTHONPATH", "")])
    return env


def test_real_subprocess_of_the_module(expected):
    proc = subprocess.run([sys.executable, "-m", "parakeet_cli.main", "transcribe", "-m", str(MODEL), str(SPEECH)],
                          capture_output=True, text=True, env=_env(), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == expected[SPEECH].text + "\n"
    proc = subprocess.run([sys.executable, "-m", "parakeet_cli.main", "info", "-m", str(SPEECH)],
                          capture_output=True, text=True, env=_env(), timeout=120)
    assert proc.returncode == 1 and proc.stderr.startswith("Error: ") and "Traceback" not in proc.stderr


def test_installed_console_script(expected):
    script = ROOT / ".venv" / "bin" / "parakeet-cli"
    if not script.exists():
        script = shutil.which("parakeet-cli")
    if not script:
        pytest.skip("no parakeet-cli console script installed")
    # PYTHONPATH puts this working tree ahead of whatever copy the venv installed.
    proc = subprocess.run([str(script), "transcribe", "-m", str(MODEL), "-f", "json", str(SHORT)],
                          capture_output=True, text=True, env=_env(), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["text"] == expected[SHORT].text
