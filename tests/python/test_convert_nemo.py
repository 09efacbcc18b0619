"""``convert_nemo`` end to end on small synthetic ``.nemo`` archives of every arch."""

import gzip
import json

import gguf
import numpy as np
import pytest

import convert_helpers as F
from data_helpers import DATA
from parakeet_py.convert import (
    ArchiveError,
    CheckpointError,
    ConversionError,
    TokenizerError,
    UnsafePickleError,
    UnsupportedModelError,
    convert_nemo,
    requantize_gguf,
)
from parakeet_py.convert.__main__ import main as cli_main
from parakeet_py.convert.quantize import encode_q8_0, storage_type

ARCHS = ["ctc", "rnnt", "tdt", "hybrid_rnnt_ctc", "hybrid_tdt_ctc"]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """arch → (path, config, state_dict) for one tiny model of each arch."""
    root = tmp_path_factory.mktemp("nemo")
    out = {}
    for arch in ARCHS:
        path = root / f"{arch}.nemo"
        cfg, sd = F.write_tiny_nemo(path, arch)
        out[arch] = (path, cfg, sd)
    return out


def written_tensors(sd):
    return {k: v for k, v in sd.items()
            if v.ndim > 0 and (not k.startswith("preprocessor.") or k.endswith(("featurizer.fb", "featurizer.window")))}


# --- round trip ----------------------------------------------------------------------------------
@pytest.mark.parametrize("arch", ARCHS)
def test_f32_round_trip_is_bitwise_with_verbatim_names_and_reversed_shapes(models, tmp_path, arch):
    path, _, sd = models[arch]
    report = convert_nemo(path, tmp_path / "m.gguf", "f32")
    fields, tensors = F.read_gguf(tmp_path / "m.gguf")
    want = written_tensors(sd)
    assert list(tensors) == list(want)  # state_dict order, nothing renamed
    for name, arr in want.items():
        ttype, ne, data = tensors[name]
        assert ttype == "F32"
        assert ne == list(reversed(arr.shape)), name  # torch [N, K] → ne0 = K
        assert data.shape == arr.shape and data.tobytes() == arr.tobytes(), name
    assert report.n_tensors == len(want) and report.type_counts == {"F32": len(want)}
    assert sorted(report.skipped) == sorted(k for k in sd if k not in want)
    assert all("num_batches_tracked" in k for k in report.skipped)


@pytest.mark.parametrize("out_type", ["f16", "q8_0"])
@pytest.mark.parametrize("arch", ["ctc", "hybrid_tdt_ctc"])
def test_smaller_types_only_on_allowlisted_weights_and_values_within_tolerance(models, tmp_path, arch, out_type):
    path, _, sd = models[arch]
    report = convert_nemo(path, tmp_path / "m.gguf", out_type)
    _, tensors = F.read_gguf(tmp_path / "m.gguf")
    ggml_name = out_type.upper()
    n_small = 0
    for name, arr in written_tensors(sd).items():
        ttype, ne, data = tensors[name]
        assert ne == list(reversed(arr.shape))
        expected = storage_type(name, arr.shape, out_type)
        if expected == "f32":
            assert ttype == "F32" and data.tobytes() == arr.tobytes(), name
            continue
        n_small += 1
        assert ttype == ggml_name, name
        if out_type == "f16":
            assert data.tobytes() == arr.astype(np.float16).tobytes(), name
            np.testing.assert_allclose(data.astype(np.float32), arr, rtol=2.0**-11, atol=1e-7)
        else:
            assert data.tobytes() == encode_q8_0(arr).tobytes(), name
            back = gguf.dequantize(data, gguf.GGMLQuantizationType.Q8_0)
            amax = np.abs(arr).max()
            assert np.abs(back - arr).max() <= amax / 127 * 0.5 + amax * 2.0**-10, name
    assert n_small == report.type_counts[ggml_name] > 0
    # The tiny joint.pred is [40, 48]: 48 is not whole blocks, so it must have stayed F32.
    if arch != "ctc":
        assert tensors["joint.pred.weight"][0] == "F32"
        assert tensors["joint.enc.weight"][0] == ggml_name


