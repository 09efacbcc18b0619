"""The model kinds a name can be resolved for, their default GGUF types, which source files
each accepts, and the short aliases of the known models.

``asr`` is a speech recogniser (``Context``), ``diarize`` a Sortformer diarizer
(``Diarizer``), ``vad`` a Silero VAD (``Vad``), ``speaker`` a voicedetect speaker encoder
(``SpeakerEncoder``), ``sound`` a CED sound tagger (``SoundTagger``).
"""

from __future__ import annotations

from typing import Dict, Tuple

KINDS = ("asr", "diarize", "vad", "speaker", "sound")

#: The type a source that is not GGUF is converted to when the name gives none: q8_0 keeps
#: a recogniser's words (docs/quantization.md); Silero's VAD file is only ever f32 or f16, a
#: SpeechBrain speaker encoder f32; CED's q8_0 is ced.cpp's published type.
DEFAULT_TYPES: Dict[str, str] = {"asr": "q8_0", "diarize": "q8_0", "vad": "f32", "speaker": "f32", "sound": "q8_0"}

#: How the names of a repo's files that are models of each kind end (a published GGUF is used
#: as it is): a NeMo archive, Silero's ONNX, SpeechBrain's ECAPA checkpoint, a mispeech/ced-*
#: state_dict.
SOURCE_SUFFIXES: Dict[str, Tuple[str, ...]] = {"asr": (".nemo", ".gguf"), "diarize": (".nemo", ".gguf"),
                                               "vad": (".onnx", ".gguf"), "speaker": ("embedding_model.ckpt", ".gguf"),
                                               "sound": ("pytorch_model.bin", ".gguf")}

#: The files a checkpoint's converter reads beside it, downloaded with it.
COMPANIONS: Dict[str, Tuple[str, ...]] = {"embedding_model.ckpt": ("hyperparams.yaml",),
                                          "pytorch_model.bin": ("config.json",)}

#: Short names → full names, per kind.
ALIASES: Dict[str, Dict[str, str]] = {
    "asr": {
        "parakeet-tdt-0.6b-v3": "nvidia/parakeet-tdt-0.6b-v3",
        "parakeet-tdt-0.6b-v2": "nvidia/parakeet-tdt-0.6b-v2",
        "parakeet-tdt_ctc-110m": "nvidia/parakeet-tdt_ctc-110m",
    },
    "diarize": {
        "sortformer": "nvidia/diar_streaming_sortformer_4spk-v2",
        "sortformer-v1": "nvidia/diar_sortformer_4spk-v1",
    },
    "vad": {},
    "speaker": {},
    "sound": {},
}

#: VAD names meaning the model of the installed ``silero-vad`` package (converted locally, no Hub).
PACKAGE_VAD_NAMES = ("silero", "silero-vad")

__all__ = ["KINDS", "DEFAULT_TYPES", "SOURCE_SUFFIXES", "COMPANIONS", "ALIASES", "PACKAGE_VAD_NAMES"]
