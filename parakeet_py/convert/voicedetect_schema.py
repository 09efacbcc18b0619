"""The keys of voice-detect.cpp's ``voicedetect`` GGUF schema that the speaker converter writes.

The engine reads the same names from ``libparakeet/src/model/speaker/voicedetect_schema.h``
(``tests/python/test_speaker_convert.py`` checks the two agree). Tensor names are
SpeechBrain's ``state_dict`` keys verbatim.
"""

ARCHITECTURE = "voicedetect"  # general.architecture
ARCH = "voicedetect.arch"
ARCH_ECAPA = "ecapa_tdnn"
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
