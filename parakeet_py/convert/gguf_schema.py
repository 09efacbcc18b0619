"""The names of the Parakeet ASR GGUF schema that the converter writes and checks.

The engine's table is ``libparakeet/src/model/gguf_schema.h``; every name here is spelt as
there, under the same name (``kEncoderDModel`` is ``ENCODER_D_MODEL``), which
``tests/python/test_gguf_schema.py`` checks. ``docs/gguf.md`` describes each key and tensor.

Tensor names are NeMo's ``state_dict`` keys verbatim; the converter copies them from the
checkpoint, so only the names it decides on or checks shapes by appear here.
"""

# ---- general.* -----------------------------------------------------------------------------
GENERAL_ARCHITECTURE = "general.architecture"
ARCHITECTURE = "parakeet"  # the value of general.architecture
GENERAL_NAME = "general.name"
GENERAL_FILE_TYPE = "general.file_type"

# ---- parakeet.* ----------------------------------------------------------------------------
PREFIX = "parakeet."
ARCH = "parakeet.arch"

PREPROCESSOR_SAMPLE_RATE = "parakeet.preprocessor.sample_rate"
PREPROCESSOR_N_MELS = "parakeet.preprocessor.n_mels"
PREPROCESSOR_N_FFT = "parakeet.preprocessor.n_fft"
PREPROCESSOR_WIN_LENGTH = "parakeet.preprocessor.win_length"
PREPROCESSOR_HOP_LENGTH = "parakeet.preprocessor.hop_length"
PREPROCESSOR_PREEMPH = "parakeet.preprocessor.preemph"
PREPROCESSOR_MAG_POWER = "parakeet.preprocessor.mag_power"
PREPROCESSOR_NORMALIZE = "parakeet.preprocessor.normalize"
PREPROCESSOR_LOG_ZERO_GUARD = "parakeet.preprocessor.log_zero_guard"

ENCODER_FEAT_IN = "parakeet.encoder.feat_in"
ENCODER_D_MODEL = "parakeet.encoder.d_model"
ENCODER_N_LAYERS = "parakeet.encoder.n_layers"
ENCODER_N_HEADS = "parakeet.encoder.n_heads"
ENCODER_FF_DIM = "parakeet.encoder.ff_dim"
ENCODER_CONV_KERNEL = "parakeet.encoder.conv_kernel"
ENCODER_CONV_NORM_TYPE = "parakeet.encoder.conv_norm_type"
ENCODER_SUBSAMPLING_FACTOR = "parakeet.encoder.subsampling_factor"
ENCODER_SUBSAMPLING_CONV_CHANNELS = "parakeet.encoder.subsampling_conv_channels"
ENCODER_XSCALING = "parakeet.encoder.xscaling"
ENCODER_POS_EMB_MAX_LEN = "parakeet.encoder.pos_emb_max_len"
ENCODER_USE_BIAS = "parakeet.encoder.use_bias"
# cache-aware streaming encoders (see gguf_schema.h)
ENCODER_ATT_CONTEXT_STYLE = "parakeet.encoder.att_context_style"
ENCODER_ATT_CONTEXT_LEFT = "parakeet.encoder.att_context_left"
ENCODER_ATT_CONTEXT_RIGHT = "parakeet.encoder.att_context_right"
ENCODER_ATT_CONTEXT_PRESETS = "parakeet.encoder.att_context_presets"
ENCODER_CAUSAL_DOWNSAMPLING = "parakeet.encoder.causal_downsampling"
ENCODER_CONV_CAUSAL = "parakeet.encoder.conv_causal"
STREAMING_CHUNK_SIZE = "parakeet.streaming.chunk_size"
STREAMING_SHIFT_SIZE = "parakeet.streaming.shift_size"
STREAMING_PRE_ENCODE_CACHE_SIZE = "parakeet.streaming.pre_encode_cache_size"
STREAMING_CACHE_DROP_SIZE = "parakeet.streaming.cache_drop_size"
STREAMING_LAST_CHANNEL_CACHE_SIZE = "parakeet.streaming.last_channel_cache_size"
STREAMING_VALID_OUT_LEN = "parakeet.streaming.valid_out_len"
STREAMING_DROP_EXTRA_PRE_ENCODED = "parakeet.streaming.drop_extra_pre_encoded"