# --- metadata ------------------------------------------------------------------------------------
COMMON_KEYS = {
    "general.architecture": (["STRING"], "parakeet"),
    "parakeet.encoder.feat_in": (["UINT32"], 16),
    "parakeet.encoder.d_model": (["UINT32"], 64),
    "parakeet.encoder.n_layers": (["UINT32"], 2),
    "parakeet.encoder.n_heads": (["UINT32"], 2),
    "parakeet.encoder.ff_dim": (["UINT32"], 256),
    "parakeet.encoder.conv_kernel": (["UINT32"], 9),
    "parakeet.encoder.conv_norm_type": (["STRING"], "batch_norm"),
    "parakeet.encoder.subsampling_factor": (["UINT32"], 8),
    "parakeet.encoder.subsampling_conv_channels": (["UINT32"], 32),
    "parakeet.encoder.xscaling": (["BOOL"], True),
    "parakeet.encoder.pos_emb_max_len": (["UINT32"], 5000),
    "parakeet.encoder.use_bias": (["BOOL"], True),
    "parakeet.preprocessor.sample_rate": (["UINT32"], 16000),
    "parakeet.preprocessor.n_mels": (["UINT32"], 16),
    "parakeet.preprocessor.n_fft": (["UINT32"], 512),
    "parakeet.preprocessor.win_length": (["UINT32"], 400),
    "parakeet.preprocessor.hop_length": (["UINT32"], 160),
    "parakeet.preprocessor.preemph": (["FLOAT32"], float(np.float32(0.97))),
    "parakeet.preprocessor.mag_power": (["FLOAT32"], 2.0),
    "parakeet.preprocessor.normalize": (["STRING"], "per_feature"),
    "parakeet.preprocessor.log_zero_guard": (["FLOAT32"], 2.0**-24),
    "parakeet.vocab_size": (["UINT32"], 40),
    "parakeet.blank_id": (["UINT32"], 40),
}
TRANSDUCER_KEYS = {
    "parakeet.decoder.pred_hidden": (["UINT32"], 48),
    "parakeet.decoder.pred_rnn_layers": (["UINT32"], 1),
    "parakeet.joint.joint_hidden": (["UINT32"], 40),
    "parakeet.joint.activation": (["STRING"], "relu"),
    "parakeet.decoding.max_symbols": (["UINT32"], 10),
}
TDT_KEYS = {"parakeet.tdt.durations": (["ARRAY", "INT32"], [0, 1, 2, 3, 4])}


@pytest.mark.parametrize("arch", ARCHS)
def test_metadata_keys_values_and_types(models, tmp_path, arch):
    path, _, _ = models[arch]
    convert_nemo(path, tmp_path / "m.gguf", "q8_0")
    fields, _ = F.read_gguf(tmp_path / "m.gguf")
    expected = dict(COMMON_KEYS)
    expected["parakeet.arch"] = (["STRING"], arch)
    expected["general.name"] = (["STRING"], arch)  # the input file's stem
    expected["general.file_type"] = (["UINT32"], 7)
    if arch != "ctc":
        expected.update(TRANSDUCER_KEYS)
    if "tdt" in arch:
        expected.update(TDT_KEYS)
    expected["parakeet.tokenizer.pieces"] = (["ARRAY", "STRING"], [p[0] for p in F.default_pieces()])
    expected["parakeet.tokenizer.scores"] = (["ARRAY", "FLOAT32"], [p[1] for p in F.default_pieces()])
    assert set(fields) == set(expected)
    for key, want in expected.items():
        assert fields[key] == want, key


def test_pieces_keep_id_order_and_unicode(models, tmp_path):
    convert_nemo(models["tdt"][0], tmp_path / "m.gguf")
    fields, _ = F.read_gguf(tmp_path / "m.gguf")
    pieces = fields["parakeet.tokenizer.pieces"][1]
    assert pieces[0] == "<unk>" and pieces[1] == "▁the" and pieces[8] == "▁北" and len(pieces) == 40


