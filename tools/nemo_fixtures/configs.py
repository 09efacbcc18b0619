"""NeMo model configs written in code (modelled on NeMo's FastConformer example YAMLs).

`Arch` holds the sizes; `model_config()` turns an Arch into the dict NeMo's model classes take.
The tiny fixture sizes deliberately differ from each other (d_model, pred_hidden, joint_hidden,
vocab) so that a transposed or swapped weight fails on shape instead of passing silently.
"""
from dataclasses import dataclass, field

HYBRID = "nemo.collections.asr.models.EncDecHybridRNNTCTCBPEModel"
RNNT = "nemo.collections.asr.models.EncDecRNNTBPEModel"
CTC = "nemo.collections.asr.models.EncDecCTCModelBPE"

TDT_DURATIONS = [0, 1, 2, 3, 4]
MAX_SYMBOLS = 10


@dataclass
class Arch:
    kind: str  # ctc | rnnt | tdt | hybrid_rnnt_ctc | hybrid_tdt_ctc
    n_mels: int = 80
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 2
    sub_channels: int = 32
    pred_hidden: int = 48
    joint_hidden: int = 40
    xscaling: bool = True
    durations: list = field(default_factory=lambda: list(TDT_DURATIONS))
    # calibrate_heads() offsets, in standard deviations of the centred logits (tuned so that
    # the speech clip hits every decoding branch)
    blank_offset: float = 0.0
    dur0_offset: float = 0.0
    ctc_blank_offset: float = 0.0
    pred_scale: float = 1.0

    @property
    def has_transducer(self) -> bool:
        return self.kind != "ctc"

    @property
    def has_ctc(self) -> bool:
        return self.kind in ("ctc", "hybrid_rnnt_ctc", "hybrid_tdt_ctc")

    @property
    def is_tdt(self) -> bool:
        return self.kind in ("tdt", "hybrid_tdt_ctc")

    @property
    def target(self) -> str:
        return {"ctc": CTC, "rnnt": RNNT, "tdt": RNNT}.get(self.kind, HYBRID)


# The committed fixture models (tests/data/nemo/<name>/model.nemo).
TINY = {
    "hybrid_tdt_ctc": Arch("hybrid_tdt_ctc", n_mels=80, blank_offset=0.5, dur0_offset=-0.3, ctc_blank_offset=2.3),
    "rnnt": Arch("rnnt", n_mels=128, blank_offset=3.2),
    "ctc": Arch("ctc", n_mels=80, ctc_blank_offset=2.3),
    # tdt: tuned so that max_symbols is hit with a non-zero last duration (greedy != greedy_batch)
    "tdt": Arch("tdt", n_mels=80, xscaling=False, blank_offset=0.5, dur0_offset=0.5, pred_scale=3.0),
    "hybrid_rnnt_ctc": Arch("hybrid_rnnt_ctc", n_mels=80, blank_offset=3.2, ctc_blank_offset=2.3),
}

# parakeet-tdt_ctc-110m sized (random weights, for speed runs only; never committed).
ARCH_110M = Arch(
    "hybrid_tdt_ctc", n_mels=80, d_model=512, n_layers=17, n_heads=8, sub_channels=256,
    pred_hidden=640, joint_hidden=640,
)


def _dataset_stub() -> dict:
    # transcribe() needs these sections to exist; defer_setup keeps NeMo from loading anything.
    return {"manifest_filepath": None, "sample_rate": 16000, "batch_size": 1, "shuffle": False,
            "defer_setup": True}


def model_config(arch: Arch, tokenizer_dir: str) -> dict:
    preprocessor = {
        "_target_": "nemo.collections.asr.modules.AudioToMelSpectrogramPreprocessor",
        "sample_rate": 16000, "normalize": "per_feature", "window_size": 0.025, "window_stride": 0.01,
        "window": "hann", "features": arch.n_mels, "n_fft": 512, "log": True, "frame_splicing": 1,
        "dither": 1e-5, "pad_to": 0, "pad_value": 0.0,
    }
    encoder = {
        "_target_": "nemo.collections.asr.modules.ConformerEncoder",
        "feat_in": arch.n_mels, "feat_out": -1, "n_layers": arch.n_layers, "d_model": arch.d_model,
        "subsampling": "dw_striding", "subsampling_factor": 8,
        "subsampling_conv_channels": arch.sub_channels, "causal_downsampling": False,
        "ff_expansion_factor": 4, "self_attention_model": "rel_pos", "n_heads": arch.n_heads,
        "att_context_size": [-1, -1], "att_context_style": "regular", "xscaling": arch.xscaling,
        "untie_biases": True, "pos_emb_max_len": 5000, "conv_kernel_size": 9,
        "conv_norm_type": "batch_norm", "conv_context_size": None, "dropout": 0.1,
        "dropout_pre_encoder": 0.1, "dropout_emb": 0.0, "dropout_att": 0.1,
        "stochastic_depth_drop_prob": 0.0,
    }
    cfg = {
        "sample_rate": 16000,
        "log_prediction": False,
        "skip_nan_grad": False,
        "tokenizer": {"dir": tokenizer_dir, "type": "bpe"},
        "train_ds": _dataset_stub(),
        "validation_ds": _dataset_stub(),
        "test_ds": _dataset_stub(),
        "preprocessor": preprocessor,
        "spec_augment": None,
        "encoder": encoder,
    }
    ctc_decoder = {
        "_target_": "nemo.collections.asr.modules.ConvASRDecoder",
        "feat_in": arch.d_model, "num_classes": -1, "vocabulary": [],
    }
    if arch.kind == "ctc":
        cfg["decoder"] = ctc_decoder
        cfg["decoding"] = {"strategy": "greedy"}
        return cfg

    n_extra = len(arch.durations) if arch.is_tdt else 0
    cfg["model_defaults"] = {"enc_hidden": arch.d_model, "pred_hidden": arch.pred_hidden,
                             "joint_hidden": arch.joint_hidden}
    cfg["decoder"] = {
        "_target_": "nemo.collections.asr.modules.RNNTDecoder",
        "normalization_mode": None, "random_state_sampling": False, "blank_as_pad": True,
        "prednet": {"pred_hidden": arch.pred_hidden, "pred_rnn_layers": 1, "t_max": None, "dropout": 0.2},
    }
    cfg["joint"] = {
        "_target_": "nemo.collections.asr.modules.RNNTJoint",
        "log_softmax": None, "preserve_memory": False, "fuse_loss_wer": False, "fused_batch_size": 4,
        "jointnet": {"joint_hidden": arch.joint_hidden, "activation": "relu", "dropout": 0.2},
        "num_extra_outputs": n_extra,
    }
    decoding = {"strategy": "greedy", "greedy": {"max_symbols": MAX_SYMBOLS}}
    if arch.is_tdt:
        decoding.update({"model_type": "tdt", "durations": list(arch.durations),
                         "tdt_include_token_duration": True})
        cfg["loss"] = {"loss_name": "tdt", "tdt_kwargs": {
            "fastemit_lambda": 0.0, "clamp": -1.0, "durations": list(arch.durations),
            "sigma": 0.02, "omega": 0.1}}
    else:
        cfg["loss"] = {"loss_name": "default"}
    cfg["decoding"] = decoding
    if arch.has_ctc:
        cfg["aux_ctc"] = {"ctc_loss_weight": 0.3, "use_cer": False, "ctc_reduction": "mean_volume",
                          "decoder": ctc_decoder, "decoding": {"strategy": "greedy"}}
    return cfg
