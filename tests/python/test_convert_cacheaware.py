"""Converting NeMo's cache-aware streaming models (chunked_limited attention, causal subsampling
and convolutions): the streaming keys are written as parakeet.cpp names them, and what the
engine cannot run is refused with the reason; prompt models' tables likewise.

The models are the committed fixtures of tools/fixtures/make_cacheaware_fixtures.py (NeMo's own
EncDecRNNTBPEModel / EncDecHybridRNNTCTCBPEModel with NeMo's streaming encoder settings).
"""

import copy
import io
import tarfile

import pytest
import yaml

import convert_helpers as F
from data_helpers import CACHE_AWARE_MODELS
from parakeet_py.convert import convert_nemo
from parakeet_py.convert.errors import UnsupportedModelError
from parakeet_py.convert.nemo_archive import NemoArchive

NEMO = {name: path.with_name("model.nemo") for name, path in CACHE_AWARE_MODELS.items()}


def _meta(path):
    fields, _ = F.read_gguf(path)
    return {k: v for k, (_, v) in fields.items()}


@pytest.mark.parametrize("name", sorted(NEMO))
def test_conversion_reproduces_the_committed_file(name, tmp_path):
    convert_nemo(NEMO[name], tmp_path / "m.gguf", "f32")
    assert (tmp_path / "m.gguf").read_bytes() == CACHE_AWARE_MODELS[name].read_bytes()


def test_streaming_keys_of_a_multi_lookahead_model(tmp_path):
    meta = _meta(CACHE_AWARE_MODELS["ca_rnnt_multi"])
    assert meta["parakeet.encoder.att_context_style"] == "chunked_limited"
    # the default context first, then the others, flattened as parakeet.cpp stores them
    assert meta["parakeet.encoder.att_context_presets"] == [8, 1, 8, 0, 8, 3]
    assert (meta["parakeet.encoder.att_context_left"], meta["parakeet.encoder.att_context_right"]) == (8, 1)
    assert meta["parakeet.encoder.causal_downsampling"] is True and meta["parakeet.encoder.conv_causal"] is True
    assert meta["parakeet.preprocessor.normalize"] == "NA"
    # NeMo's setup_streaming_params for [8, 1]: chunks of 1 + 8 and 8 + 8 mel frames, 9 cached
    # mel frames in front, 2 subsampled frames dropped, 2 valid outputs, 8 cached frames
    assert meta["parakeet.streaming.chunk_size"] == [9, 16]
    assert meta["parakeet.streaming.shift_size"] == [9, 16]
    assert meta["parakeet.streaming.pre_encode_cache_size"] == [0, 9]
    assert meta["parakeet.streaming.drop_extra_pre_encoded"] == 2
    assert meta["parakeet.streaming.valid_out_len"] == 2
    assert meta["parakeet.streaming.last_channel_cache_size"] == 8
    assert meta["parakeet.streaming.cache_drop_size"] == 0


def test_offline_models_get_no_streaming_keys(fixture_models):
    meta = _meta(fixture_models["rnnt"])
    assert not any(k.startswith("parakeet.streaming.") or "att_context" in k or "causal" in k for k in meta)


def _rewritten(tmp_path, edit, model="ca_hybrid"):
    """The `model` fixture with its config changed by edit(cfg)."""
    with NemoArchive(NEMO[model]) as ar:
        cfg = yaml.safe_load(ar.read_bytes(ar.require("model_config.yaml")))
        members = {m: ar.read_bytes(m) for m in ar.names}
    edit(cfg)
    out = tmp_path / "m.nemo"
    members = dict(members)
    for m in members:
        if m.endswith("model_config.yaml"):
            members[m] = yaml.safe_dump(cfg).encode()
    with tarfile.open(out, "w:") as tar:
        for m, data in members.items():
            info = tarfile.TarInfo(m)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out


@pytest.mark.parametrize("path,value,message", [
    ("att_context_size", [5, 3], "L must be a multiple of R \\+ 1"),
    ("att_context_size", [-1, 3], "unlimited context"),
    ("att_context_size", [[4, 3], [4]], "not an \\[L, R\\] pair"),
    ("causal_downsampling", False, "without causal_downsampling"),
    ("conv_context_size", None, "without conv_context_size 'causal'"),
])
def test_unsupported_streaming_settings_are_refused(tmp_path, path, value, message):
    def edit(cfg):
        cfg["encoder"][path] = copy.deepcopy(value)
    with pytest.raises(UnsupportedModelError, match=message):
        convert_nemo(_rewritten(tmp_path, edit), tmp_path / "out.gguf")
    assert not (tmp_path / "out.gguf").exists()


def test_the_eou_model_classes_convert_as_their_base_classes(tmp_path):
    """asr_eou_models.py's EncDecRNNTBPEEOUModel is EncDecRNNTBPEModel's network: the same file."""
    def edit(cfg):
        cfg["target"] = "nemo.collections.asr.models.asr_eou_models.EncDecHybridRNNTCTCBPEEOUModel"
    convert_nemo(_rewritten(tmp_path, edit), tmp_path / "eou.gguf", "f32")
    convert_nemo(NEMO["ca_hybrid"], tmp_path / "base.gguf", "f32")
    eou, base = _meta(tmp_path / "eou.gguf"), _meta(tmp_path / "base.gguf")
    del eou["general.name"], base["general.name"]  # the file names
    assert eou == base


PROMPT_CLASS = "nemo.collections.asr.models.EncDecHybridRNNTCTCBPEModelWithPrompt"


@pytest.mark.parametrize("key,value,message", [
    ("num_prompts", 16, "tensor 'prompt_kernel.0.weight' has shape \\[80, 48\\], the config implies \\[80, 56\\]"),
    ("prompt_dictionary", {"auto": 0, "xx": 8}, "prompt_dictionary ids must be integers in \\[0, 8\\); bad: xx"),
    ("prompt_dictionary", {}, "'model_defaults.prompt_dictionary' is empty or missing"),
    ("num_prompts", 0, "'model_defaults.num_prompts' should be a positive integer"),
])
def test_bad_prompt_tables_are_refused(tmp_path, key, value, message):
    def edit(cfg):
        cfg["model_defaults"][key] = copy.deepcopy(value)
    with pytest.raises(UnsupportedModelError, match=message):
        convert_nemo(_rewritten(tmp_path, edit, "ca_prompt"), tmp_path / "out.gguf")
    assert not (tmp_path / "out.gguf").exists()


def test_a_table_without_auto_has_no_default_locale(tmp_path):
    def edit(cfg):
        cfg["model_defaults"]["prompt_dictionary"] = {"en-US": 1, "de-DE": 2}
    convert_nemo(_rewritten(tmp_path, edit, "ca_prompt"), tmp_path / "m.gguf", "f32")
    meta = _meta(tmp_path / "m.gguf")
    assert meta["parakeet.prompt.default_lang"] == ""
    table = dict(zip(meta["parakeet.prompt.dictionary.keys"], meta["parakeet.prompt.dictionary.values"]))
    assert table == {"en-US": 1, "de-DE": 2}


def test_a_prompt_class_without_a_prompt_network_converts_without_prompts(tmp_path):
    """NeMo runs such a model (initialize_prompt_feature off) without any prompt: so do we."""
    def edit(cfg):
        cfg["target"] = PROMPT_CLASS
    report = convert_nemo(_rewritten(tmp_path, edit), tmp_path / "m.gguf", "f32")
    assert any("no prompt_kernel tensors" in w for w in report.warnings)
    assert not any(k.startswith("parakeet.prompt.") for k in _meta(tmp_path / "m.gguf"))
