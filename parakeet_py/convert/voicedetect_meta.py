"""The metadata every ``voicedetect`` speaker encoder file starts with: its name, architecture,
embedding size and the Kaldi fbank front end (voice-detect.cpp's values, the ones its encoders
were trained with). The converters add their architecture's keys after these."""

from typing import List

from . import voicedetect_schema as vd
from .meta_value import MetaValue


def speaker_metadata(name: str, arch: str, embedding_dim: int, n_mels: int) -> List[MetaValue]:
    return [
        MetaValue("general.name", "str", name),
        MetaValue(vd.ARCH, "str", arch),
        MetaValue(vd.EMBEDDING_DIM, "u32", int(embedding_dim)),
        MetaValue(vd.L2_NORMALIZE, "bool", True),
        MetaValue(vd.FBANK_SAMPLE_RATE, "u32", 16000),
        MetaValue(vd.FBANK_N_MELS, "u32", int(n_mels)),
        MetaValue(vd.FBANK_N_FFT, "u32", 512),
        MetaValue(vd.FBANK_WIN_LENGTH, "u32", 400),
        MetaValue(vd.FBANK_HOP_LENGTH, "u32", 160),
        MetaValue(vd.FBANK_PREEMPH, "f32", 0.97),
        MetaValue(vd.FBANK_LOW_FREQ, "f32", 20.0),
        MetaValue(vd.FBANK_HIGH_FREQ, "f32", 0.0),
        MetaValue(vd.FBANK_USE_ENERGY, "bool", False),
        MetaValue(vd.FBANK_CMN, "bool", True),
        MetaValue(vd.FBANK_WINDOW, "str", "povey"),
    ]