def test_effective_preprocessor_values_follow_nemo_defaults(tmp_path):
    cfg, sd = F.tiny_config("ctc"), F.tiny_state_dict("ctc")
    pp = cfg["preprocessor"]
    for key in ("normalize", "window_size", "window_stride", "n_fft"):
        del pp[key]
    pp.update(n_window_size=400, window_size=None, preemph=None, log_zero_guard_value="tiny", mag_power=1.0)
    F.write_nemo(tmp_path / "m.nemo", cfg, F.checkpoint_bytes(sd))
    report = convert_nemo(tmp_path / "m.nemo", tmp_path / "m.gguf")
    m = report.metadata
    assert m["parakeet.preprocessor.win_length"] == 400
    assert m["parakeet.preprocessor.hop_length"] == 160  # default window_stride 0.01
    assert m["parakeet.preprocessor.n_fft"] == 512  # next power of two above the window
    assert m["parakeet.preprocessor.normalize"] == "per_feature"
    assert m["parakeet.preprocessor.preemph"] == 0.0  # preemph: null disables it
    assert m["parakeet.preprocessor.mag_power"] == 1.0
    assert m["parakeet.preprocessor.log_zero_guard"] == float(np.finfo(np.float32).tiny)


def test_encoder_defaults_apply_when_keys_are_absent(tmp_path):
    cfg, sd = F.tiny_config("ctc", {"channels": 64}), F.tiny_state_dict("ctc", {"channels": 64})
    for key in ("subsampling_conv_channels", "xscaling", "pos_emb_max_len", "conv_norm_type", "self_attention_model",
                "att_context_size", "conv_context_size"):
        del cfg["encoder"][key]
    F.write_nemo(tmp_path / "m.nemo", cfg, F.checkpoint_bytes(sd))
    m = convert_nemo(tmp_path / "m.nemo", tmp_path / "m.gguf").metadata
    assert m["parakeet.encoder.subsampling_conv_channels"] == 64  # -1 → d_model
    assert m["parakeet.encoder.xscaling"] is True
    assert m["parakeet.encoder.pos_emb_max_len"] == 5000
    assert m["parakeet.encoder.conv_norm_type"] == "batch_norm"


def test_layer_norm_conv_module_keeps_the_batch_norm_names_without_running_stats(tmp_path):
    cfg, sd = F.tiny_config("rnnt"), F.tiny_state_dict("rnnt")
    cfg["encoder"]["conv_norm_type"] = "layer_norm"
    for k in [k for k in sd if k.endswith(("running_mean", "running_var", "num_batches_tracked"))]:
        del sd[k]
    F.write_nemo(tmp_path / "m.nemo", cfg, F.checkpoint_bytes(sd))
    report = convert_nemo(tmp_path / "m.nemo", tmp_path / "m.gguf")
    assert report.metadata["parakeet.encoder.conv_norm_type"] == "layer_norm"
    assert "encoder.layers.0.conv.batch_norm.weight" in F.read_gguf(tmp_path / "m.gguf")[1]
    del sd["encoder.layers.1.conv.batch_norm.bias"]
    F.write_nemo(tmp_path / "m.nemo", cfg, F.checkpoint_bytes(sd))
    with pytest.raises(UnsupportedModelError, match="'encoder.layers.1.conv.batch_norm.bias' is missing"):
        convert_nemo(tmp_path / "m.nemo", tmp_path / "m.gguf")


def test_max_symbols_and_durations_come_from_the_config(tmp_path):
    cfg, sd = F.tiny_config("tdt"), F.tiny_state_dict("tdt")
    cfg["decoding"]["greedy"] = {"max_symbols_per_step": 3}
    F.write_nemo(tmp_path / "m.nemo", cfg, F.checkpoint_bytes(sd))
    m = convert_nemo(tmp_path / "m.nemo", tmp_path / "m.gguf").metadata
    assert m["parakeet.decoding.max_symbols"] == 3
    assert m["parakeet.tdt.durations"] == [0, 1, 2, 3, 4]  # resolved from ${model.model_defaults...}


def test_name_override_and_full_training_config_root(tmp_path):
    cfg, sd = F.tiny_config("ctc"), F.tiny_state_dict("ctc")
    F.write_nemo(tmp_path / "m.nemo", {"name": "x", "model": cfg}, F.checkpoint_bytes(sd))
    report = convert_nemo(tmp_path / "m.nemo", tmp_path / "m.gguf", name="my-model")
    assert report.name == "my-model"
    assert F.read_gguf(tmp_path / "m.gguf")[0]["general.name"][1] == "my-model"


