"""parakeet-cli's --attention (transcribe, bench), the attention and kernel level in info and
bench, and the progress bars of transcribe (with --diarize-model too) and diarize: when they
are drawn (flags, an injected terminal check, never for JSON) and that they only ever go to
standard error."""

import io
import json

import click
import pytest
from click.testing import CliRunner

from parakeet_cli.common import ATTENTION, attention_label
from parakeet_cli.main import cli
from parakeet_cli.progress_bar import FileProgress, progress_wanted
from parakeet_py import _native

from data_helpers import AUDIO, MODEL, NEMO_DIR, SPEECH

DIAR = NEMO_DIR / "sortformer_offline" / "model.gguf"
CONVERSATION = AUDIO / "conversation_16k.wav"

pytestmark = pytest.mark.skipif(not MODEL.exists(), reason=f"{MODEL} has not been generated")


def run(*args):
    try:
        runner = CliRunner(mix_stderr=False)  # click < 8.2
    except TypeError:
        runner = CliRunner()
    result = runner.invoke(cli, [str(a) for a in args], catch_exceptions=False)
    _native.set_threads(0)
    return result


@pytest.mark.parametrize("text,value", [("auto", "auto"), ("FULL", "full"), ("128,128", (128, 128)),
                                        (" 16,4 ", (16, 4))])
def test_attention_option_values(text, value):
    assert ATTENTION.convert(text, None, None) == value


@pytest.mark.parametrize("text", ["local", "0,5", "-1,-1", "5", "1,2,3", "a,b", ""])
def test_attention_option_refuses(text):
    with pytest.raises(click.BadParameter, match="use auto, full, or L,R"):
        ATTENTION.convert(text, None, None)


def test_attention_labels():
    assert [attention_label(a) for a in ("auto", "full", (8, 4), None)] == ["auto", "full", "local[8,4]", ""]
    assert attention_label({"mode": "local", "left": 2, "right": 3}) == "local[2,3]"


def test_transcribe_attention_reaches_the_library():
    result = run("transcribe", "-m", MODEL, "-f", "json", "--attention", "full", SPEECH)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["attention"] == "full"
    bad = run("transcribe", "-m", MODEL, "--attention", "0,3", SPEECH)
    assert bad.exit_code == 2 and "--attention" in bad.stderr


def test_info_reports_attention_and_kernels():
    table = run("info", "-m", MODEL)
    assert table.exit_code == 0
    assert "attention" in table.stdout and "auto (auto: full up to" in table.stdout
    assert any(line.startswith("kernels") and line.split()[-1] in ("scalar", "avx2", "avx512")
               for line in table.stdout.splitlines())
    doc = json.loads(run("info", "-m", MODEL, "--json").stdout)
    assert doc["attention"] == {"mode": "auto"} and doc["auto_full_max_frames"] > 0


def test_info_reports_a_bf16_encoder(monkeypatch):
    """PARAKEET_BF16=1 shows as "+bf16" in info and bench; where the CPU cannot run it, the load
    fails with a message that says why."""
    monkeypatch.setenv("PARAKEET_BF16", "1")
    table = run("info", "-m", MODEL)
    if table.exit_code != 0:
        assert "AVX512_BF16" in table.stderr, table.stderr
        return
    assert any(line.startswith("kernels") and line.split()[-1] == "avx512+bf16"
               for line in table.stdout.splitlines()), table.stdout
    assert json.loads(run("info", "-m", MODEL, "--json").stdout)["bf16_encoder"] is True
    report = json.loads(run("bench", "-m", MODEL, "--json", "--no-progress").stdout)
    assert report["isa"] == "avx512+bf16" and report["files"][0]["text"] is not None
    monkeypatch.setenv("PARAKEET_BF16", "0")
    assert json.loads(run("info", "-m", MODEL, "--json").stdout)["bf16_encoder"] is False


def test_a_bad_bf16_switch_is_an_error(monkeypatch):
    monkeypatch.setenv("PARAKEET_BF16", "yes")
    result = run("info", "-m", MODEL)
    assert result.exit_code != 0 and 'PARAKEET_BF16 must be 0' in result.stderr, result.stderr


