"""``parakeet-cli convert`` of a SpeechBrain ECAPA-TDNN speaker model (hyperparams.yaml +
embedding_model.ckpt) to voice-detect.cpp's ``voicedetect`` GGUF.

The committed fixture folder ``tests/data/speaker/spkrec_tiny`` (tools/fixtures/
make_speaker_fixtures.py) was converted into ``tests/data/speaker/ecapa_tiny.gguf``, on which
the engine's parity tests run; converting it again must give the same keys and tensors.
"""

import re
import shutil
from pathlib import Path

import gguf
import numpy as np
import pytest

from parakeet_py.convert import voicedetect_schema as vd
from parakeet_py.convert.errors import ConversionError, UnsupportedModelError
from parakeet_py.convert.speechbrain_ecapa import convert_speechbrain_ecapa, read_ecapa_config

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "tests" / "data" / "speaker" / "spkrec_tiny"
COMMITTED = ROOT / "tests" / "data" / "speaker" / "ecapa_tiny.gguf"
HEADER = ROOT / "libparakeet" / "src" / "model" / "speaker" / "voicedetect_schema.h"


def _fields(path):
    r = gguf.GGUFReader(str(path))
    keys = {f.name: f.contents() for f in r.fields.values() if not f.name.startswith("GGUF.")}
    tensors = {t.name: (tuple(int(d) for d in t.shape), np.array(t.data)) for t in r.tensors}
    return keys, tensors


def test_converting_the_fixture_checkpoint_gives_the_committed_file(tmp_path):
    out = tmp_path / "ecapa.gguf"
    convert_speechbrain_ecapa(FOLDER / "embedding_model.ckpt", out, name="spkrec_tiny")
    keys, tensors = _fields(out)
    want_keys, want_tensors = _fields(COMMITTED)
    assert keys == want_keys
    assert keys["general.architecture"] == "voicedetect"
    assert keys[vd.ARCH] == "ecapa_tdnn" and keys[vd.EMBEDDING_DIM] == 192
    assert list(tensors) == list(want_tensors)
    for name, (shape, data) in want_tensors.items():
        assert tensors[name][0] == shape, name
        assert np.array_equal(tensors[name][1], data), name
    assert "asp.tdnn.conv.conv.weight" in tensors and "blocks.1.res2net_block.blocks.2.conv.conv.weight" in tensors


def test_the_engine_reads_the_keys_the_converter_writes():
    header = HEADER.read_text(encoding="utf-8")
    cpp = dict(re.findall(r'inline constexpr char k(\w+)\[\] = "([^"]*)";', header))
    py = {name: value for name, value in vars(vd).items() if name.isupper() and isinstance(value, str)}
    for cpp_name, value in cpp.items():
        py_name = re.sub(r"(?<!^)(?=[A-Z])", "_", cpp_name).upper()
        assert py.get(py_name) == value, f"k{cpp_name} is {value!r}, the converter's {py_name} {py.get(py_name)!r}"


def _folder_with(tmp_path, hyperparams: str) -> Path:
    shutil.copy(FOLDER / "embedding_model.ckpt", tmp_path / "embedding_model.ckpt")
    (tmp_path / "hyperparams.yaml").write_text(hyperparams)
    return tmp_path / "embedding_model.ckpt"


def test_other_dilations_are_refused(tmp_path):
    text = (FOLDER / "hyperparams.yaml").read_text().replace("dilations: [1, 2, 3, 4, 1]", "dilations: [1, 2, 2, 2, 1]")
    with pytest.raises(UnsupportedModelError, match="dilations"):
        convert_speechbrain_ecapa(_folder_with(tmp_path, text), tmp_path / "out.gguf")
    assert not (tmp_path / "out.gguf").exists()


def test_a_config_that_does_not_fit_the_weights_is_refused(tmp_path):
    text = (FOLDER / "hyperparams.yaml").read_text().replace("lin_neurons: 192", "lin_neurons: 256")
    with pytest.raises(ConversionError, match="fc.conv.weight has shape"):
        convert_speechbrain_ecapa(_folder_with(tmp_path, text), tmp_path / "out.gguf")