# --- archive variants ----------------------------------------------------------------------------
def test_gzip_nemo_gives_the_same_file_as_plain_tar(tmp_path):
    F.write_tiny_nemo(tmp_path / "plain.nemo", "hybrid_tdt_ctc")
    F.write_tiny_nemo(tmp_path / "zipped.nemo", "hybrid_tdt_ctc", compress=True)
    assert (tmp_path / "zipped.nemo").read_bytes()[:2] == b"\x1f\x8b"
    convert_nemo(tmp_path / "plain.nemo", tmp_path / "a.gguf", "q8_0", name="m")
    convert_nemo(tmp_path / "zipped.nemo", tmp_path / "b.gguf", "q8_0", name="m")
    assert (tmp_path / "a.gguf").read_bytes() == (tmp_path / "b.gguf").read_bytes()


def test_members_without_dot_slash_and_checkpoint_wrapped_in_state_dict(tmp_path):
    cfg, sd = F.tiny_config("rnnt"), F.tiny_state_dict("rnnt")
    F.write_nemo(tmp_path / "m.nemo", cfg, F.checkpoint_bytes(sd, wrap_in_state_dict=True), prefix="")
    assert convert_nemo(tmp_path / "m.nemo", tmp_path / "m.gguf").arch == "rnnt"


def test_tokenizer_vocab_text_is_the_fallback(tmp_path):
    cfg, sd = F.tiny_config("ctc"), F.tiny_state_dict("ctc")
    F.write_nemo(tmp_path / "m.nemo", cfg, F.checkpoint_bytes(sd), tokenizer_model=False)
    convert_nemo(tmp_path / "m.nemo", tmp_path / "m.gguf")
    pieces = F.read_gguf(tmp_path / "m.gguf")[0]["parakeet.tokenizer.pieces"][1]
    assert pieces == [p[0] for p in F.default_pieces()]


def test_corrupt_tokenizer_model_falls_back_with_a_warning(tmp_path):
    cfg, sd = F.tiny_config("ctc"), F.tiny_state_dict("ctc")
    F.write_nemo(tmp_path / "m.nemo", cfg, F.checkpoint_bytes(sd), tokenizer_model=False,
                 extra={"./0a1b_tokenizer.model": b"\x0a\xff\xff\xff"})
    report = convert_nemo(tmp_path / "m.nemo", tmp_path / "m.gguf")
    assert any("using the .vocab file" in w for w in report.warnings)


# --- errors --------------------------------------------------------------------------------------
def assert_no_output(tmp_path):
    assert not (tmp_path / "out.gguf").exists()
    assert not list(tmp_path.glob(".out.gguf.*"))  # no half-written temporary left behind


def test_missing_input_file(tmp_path):
    with pytest.raises(ArchiveError, match="cannot open"):
        convert_nemo(tmp_path / "nope.nemo", tmp_path / "out.gguf")


def test_corrupt_archive(tmp_path):
    (tmp_path / "bad.nemo").write_bytes(b"definitely not a tar file" * 40)
    with pytest.raises(ArchiveError, match="not a valid .nemo archive"):
        convert_nemo(tmp_path / "bad.nemo", tmp_path / "out.gguf")
    assert_no_output(tmp_path)