def test_bench_reports_attention_and_kernels():
    result = run("bench", "-m", MODEL, "--attention", "full", "--json", "--no-progress")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["attention"] == "full" and report["isa"] in ("scalar", "avx2", "avx512")
    assert all(f["attention"] == "full" for f in report["files"])
    table = run("bench", "-m", MODEL, "--no-progress")
    assert "attention: auto, kernels: " in table.stdout


class FakeStream(io.StringIO):
    def __init__(self, tty):
        super().__init__()
        self._tty = tty

    def isatty(self):
        return self._tty


@pytest.mark.parametrize("choice,fmt,tty,expected", [
    (None, "text", True, True), (None, "text", False, False), (None, "srt", True, True),
    (None, "json", True, False), (True, "json", True, False), (True, "text", False, True),
    (False, "text", True, False),
])
def test_progress_wanted(choice, fmt, tty, expected):
    assert progress_wanted(choice, fmt, FakeStream(tty)) is expected


def test_file_progress_draws_on_its_stream_up_to_100_percent(monkeypatch):
    monkeypatch.setattr("parakeet_cli.progress_bar.SHOW_AFTER_SECONDS", 0)
    stream = FakeStream(True)
    bar = FileProgress("talk.wav", stream)
    drawn = []
    for f in (0.0, 0.25, 0.2, 0.5, 1.0):  # a report that goes back is ignored
        bar(f)
        drawn.append(bar.done)
    bar.close()
    assert drawn == [0, 250, 250, 500, 1000]
    assert "talk.wav" in stream.getvalue()


def test_forced_progress_goes_to_stderr_only():
    plain = run("transcribe", "-m", MODEL, "--no-progress", SPEECH)
    forced = run("transcribe", "-m", MODEL, "--progress", SPEECH)
    assert forced.exit_code == 0 and forced.stdout == plain.stdout  # stdout untouched
    as_json = run("transcribe", "-m", MODEL, "-f", "json", "--progress", SPEECH)
    assert as_json.stderr == "" and json.loads(as_json.stdout)["text"]


@pytest.mark.parametrize("command", [["transcribe", "-m", str(MODEL), "--diarize-model", str(DIAR)],
                                     ["diarize", "-m", str(DIAR)]], ids=["transcribe_diarized", "diarize"])
def test_diarizing_runs_draw_bars_too(monkeypatch, command):
    monkeypatch.setattr("parakeet_cli.progress_bar.SHOW_AFTER_SECONDS", 0)  # drawn at once
    plain = run(*command, "--no-progress", str(CONVERSATION))
    forced = run(*command, "--progress", str(CONVERSATION))
    assert forced.exit_code == 0 and forced.stdout == plain.stdout != ""
    assert "conversation_16k.wav" in forced.stderr and "conversation_16k.wav" not in plain.stderr


def test_the_kernel_flags_are_load_options(monkeypatch):
    """--isa and --bf16 reach the library as load options and override the environment."""
    monkeypatch.setenv("PARAKEET_CPU", "avx2")  # the flag wins over the variable
    result = run("bench", "-m", MODEL, "--isa", "scalar", "--json", "--no-progress")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["isa"] == "scalar"
    monkeypatch.delenv("PARAKEET_CPU")
    result = run("transcribe", "-m", MODEL, "--isa", "scalar", "-f", "json", SPEECH)
    assert result.exit_code == 0, result.output
    bf16 = run("bench", "-m", MODEL, "--bf16", "--json", "--no-progress")
    if bf16.exit_code != 0:  # a CPU without AVX512_BF16: a runtime error naming what is missing
        assert bf16.exit_code == 1 and "AVX512_BF16" in bf16.stderr, bf16.stderr
    else:
        assert json.loads(bf16.stdout)["isa"] == "avx512+bf16"
    # bf16 products exist only at the avx512 level: asking for both lower is refused by the library.
    both = run("bench", "-m", MODEL, "--bf16", "--isa", "scalar", "--json", "--no-progress")
    assert both.exit_code == 1 and "bf16" in both.stderr, both.stderr
    monkeypatch.setenv("PARAKEET_BF16", "1")
    off = run("bench", "-m", MODEL, "--no-bf16", "--json", "--no-progress")
    assert off.exit_code == 0 and "+bf16" not in json.loads(off.stdout)["isa"], off.output
    assert run("bench", "-m", MODEL, "--isa", "sse2").exit_code == 2  # not a choice: a usage error
