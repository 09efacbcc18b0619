"""A voice registry that names one diarized speaker of a fixture clip, for the named-transcript
tests of the library, the CLI and the server.

The fixture Sortformers have random weights, so their speaker slots overlap heavily; on the
conversation clip no slot gets the 2 s of clean voice that naming needs. The streaming fixture on
the 30 s clip gives one slot more than 2 s, so that clip is used: "Ada" is enrolled from exactly
that slot's clean voice (the intervals the library reports in its speaker profiles), which the
named transcript must then recognise as the same voice."""

from pathlib import Path
from typing import Tuple

import numpy as np
import soundfile as sf

from data_helpers import LONG, NEMO_DIR
from parakeet_py import Context, Diarizer, SpeakerEncoder, Transcript, VoiceRegistry

CLIP = LONG
DIARIZER = NEMO_DIR / "sortformer_stream" / "model.gguf"
ASR = NEMO_DIR / "hybrid_tdt_ctc" / "model.gguf"
ENCODER = NEMO_DIR.parent / "speaker" / "ecapa_tiny.gguf"


def enrolled_registry(diarizer: Diarizer, encoder: SpeakerEncoder, name: str = "Ada") -> Tuple[VoiceRegistry, int]:
    """(a registry holding ``name`` enrolled from the clip's only slot with clean voice, that slot)."""
    profiles = diarizer.diarize_named(CLIP, encoder, profiles=True)["speaker_profiles"]["speakers"]
    usable = [p for p in profiles if p["unavailable_reason"] is None]
    assert len(usable) == 1, profiles
    pcm, rate = sf.read(CLIP, dtype="float32")
    voice = np.concatenate([pcm[int(i["start"] * rate):int(i["end"] * rate)] for i in usable[0]["intervals"]])
    registry = VoiceRegistry()
    registry.enroll(name, voice, encoder, sample_rate=rate)
    return registry, int(usable[0]["speaker"])


def saved_registry_and_transcript(directory: Path) -> Tuple[Path, Transcript]:
    """(voices.pksr written in ``directory`` by :func:`enrolled_registry`, the library's named
    transcript of the clip with ASR, the server tests' model too): what the CLI and the server
    must agree with."""
    path = directory / "voices.pksr"
    with Context(ASR) as ctx, Diarizer(DIARIZER) as d, SpeakerEncoder(ENCODER) as enc:
        registry, _ = enrolled_registry(d, enc)
        registry.save(path)
        return path, ctx.transcribe(CLIP, diarizer=d, speakers=registry, speaker_encoder=enc)
