"""The keys of voice-detect.cpp's ``voicedetect`` GGUF schema that the speaker converter writes.

The engine reads the same names from ``libparakeet/src/model/speaker/voicedetect_schema.h``
(``tests/python/test_speaker_convert.py`` checks the two agree). ECAPA's tensor names are
SpeechBrain's ``state_dict`` keys verbatim; ResNet34, ERes2Net and CAM++ list theirs under their
``RESNET_*``, ``ERES2NET_*`` and ``CAMPPLUS_*`` keys. ``voicedetect_meta.py`` writes the keys every
encoder shares.
"""

ARCHITECTURE = "voicedetect"  # general.architecture
ARCH = "voicedetect.arch"
ARCH_ECAPA = "ecapa_tdnn"
ARCH_RESNET34 = "wespeaker_resnet34"
ARCH_ERES2NET = "eres2net"
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

# WeSpeaker ResNet34's manifest: the tensor names of its convolutions (BatchNorm folded in), in
# the order they run, and the statistics pooling's variance floor.
RESNET_STEM_WEIGHT = "voicedetect.resnet.stem_weight"
RESNET_STEM_BIAS = "voicedetect.resnet.stem_bias"
RESNET_CONV1_WEIGHT = "voicedetect.resnet.conv1_weight"
RESNET_CONV1_BIAS = "voicedetect.resnet.conv1_bias"
RESNET_CONV2_WEIGHT = "voicedetect.resnet.conv2_weight"
RESNET_CONV2_BIAS = "voicedetect.resnet.conv2_bias"
RESNET_DOWN_WEIGHT = "voicedetect.resnet.down_weight"
RESNET_DOWN_BIAS = "voicedetect.resnet.down_bias"
RESNET_STRIDE = "voicedetect.resnet.stride"
RESNET_SEG_WEIGHT = "voicedetect.resnet.seg_weight"
RESNET_SEG_BIAS = "voicedetect.resnet.seg_bias"
RESNET_MEAN_VEC = "voicedetect.resnet.mean_vec"
RESNET_VAR_EPS = "voicedetect.resnet.var_eps"

# 3D-Speaker ERes2Net's manifest: every convolution (BatchNorm folded in) in the order the
# forward runs them, and the fixed topology.
ERES2NET_CONV_WEIGHT = "voicedetect.eres2net.conv_weight"
ERES2NET_CONV_BIAS = "voicedetect.eres2net.conv_bias"
ERES2NET_CONV_STRIDE = "voicedetect.eres2net.conv_stride"
ERES2NET_NUM_BLOCKS = "voicedetect.eres2net.num_blocks"
ERES2NET_M_CHANNELS = "voicedetect.eres2net.m_channels"
ERES2NET_SCALE = "voicedetect.eres2net.scale"
ERES2NET_SEG_WEIGHT = "voicedetect.eres2net.seg_weight"
ERES2NET_SEG_BIAS = "voicedetect.eres2net.seg_bias"
ERES2NET_RELU_CLAMP = "voicedetect.eres2net.relu_clamp"
ERES2NET_VAR_EPS = "voicedetect.eres2net.var_eps"

# CAM++: its convolutions (weight and bias names, "" for none) and affine BatchNorm prefixes in
# forward order, and the final affine-free BatchNorm's statistics.
CAMPPLUS_CONV_WEIGHT = "voicedetect.campplus.conv_weight"
CAMPPLUS_CONV_BIAS = "voicedetect.campplus.conv_bias"
CAMPPLUS_BN_PREFIX = "voicedetect.campplus.bn_prefix"
CAMPPLUS_EMB_BN_MEAN = "voicedetect.campplus.emb_bn_mean"
CAMPPLUS_EMB_BN_VAR = "voicedetect.campplus.emb_bn_var"
CAMPPLUS_BN_EPS = "voicedetect.campplus.bn_eps"
