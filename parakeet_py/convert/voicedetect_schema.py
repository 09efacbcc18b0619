"""The keys of voice-detect.cpp's ``voicedetect`` GGUF schema that the speaker converter writes.

The engine reads the same names from ``libparakeet/src/model/speaker/voicedetect_schema.h``
(``tests/python/test_speaker_convert.py`` checks the two agree). ECAPA's tensor names are
SpeechBrain's ``state_dict`` keys verbatim; CAM++ lists its tensors in the ``campplus`` keys.
"""

from typing import List

from .meta_value import MetaValue

ARCHITECTURE = "voicedetect"  # general.architecture
ARCH = "voicedetect.arch"
ARCH_ECAPA = "ecapa_tdnn"
ARCH_CAMPPLUS = "campplus"
EMBEDDING_DIM = "voicedetect.embedding_dim"
L2_NORMALIZE = "voicedetect.l2_normalize"

FBANK_SAMPLE_RATE = "voicedetect.fbank.sample_rate"
FBANK_N_MELS = "voicedetect.fbank.n_mels"
FBANK_N_FFT = "voicedetect.fbank.n_fft"
FBANK_WIN_LENGTH = "voicedetect.fbank.win_length"
FBANK_HOP_LENGTH = "voicedetect.fbank.hop_length"
FBANK_PREEMPH = "voicedetect.fbank.preemph"
FBANK_LOW_FREQ = "voicedetect.fbank.low_freq"
FBANK_HIGH_FREQ = "voicedetect.fbank.high_freq"
FBANK_USE_ENERGY = "voicedetect.fbank.use_energy"
FBANK_CMN = "voicedetect.fbank.cmn"
FBANK_WINDOW = "voicedetect.fbank.window"

# Written for voice-detect.cpp's readers; the engine takes every width from the tensor shapes.
ECAPA_CHANNELS = "voicedetect.ecapa.channels"
ECAPA_N_BLOCKS = "voicedetect.ecapa.n_blocks"
ECAPA_SE_CHANNELS = "voicedetect.ecapa.se_channels"
ECAPA_RES2NET_SCALE = "voicedetect.ecapa.res2net_scale"
ECAPA_ATTENTION_CHANNELS = "voicedetect.ecapa.attention_channels"

# CAM++: its convolutions (weight and bias names, "" for none) and affine BatchNorm prefixes in
# forward order, and the final affine-free BatchNorm's statistics.
CAMPPLUS_CONV_WEIGHT = "voicedetect.campplus.conv_weight"
CAMPPLUS_CONV_BIAS = "voicedetect.campplus.conv_bias"
CAMPPLUS_BN_PREFIX = "voicedetect.campplus.bn_prefix"
CAMPPLUS_EMB_BN_MEAN = "voicedetect.campplus.emb_bn_mean"
CAMPPLUS_EMB_BN_VAR = "voicedetect.campplus.emb_bn_var"
CAMPPLUS_BN_EPS = "voicedetect.campplus.bn_eps"


def encoder_metadata(name: str, arch: str, embedding_dim: int, n_mels: int) -> List[MetaValue]:
    """general.name, the encoder's arch and size, and the Kaldi fbank front end (16 kHz, 25/10 ms
    povey windows, 20 Hz to Nyquist, per-utterance mean removal) every voicedetect encoder uses."""
    return [
        MetaValue("general.name", "str", name),
        MetaValue(ARCH, "str", arch),
        MetaValue(EMBEDDING_DIM, "u32", int(embedding_dim)),
        MetaValue(L2_NORMALIZE, "bool", True),
        MetaValue(FBANK_SAMPLE_RATE, "u32", 16000),
        MetaValue(FBANK_N_MELS, "u32", int(n_mels)),
        MetaValue(FBANK_N_FFT, "u32", 512),
        MetaValue(FBANK_WIN_LENGTH, "u32", 400),
        MetaValue(FBANK_HOP_LENGTH, "u32", 160),
        MetaValue(FBANK_PREEMPH, "f32", 0.97),
        MetaValue(FBANK_LOW_FREQ, "f32", 20.0),
        MetaValue(FBANK_HIGH_FREQ, "f32", 0.0),
        MetaValue(FBANK_USE_ENERGY, "bool", False),
        MetaValue(FBANK_CMN, "bool", True),
        MetaValue(FBANK_WINDOW, "str", "povey"),
    ]
