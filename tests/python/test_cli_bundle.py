"""parakeet-cli bundle (write, --list, --verify) and --component on the commands that load a
model, on bundles of the committed fixtures."""

import json
import shutil

import gguf
import pytest

from bundle_helpers import ASR, DIAR, licence_args
from cli_helpers import run_cli
from parakeet_py import bundle_components


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("cli_bundle") / "b.gguf"
    result = run_cli("bundle", out, f"asr={ASR}", f"d={DIAR}:diar", "--long-names", *licence_args("asr", "d"))
    assert result.exit_code == 0, result.output + result.stderr
    assert result.output.startswith(f"wrote {out}: asr, d (")
    return out


def test_list_and_info_show_the_components(bundle):
    listed = run_cli("bundle", "--list", bundle)
    assert listed.exit_code == 0
    rows = [line.split() for line in listed.stdout.splitlines()]
    assert rows[0] == ["component", "kind", "license", "tensors", "size", "source"]
    assert [r[:2] for r in rows[1:]] == [["asr", "asr"], ["d", "diar"]]
    assert "license of asr" in listed.stdout.splitlines()[1]  # the licence column
    assert rows[1][5] == str(len(gguf.GGUFReader(ASR).tensors))  # after the licence's three words
    info = run_cli("info", "-m", bundle)
    assert info.exit_code == 0 and info.stdout == listed.stdout
    as_json = run_cli("info", "-m", bundle, "--json")
    assert json.loads(as_json.stdout) == bundle_components(bundle)
    described = run_cli("info", "-m", bundle, "--component", "asr")
    assert described.exit_code == 0 and f"{bundle}:asr" in described.output


def test_transcribe_and_diarize_a_component_as_their_source_files(bundle, speech_wav):
    for args in (["--component", "asr"], []):  # the only asr component is the default
        assert run_cli("transcribe", "-m", bundle, *args, speech_wav).output == \
            run_cli("transcribe", "-m", ASR, speech_wav).output
    assert run_cli("transcribe", "-m", bundle, "--diarize-model", bundle, "--diarize-component", "d",
                   speech_wav).output == run_cli("transcribe", "-m", ASR, "--diarize-model", DIAR, speech_wav).output
    diarized = run_cli("diarize", "-m", bundle, "--component", "d", speech_wav)
    assert diarized.exit_code == 0 and diarized.output == run_cli("diarize", "-m", DIAR, speech_wav).output


def test_a_wrong_component_is_a_one_line_error(bundle, speech_wav):
    result = run_cli("transcribe", "-m", bundle, "--component", "zz", speech_wav)
    assert result.exit_code == 1
    assert result.stderr.strip() == f"Error: {bundle}: bundle has no component 'zz'; components: asr (asr), d (diar)"
    assert run_cli("diarize", "-m", bundle, "--component", "asr", speech_wav).stderr.strip() == \
        f"Error: {bundle}:asr is not a diarization model"
    result = run_cli("transcribe", "-m", ASR, "--component", "asr", speech_wav)
    assert result.stderr.strip() == f"Error: {ASR} is not a bundle, so it has no component 'asr'"


def test_verify_exits_1_on_a_flipped_byte(bundle, tmp_path):
    ok = run_cli("bundle", "--verify", bundle)
    assert ok.exit_code == 0 and ok.stdout == "asr: ok\nd: ok\n"
    damaged = tmp_path / "damaged.gguf"
    shutil.copy(bundle, damaged)
    offset = int(next(t for t in gguf.GGUFReader(damaged).tensors if t.name.startswith("asr.")).data_offset)
    data = bytearray(damaged.read_bytes())
    data[offset] ^= 1
    damaged.write_bytes(bytes(data))
    result = run_cli("bundle", "--verify", damaged)
    assert result.exit_code == 1
    assert result.stdout.startswith("asr: MISMATCH (stored ") and result.stdout.endswith("d: ok\n")
    assert "1 component(s) do not match their content hash" in result.stderr


@pytest.mark.parametrize("args, message", [
    (["asr"], "a component is NAME=PATH[:KIND], not 'asr'"),
    ([f"asr={ASR}", "--license", "zz=MIT"], "--license takes NAME=VALUE with NAME one of the components (asr)"),
    ([f"asr={ASR}"], "component 'asr' needs a non-empty license, license_url, source, attribution, changes"),
    ([f"d={DIAR}", *licence_args("d")], "is longer than 63 bytes"),
])
def test_bundle_errors(tmp_path, args, message):
    result = run_cli("bundle", tmp_path / "x.gguf", *args)
    assert result.exit_code != 0 and message in result.stderr
    assert not (tmp_path / "x.gguf").exists()


def test_list_and_verify_take_only_the_bundle(bundle):
    result = run_cli("bundle", "--list", bundle, "--verify", bundle)
    assert result.exit_code == 2 and "--list and --verify take one bundle and nothing else" in result.stderr


@pytest.mark.parametrize("args, message", [
    (["--vad-component", "vad"], "--vad-component goes with --vad-model"),
    (["--diarize-component", "d"], "--diarize-component goes with --diarize-model"),
])
def test_a_component_option_needs_its_model(bundle, speech_wav, args, message):
    result = run_cli("transcribe", "-m", bundle, *args, speech_wav)
    assert result.exit_code == 2 and message in result.stderr


def test_vad_component_needs_a_model(speech_wav):
    result = run_cli("vad", "--component", "vad", speech_wav)
    assert result.exit_code == 2 and "--component goes with -m" in result.stderr
