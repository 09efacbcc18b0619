"""Speaker embeddings with a voicedetect speaker encoder (SpeechBrain's ECAPA-TDNN), run by
libparakeet (``src/model/speaker``).

    from parakeet_py import SpeakerEncoder
    enc = SpeakerEncoder("ecapa.gguf")   # parakeet-cli convert embedding_model.ckpt ecapa.gguf, or a name
    v = enc.embed("ada.wav")             # float32 [192], L2-normalised
    enc.family, enc.identity             # the fingerprints a VoiceRegistry checks
"""

import os
from typing import Optional, Union

import numpy as np

from .. import _native
from ..audio.prepare import AudioSource, request_samples
from ..hub import resolve_model
from ..owned_handle import SharedModel, load_model_of_kind

# The audio is brought to this rate here (the encoders' front end runs at 16 kHz).
AUDIO_RATE = 16000


def prepared_pcm(audio: AudioSource, sample_rate: Optional[int]) -> np.ndarray:
    """The audio as 16 kHz float32 samples, short enough for one call."""
    return request_samples(audio, sample_rate, AUDIO_RATE, check_finite=True)


class SpeakerEncoder(SharedModel):
    """A loaded speaker encoder (a GGUF file with general.architecture "voicedetect").
    Thread-safe: calls queue for its threads."""

    _CLOSED = "the speaker encoder is closed"

    def __init__(self, model_path: Union[str, "os.PathLike[str]"], *, component: Optional[str] = None) -> None:
        """``model_path``: a GGUF file or a model name (docs/models.md); ``component``: which
        component of a bundle to load (docs/bundles.md); None: a plain file, or the bundle's only
        voice component."""
        super().__init__()
        self.model_path = resolve_model(model_path, kind="speaker")
        self._ptr = load_model_of_kind(self.model_path, _native.MODEL_KIND_SPEAKER, "a speaker model", component)

    def _text(self, function: str) -> str:
        ffi, lib = _native.load()
        with self._using() as handle:
            return ffi.string(getattr(lib, function)(handle)).decode("utf-8", "replace")

    @property
    def dim(self) -> int:
        """The embedding size (192 for ECAPA-TDNN)."""
        with self._using() as handle:
            return int(_native.load()[1].parakeet_capi_speaker_dim(handle))

    @property
    def family(self) -> str:
        """"voicedetect:<arch>:<name>:<dim>": embeddings of one family are comparable."""
        return self._text("parakeet_capi_speaker_encoder_family")

    @property
    def identity(self) -> str:
        """"sha256:<hex>" of the model file (of a bundle's component: of its source file, as the
        bundle records it): the exact weights."""
        return self._text("parakeet_capi_speaker_identity")

    @property
    def last_warning(self) -> str:
        """The fingerprint warning of the last registry call with this encoder ("" if none)."""
        return self._text("parakeet_capi_speaker_last_warning")

    def embed(self, audio: AudioSource, *, sample_rate: Optional[int] = None) -> np.ndarray:
        """The L2-normalised embedding of ``audio`` (a path, bytes, or samples at
        ``sample_rate``), as float32 [dim]."""
        samples = prepared_pcm(audio, sample_rate)
        ffi, lib = _native.load()
        out, dim = ffi.new("float**"), ffi.new("int*")
        with self._using() as handle:
            _native.check_status(lib.parakeet_capi_speaker_embed_pcm(
                handle, ffi.from_buffer("float[]", samples), int(samples.size), AUDIO_RATE, out, dim))
        try:
            return np.frombuffer(ffi.buffer(out[0], 4 * dim[0]), dtype=np.float32).copy()
        finally:
            lib.parakeet_capi_free_floats(out[0])