def test_missing_hyperparams_and_other_models_are_refused(tmp_path):
    shutil.copy(FOLDER / "embedding_model.ckpt", tmp_path / "embedding_model.ckpt")
    with pytest.raises(ConversionError, match="hyperparams.yaml"):
        convert_speechbrain_ecapa(tmp_path / "embedding_model.ckpt", tmp_path / "out.gguf")
    with pytest.raises(UnsupportedModelError, match="not a !new:"):
        read_ecapa_config("embedding_model: !new:speechbrain.lobes.models.Xvector.Xvector\n  in_channels: 24\n")
    with pytest.raises(UnsupportedModelError, match="only plain values"):
        read_ecapa_config("embedding_model: !new:speechbrain.lobes.models.ECAPA_TDNN.ECAPA_TDNN\n"
                          "  input_size: !ref <n_mels> * 2\n")


def test_cli_convert_takes_the_checkpoint(tmp_path):
    from parakeet_cli.main import cli
    from test_cli import runner

    out = tmp_path / "ecapa.gguf"
    r = runner().invoke(cli, ["convert", str(FOLDER / "embedding_model.ckpt"), str(out), "--name", "spkrec_tiny",
                              "--json"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert '"kind": "voicedetect"' in r.output
    assert _fields(out)[0] == _fields(COMMITTED)[0]
    r = runner().invoke(cli, ["convert", str(FOLDER / "embedding_model.ckpt"), str(tmp_path / "h.gguf"),
                              "--type", "f16"])
    assert r.exit_code != 0
    assert "written as f32 or q8_0, not f16" in r.output


def test_q8_0_quantises_the_wide_kernel_one_convolutions_and_embeds_close_to_f32(tmp_path, monkeypatch):
    from parakeet_py import SpeakerEncoder
    from test_speakers import reference

    out = tmp_path / "ecapa-q8_0.gguf"
    convert_speechbrain_ecapa(FOLDER / "embedding_model.ckpt", out, out_type="q8_0", name="spkrec_tiny")
    types = {t.name: (t.tensor_type.name, tuple(int(d) for d in t.shape)) for t in gguf.GGUFReader(str(out)).tensors}
    # The fixture: channels 32 (mfa 96), attention 16, SE 16, 192-d.
    assert types["blocks.1.tdnn1.conv.conv.weight"] == ("Q8_0", (32, 32))  # GGUF's ne: [in, out]
    assert types["mfa.conv.conv.weight"] == ("Q8_0", (96, 96))
    assert types["fc.conv.weight"] == ("Q8_0", (192, 192))
    assert types["asp.conv.conv.weight"][0] == "F32"  # 16 inputs
    assert types["blocks.1.se_block.conv1.conv.weight"][0] == "F32"  # 16 outputs
    assert types["blocks.1.res2net_block.blocks.0.conv.conv.weight"] == ("F32", (3, 8, 8))  # kernel 3
    assert types["blocks.0.conv.conv.weight"][0] == "F32"
    pcm, want = reference("speech")
    with SpeakerEncoder(out) as enc:
        got = enc.embed(pcm, sample_rate=16000)
    assert float(got @ want) >= 0.9995
    # The F32 convolutions left in the file whose rows are whole Q8_0 blocks (the kernel-3
    # ones: 8 x 3 = 24 per row here, so none; blocks.1.se_block.conv1: 32) are quantised at
    # load unless PARAKEET_Q8_ALL=0, which keeps the file's own types.
    monkeypatch.setenv("PARAKEET_Q8_ALL", "0")
    with SpeakerEncoder(out) as enc:
        as_stored = enc.embed(pcm, sample_rate=16000)
    assert float(as_stored @ want) >= 0.9995
    assert not np.array_equal(got, as_stored)