def test_truncated_archive(tmp_path):
    F.write_tiny_nemo(tmp_path / "m.nemo", "ctc")
    data = (tmp_path / "m.nemo").read_bytes()
    (tmp_path / "cut.nemo").write_bytes(data[: len(data) // 2])
    with pytest.raises(ConversionError):
        convert_nemo(tmp_path / "cut.nemo", tmp_path / "out.gguf")
    assert_no_output(tmp_path)


def test_corrupt_gzip_archive(tmp_path):
    (tmp_path / "bad.nemo").write_bytes(gzip.compress(b"x" * 1000)[:-8] + b"garbage!")
    with pytest.raises(ArchiveError):
        convert_nemo(tmp_path / "bad.nemo", tmp_path / "out.gguf")


@pytest.mark.parametrize("drop,member", [("cfg", "model_config.yaml"), ("ckpt", "model_weights.ckpt")])
def test_missing_member_is_named(tmp_path, drop, member):
    cfg, sd = F.tiny_config("ctc"), F.tiny_state_dict("ctc")
    F.write_nemo(tmp_path / "m.nemo", None if drop == "cfg" else cfg, None if drop == "ckpt" else F.checkpoint_bytes(sd))
    with pytest.raises(ArchiveError, match=f"no member '{member}'"):
        convert_nemo(tmp_path / "m.nemo", tmp_path / "out.gguf")
    assert_no_output(tmp_path)


def test_missing_tokenizer(tmp_path):
    cfg, sd = F.tiny_config("ctc"), F.tiny_state_dict("ctc")
    F.write_nemo(tmp_path / "m.nemo", cfg, F.checkpoint_bytes(sd), tokenizer_model=False, tokenizer_vocab=False)
    with pytest.raises(TokenizerError, match="no usable SentencePiece tokenizer"):
        convert_nemo(tmp_path / "m.nemo", tmp_path / "out.gguf")


@pytest.mark.parametrize("name", ["../escape.txt", "/etc/cron.d/x", "./a/../../b"])
def test_member_names_leaving_the_archive_are_refused(tmp_path, name):
    cfg, sd = F.tiny_config("ctc"), F.tiny_state_dict("ctc")
    F.write_nemo(tmp_path / "m.nemo", cfg, F.checkpoint_bytes(sd), extra={name: b"x"})
    with pytest.raises(ArchiveError, match="unsafe member name"):
        convert_nemo(tmp_path / "m.nemo", tmp_path / "out.gguf")
    assert not (tmp_path.parent / "escape.txt").exists()


def test_malicious_checkpoint_in_a_nemo_is_refused_and_writes_nothing(tmp_path):
    marker = tmp_path / "pwned"
    evil = (b"\x80\x02cposix\nsystem\n(X" + len(f"touch {marker}").to_bytes(4, "little")
            + f"touch {marker}".encode() + b"tR.")
    F.write_nemo(tmp_path / "m.nemo", F.tiny_config("ctc"), F.zip_with_pickle(evil))
    with pytest.raises(UnsafePickleError, match="refusing to load 'posix.system'"):
        convert_nemo(tmp_path / "m.nemo", tmp_path / "out.gguf")
    assert not marker.exists()
    assert_no_output(tmp_path)


def test_legacy_checkpoint_in_a_nemo(tmp_path):
    legacy = DATA / "convert" / "legacy.ckpt"
    F.write_nemo(tmp_path / "m.nemo", F.tiny_config("ctc"), legacy.read_bytes())
    with pytest.raises(CheckpointError, match="legacy"):
        convert_nemo(tmp_path / "m.nemo", tmp_path / "out.gguf")


def test_non_finite_weights_are_refused(tmp_path):
    cfg, sd = F.tiny_config("ctc"), F.tiny_state_dict("ctc")
    sd["encoder.layers.1.norm_out.bias"][3] = np.nan
    F.write_nemo(tmp_path / "m.nemo", cfg, F.checkpoint_bytes(sd))
    with pytest.raises(ConversionError, match="'encoder.layers.1.norm_out.bias' contains NaN"):
        convert_nemo(tmp_path / "m.nemo", tmp_path / "out.gguf")
    assert_no_output(tmp_path)


def test_invalid_yaml(tmp_path):
    sd = F.tiny_state_dict("ctc")
    F.write_nemo(tmp_path / "m.nemo", None, F.checkpoint_bytes(sd), extra={"./model_config.yaml": b"a: [unclosed"})
    with pytest.raises(ConversionError, match="not valid YAML"):
        convert_nemo(tmp_path / "m.nemo", tmp_path / "out.gguf")


def test_unknown_out_type(models, tmp_path):
    with pytest.raises(ConversionError, match="unknown output type"):
        convert_nemo(models["ctc"][0], tmp_path / "out.gguf", "q2_k")


def _set(cfg, path, value):
    node = cfg
    keys = path.split(".")
    for k in keys[:-1]:
        node = node[k]
    if value is _DELETE:
        del node[keys[-1]]
    else:
        node[keys[-1]] = value


_DELETE = object()

UNSUPPORTED = [
    ("ctc", "encoder.subsampling", "striding", "subsampling='striding' is not supported"),
    ("ctc", "encoder.subsampling_factor", 4, "subsampling_factor=4 is not supported"),
    ("ctc", "encoder.self_attention_model", "abs_pos", "self_attention_model='abs_pos' is not supported"),
    ("ctc", "encoder.conv_norm_type", "group_norm", "conv_norm_type='group_norm' is not supported"),
    ("ctc", "encoder.att_context_size", [70, 1], "att_context_size=.* is not supported"),
    ("ctc", "encoder.att_context_style", "chunked_limited", "unlimited context \\(-1\\) is not supported"),
    ("ctc", "encoder.att_context_style", "chunked_limited_with_rc", "att_context_style='chunked_limited_with_rc'"),
    ("ctc", "encoder.causal_downsampling", True, "causal downsampling or causal convolutions are supported only in "
                                                 "cache-aware models"),
    ("ctc", "encoder.conv_context_size", "causal", "causal convolution"),
    ("ctc", "encoder.conv_context_size", [2, 6], "conv_context_size=\\[2, 6\\] is not supported"),
    ("ctc", "encoder._target_", "nemo.collections.asr.modules.SqueezeformerEncoder", "only ConformerEncoder"),
    ("ctc", "preprocessor.normalize", "all_features", "normalize='all_features' is not supported"),
    ("ctc", "preprocessor.log_zero_guard_type", "clamp", "log_zero_guard_type='clamp'"),
    ("ctc", "preprocessor.log", False, "log=false"),
    ("ctc", "preprocessor.exact_pad", True, "exact_pad=true"),
    ("ctc", "preprocessor.n_window_size", 400, "both window_size and n_window_size"),
    ("ctc", "target", "nemo.collections.asr.models.EncDecMultiTaskModel", "model class .* is not supported"),
    ("ctc", "target", "nemo.collections.asr.models.EncDecCTCModel", "character-based"),
    ("rnnt", "decoder.blank_as_pad", False, "blank_as_pad=false"),
    ("rnnt", "decoder.prednet.rnn_hidden_size", 64, "projected LSTM"),
    ("rnnt", "joint.jointnet.activation", "gelu", "activation='gelu' is not supported"),
    ("rnnt", "loss.loss_name", "tdt", "the loss is TDT but"),
    ("rnnt", "loss.loss_name", "multiblank_rnnt", "multi-blank"),
    ("tdt", "joint.num_extra_outputs", 4, "num_extra_outputs=4 does not match"),
    ("ctc", "encoder.n_heads", 4, "pos_bias_u' has shape \\[2, 32\\], the config implies \\[4, 16\\]"),
    ("ctc", "encoder.n_layers", 3, "'encoder.layers.2.norm_out.weight' is missing"),
    ("ctc", "encoder.n_layers", 1, "encoder layers \\['1'\\] beyond n_layers=1"),
    ("ctc", "encoder.d_model", _DELETE, "'encoder.d_model' is required"),
    ("ctc", "decoder.num_classes", 50, "'decoder.num_classes' = 50, but the tokenizer has 40 pieces"),
    ("ctc", "encoder.feat_in", "eighty", "should be an integer"),
    ("ctc", "preprocessor.features", 80, "feat_in 16 differs from the preprocessor's 80 mel features"),
    ("ctc", "preprocessor.n_fft", 1024, "'preprocessor.featurizer.fb' has shape \\[1, 16, 257\\], the config implies \\[1, 16, 513\\]"),
    ("ctc", "preprocessor.n_fft", 400, "n_fft 400 is not a power of two"),
    ("ctc", "preprocessor.mag_power", 1.5, "mag_power=1.5 is not supported"),
    ("rnnt", "joint.jointnet.activation", "tanh", "activation='tanh' is not supported"),
]


@pytest.mark.parametrize("arch,path,value,message", UNSUPPORTED,
                         ids=[f"{a}:{p}={v if v is not _DELETE else 'deleted'}" for a, p, v, _ in UNSUPPORTED])
def test_unsupported_or_inconsistent_config_is_refused_clearly(tmp_path, arch, path, value, message):
    cfg, sd = F.tiny_config(arch), F.tiny_state_dict(arch)
    _set(cfg, path, value)
    F.write_nemo(tmp_path / "m.nemo", cfg, F.checkpoint_bytes(sd))
    with pytest.raises(UnsupportedModelError, match=message):
        convert_nemo(tmp_path / "m.nemo", tmp_path / "out.gguf")
    assert_no_output(tmp_path)


def test_all_problems_are_listed_at_once(tmp_path):
    cfg, sd = F.tiny_config("ctc"), F.tiny_state_dict("ctc")
    cfg["encoder"]["conv_norm_type"] = "group_norm"
    cfg["encoder"]["self_attention_model"] = "abs_pos"
    cfg["preprocessor"]["normalize"] = "all_features"
    F.write_nemo(tmp_path / "m.nemo", cfg, F.checkpoint_bytes(sd))
    with pytest.raises(UnsupportedModelError) as e:
        convert_nemo(tmp_path / "m.nemo", tmp_path / "out.gguf")
    assert "group_norm" in str(e.value) and "abs_pos" in str(e.value) and "'all_features'" in str(e.value)


def test_vocab_mismatch_between_tokenizer_and_tensors(tmp_path):
    cfg, sd = F.tiny_config("hybrid_tdt_ctc"), F.tiny_state_dict("hybrid_tdt_ctc")
    del cfg["decoder"]["vocab_size"], cfg["joint"]["num_classes"], cfg["aux_ctc"]["decoder"]["num_classes"]
    F.write_nemo(tmp_path / "m.nemo", cfg, F.checkpoint_bytes(sd), pieces=F.default_pieces(39))
    with pytest.raises(UnsupportedModelError, match="embed.weight' has shape \\[41, 48\\], the config implies \\[40, 48\\]"):
        convert_nemo(tmp_path / "m.nemo", tmp_path / "out.gguf")


def test_unresolvable_interpolation(tmp_path):
    cfg, sd = F.tiny_config("ctc"), F.tiny_state_dict("ctc")
    cfg["encoder"]["d_model"] = "${model.nowhere}"
    F.write_nemo(tmp_path / "m.nemo", cfg, F.checkpoint_bytes(sd))
    with pytest.raises(ConversionError, match="cannot resolve the interpolation"):
        convert_nemo(tmp_path / "m.nemo", tmp_path / "out.gguf")


def test_an_interpolation_cycle_through_a_path_is_a_conversion_error(tmp_path):
    # The cycle runs through the middle of a dotted path (loop.x looks up loop, which is
    # loop.x again): before, the depth restarted there and Python's RecursionError escaped.
    cfg, sd = F.tiny_config("ctc"), F.tiny_state_dict("ctc")
    cfg["encoder"]["d_model"] = "${loop.x}"
    cfg["loop"] = "${loop.x}"
    F.write_nemo(tmp_path / "m.nemo", cfg, F.checkpoint_bytes(sd))
    with pytest.raises(ConversionError, match="interpolation nests too deeply"):
        convert_nemo(tmp_path / "m.nemo", tmp_path / "out.gguf")


def test_interpolation_fan_out_is_capped(tmp_path):
    # Ten references per level, seven levels: 10 MB from a 100-byte file (nine levels: 1 GB).
    cfg, sd = F.tiny_config("ctc"), F.tiny_state_dict("ctc")
    cfg["l0"] = "a"
    for level in range(1, 8):
        cfg[f"l{level}"] = "${l%d}" % (level - 1) * 10
    cfg["encoder"]["d_model"] = "${l7}"
    F.write_nemo(tmp_path / "m.nemo", cfg, F.checkpoint_bytes(sd))
    with pytest.raises(ConversionError, match="interpolation expands"):
        convert_nemo(tmp_path / "m.nemo", tmp_path / "out.gguf")


def test_an_oversized_gzip_member_is_refused_before_decompressing(tmp_path, monkeypatch):
    from parakeet_py.convert import nemo_archive
    monkeypatch.setattr(nemo_archive, "MAX_GZIP_MEMBER_BYTES", 4000)
    F.write_tiny_nemo(tmp_path / "zipped.nemo", "ctc", compress=True)
    with pytest.raises(ArchiveError, match="model_weights.ckpt' of .* bytes uncompressed, more than the 4000"):
        convert_nemo(tmp_path / "zipped.nemo", tmp_path / "out.gguf")


def test_an_oversized_config_is_refused_before_reading(tmp_path, monkeypatch):
    from parakeet_py.convert import nemo_archive
    monkeypatch.setattr(nemo_archive, "MAX_READ_WHOLE_BYTES", 100)
    F.write_tiny_nemo(tmp_path / "m.nemo", "ctc")
    with pytest.raises(ArchiveError, match="model_config.yaml' of .* bytes, more than the 100 "):
        convert_nemo(tmp_path / "m.nemo", tmp_path / "out.gguf")


# --- requantise and the command line ---------------------------------------------------------------
def test_requantize_f32_gguf_equals_direct_q8_0_conversion(models, tmp_path):
    path = models["hybrid_tdt_ctc"][0]
    convert_nemo(path, tmp_path / "f32.gguf", "f32")
    convert_nemo(path, tmp_path / "direct.gguf", "q8_0")
    report = requantize_gguf(tmp_path / "f32.gguf", tmp_path / "re.gguf", "q8_0")
    f_direct, t_direct = F.read_gguf(tmp_path / "direct.gguf")
    f_re, t_re = F.read_gguf(tmp_path / "re.gguf")
    assert f_re == f_direct
    assert list(t_re) == list(t_direct)
    for name in t_direct:
        assert t_re[name][:2] == t_direct[name][:2], name
        assert t_re[name][2].tobytes() == t_direct[name][2].tobytes(), name
    assert report.type_counts == {"F32": 85, "Q8_0": 20} and report.arch == "hybrid_tdt_ctc"


def test_requantize_f16_gguf_to_q8_0_quantises_the_half_values(models, tmp_path):
    path, _, sd = models["tdt"]
    convert_nemo(path, tmp_path / "f16.gguf", "f16")
    requantize_gguf(tmp_path / "f16.gguf", tmp_path / "q.gguf", "q8_0")
    _, t = F.read_gguf(tmp_path / "q.gguf")
    w = sd["encoder.layers.0.self_attn.linear_v.weight"]
    assert t["encoder.layers.0.self_attn.linear_v.weight"][0] == "Q8_0"
    want = encode_q8_0(w.astype(np.float16).astype(np.float32))
    assert t["encoder.layers.0.self_attn.linear_v.weight"][2].tobytes() == want.tobytes()
    assert t["joint.joint_net.2.weight"][2].tobytes() == sd["joint.joint_net.2.weight"].tobytes()


def test_requantize_refuses_unknown_types_and_foreign_files(models, tmp_path):
    convert_nemo(models["ctc"][0], tmp_path / "m.gguf")
    with pytest.raises(ConversionError, match="unknown output type"):
        requantize_gguf(tmp_path / "m.gguf", tmp_path / "x.gguf", "q3_k")
    w = gguf.GGUFWriter(tmp_path / "llama.gguf", "llama")
    w.add_tensor("t", np.zeros(4, np.float32))
    w.write_header_to_file(), w.write_kv_data_to_file(), w.write_tensors_to_file(), w.close()
    with pytest.raises(ConversionError, match="not a parakeet GGUF"):
        requantize_gguf(tmp_path / "llama.gguf", tmp_path / "x.gguf")


def test_command_line_converts_and_reports_errors(models, tmp_path, capsys):
    assert cli_main([str(models["rnnt"][0]), str(tmp_path / "m.gguf"), "--type", "q8_0", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["arch"] == "rnnt" and report["out_type"] == "q8_0" and report["type_counts"]["Q8_0"] > 0
    assert cli_main([str(tmp_path / "m.gguf"), str(tmp_path / "f16.gguf"), "--type", "f16"]) == 0  # GGUF input
    assert "wrote" in capsys.readouterr().out
    (tmp_path / "bad.nemo").write_bytes(b"junk")
    assert cli_main([str(tmp_path / "bad.nemo"), str(tmp_path / "x.gguf")]) == 1
    assert capsys.readouterr().err.startswith("error: ")
