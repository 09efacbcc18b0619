"""parakeet: CPU inference for NVIDIA Parakeet speech-recognition models.

The compute lives in the bundled C library ``libparakeet``; this package binds it (cffi) and
holds the tools that need no native code, such as the ``.nemo`` → GGUF converter.

    from parakeet_py import Context

    with Context("model.gguf", concurrency=2) as ctx:
        print(ctx.transcribe("speech.flac").text)

See docs/python.md.
"""

from .audio.prepare import load_audio
from .bundle import bundle_components
from .context import Context
from .errors import (BadModel, Cancelled, InternalError, InvalidArgument, InvalidAudio, OutOfMemory, ParakeetError,
                     Unsupported)
from .hotwords import Hotwords
from .nbest import Hypothesis
from .speakers.diarize import Diarizer
from .speakers.diarize_stream import DiarizerStream
from .speakers.encoder import SpeakerEncoder
from .speakers.registry import VoiceRegistry
from .speakers.scene_stream import SceneStream
from .speakers.speaker_stream import SpeakerStream
from .stream import Stream, StreamEvent, StreamUpdate
from .stream_group import StreamGroup
from .transcript import Segment, Token, Transcript, Utterance, Word
from .vad import Vad, VadStream
from .sound import SoundStream, SoundTagger

__version__ = "0.1.0"

__all__ = ["Context", "Stream", "StreamUpdate", "StreamEvent", "StreamGroup", "Transcript", "Token", "Word", "Hypothesis", "Hotwords", "Vad", "VadStream", "SoundTagger", "SoundStream", "Diarizer", "DiarizerStream", "SpeakerEncoder", "VoiceRegistry", "SpeakerStream", "SceneStream", "Segment", "Utterance",
           "ParakeetError", "InvalidArgument", "InvalidAudio", "BadModel", "Unsupported", "Cancelled", "OutOfMemory",
           "InternalError", "load_audio", "bundle_components", "__version__"]