VOCAB_SIZE = "parakeet.vocab_size"
BLANK_ID = "parakeet.blank_id"
TOKENIZER_PIECES = "parakeet.tokenizer.pieces"
TOKENIZER_SCORES = "parakeet.tokenizer.scores"

DECODER_PRED_HIDDEN = "parakeet.decoder.pred_hidden"
DECODER_PRED_RNN_LAYERS = "parakeet.decoder.pred_rnn_layers"
JOINT_JOINT_HIDDEN = "parakeet.joint.joint_hidden"
JOINT_ACTIVATION = "parakeet.joint.activation"
DECODING_MAX_SYMBOLS = "parakeet.decoding.max_symbols"
TDT_DURATIONS = "parakeet.tdt.durations"

# ---- tensor names --------------------------------------------------------------------------
MEL_WINDOW = "preprocessor.featurizer.window"
MEL_FILTERBANK = "preprocessor.featurizer.fb"

SUBSAMPLING_PREFIX = "encoder.pre_encode."
SUBSAMPLING_OUT = "out"

# Conformer layer i: LAYER_PREFIX + "<i>." + one of these modules.
LAYER_PREFIX = "encoder.layers."
NORM_FEED_FORWARD1 = "norm_feed_forward1"
FEED_FORWARD1_LINEAR1 = "feed_forward1.linear1"
FEED_FORWARD1_LINEAR2 = "feed_forward1.linear2"
NORM_SELF_ATT = "norm_self_att"
SELF_ATTN_LINEAR_Q = "self_attn.linear_q"
SELF_ATTN_LINEAR_K = "self_attn.linear_k"
SELF_ATTN_LINEAR_V = "self_attn.linear_v"
SELF_ATTN_LINEAR_OUT = "self_attn.linear_out"
SELF_ATTN_LINEAR_POS = "self_attn.linear_pos"
SELF_ATTN_POS_BIAS_U = "self_attn.pos_bias_u"
SELF_ATTN_POS_BIAS_V = "self_attn.pos_bias_v"
NORM_CONV = "norm_conv"
CONV_POINTWISE1 = "conv.pointwise_conv1"
CONV_DEPTHWISE = "conv.depthwise_conv"
CONV_NORM = "conv.batch_norm"
CONV_POINTWISE2 = "conv.pointwise_conv2"
NORM_FEED_FORWARD2 = "norm_feed_forward2"
FEED_FORWARD2_LINEAR1 = "feed_forward2.linear1"
FEED_FORWARD2_LINEAR2 = "feed_forward2.linear2"
NORM_OUT = "norm_out"

CTC_HEAD = "decoder.decoder_layers.0"
HYBRID_CTC_HEAD = "ctc_decoder.decoder_layers.0"

PREDICTION_EMBED = "decoder.prediction.embed"
PREDICTION_LSTM = "decoder.prediction.dec_rnn.lstm"

JOINT_ENC = "joint.enc"
JOINT_PRED = "joint.pred"
JOINT_OUT = "joint.joint_net.2"

# The matrix weights that may be stored as f16 or q8_0 (a regular expression matched against
# the whole name; the shape rules are in quantize.py).
QUANTISABLE_WEIGHTS = (
    r"encoder\.layers\.\d+\.feed_forward[12]\.linear[12]\.weight"
    r"|encoder\.layers\.\d+\.self_attn\.linear_(?:q|k|v|out|pos)\.weight"
    r"|encoder\.pre_encode\.out\.weight|joint\.(?:enc|pred)\.weight"
)


def layer_module(layer: int, module: str) -> str:
    """``encoder.layers.<layer>.<module>``."""
    return f"{LAYER_PREFIX}{layer}.{module}"


def lstm_param(param: str, layer: int) -> str:
    """The prediction LSTM's ``weight_ih``, ``weight_hh``, ``bias_ih`` or ``bias_hh`` of ``layer``."""
    return f"{PREDICTION_LSTM}.{param}_l{layer}"

# ---- Sortformer diarization (parakeet.arch = "diarization") ----------------------------------
# Keys of parakeet.cpp's diarization schema, which the converter writes and the engine reads.
ARCH_DIARIZATION = "diarization"
DIAR_N_SPEAKERS = "parakeet.diar.n_speakers"
DIAR_TF_D_MODEL = "parakeet.diar.tf_d_model"
DIAR_UPSAMPLE_FACTOR = "parakeet.diar.upsample_factor"  # 10 ms units per output frame
DIAR_FRAME_RESOLUTION_SEC = "parakeet.diar.frame_resolution_sec"
DIAR_ONSET_THRESHOLD = "parakeet.diar.onset_threshold"
DIAR_OFFSET_THRESHOLD = "parakeet.diar.offset_threshold"
DIAR_STREAMING_MODE = "parakeet.diar.streaming_mode"
DIAR_CHUNK_LEN = "parakeet.diar.chunk_len"
DIAR_SPKCACHE_LEN = "parakeet.diar.spkcache_len"
DIAR_FIFO_LEN = "parakeet.diar.fifo_len"
DIAR_SPKCACHE_UPDATE_PERIOD = "parakeet.diar.spkcache_update_period"
DIAR_SPKCACHE_SIL_FRAMES_PER_SPK = "parakeet.diar.spkcache_sil_frames_per_spk"
DIAR_SIL_THRESHOLD = "parakeet.diar.sil_threshold"
DIAR_PRED_SCORE_THRESHOLD = "parakeet.diar.pred_score_threshold"
DIAR_SCORES_BOOST_LATEST = "parakeet.diar.scores_boost_latest"
DIAR_STRONG_BOOST_RATE = "parakeet.diar.strong_boost_rate"
DIAR_WEAK_BOOST_RATE = "parakeet.diar.weak_boost_rate"
DIAR_MIN_POS_SCORES_RATE = "parakeet.diar.min_pos_scores_rate"
# Ours (parakeet.cpp's readers take these from the tensor shapes): the transformer's size and
# the streaming contexts, in NeMo's names.
DIAR_TF_N_LAYERS = "parakeet.diar.tf_n_layers"
DIAR_TF_N_HEADS = "parakeet.diar.tf_n_heads"
DIAR_TF_INNER_SIZE = "parakeet.diar.tf_inner_size"
DIAR_CHUNK_LEFT_CONTEXT = "parakeet.diar.chunk_left_context"
DIAR_CHUNK_RIGHT_CONTEXT = "parakeet.diar.chunk_right_context"

# Sortformer tensors (NeMo's names). Transformer layer i: TF_LAYER_PREFIX + "<i>." + module.
DIAR_ENCODER_PROJ = "sortformer_modules.encoder_proj"  # absent when fc_d_model == tf_d_model
DIAR_HEAD_HIDDEN = "sortformer_modules.first_hidden_to_hidden"
DIAR_HEAD_SPKS = "sortformer_modules.single_hidden_to_spks"
TF_LAYER_PREFIX = "transformer_encoder.layers."
TF_QUERY = "first_sub_layer.query_net"
TF_KEY = "first_sub_layer.key_net"
TF_VALUE = "first_sub_layer.value_net"
TF_OUT = "first_sub_layer.out_projection"  # NeMo's; too long for GGUF: stored as ATTN_OUT_PROJ
TF_NORM1 = "layer_norm_1"
TF_DENSE_IN = "second_sub_layer.dense_in"
TF_DENSE_OUT = "second_sub_layer.dense_out"
TF_NORM2 = "layer_norm_2"
# A transformer layer's output projection is stored as "<layer>.attn.out_proj" (parakeet.cpp's
# name; NeMo's is longer than GGUF's 63 bytes). parakeet.cpp's diarization files may also fuse
# a layer's q/k/v projections into one "<layer>.attn.w_qkv" matrix (rows q, then k, then v),
# in the transformer and in the conformer layers; the engine reads both forms.
ATTN_W_QKV = "attn.w_qkv"
ATTN_OUT_PROJ = "attn.out_proj"


def tf_layer_module(layer: int, module: str) -> str:
    """``transformer_encoder.layers.<layer>.<module>``."""
    return f"{TF_LAYER_PREFIX}{layer}.{module}"
