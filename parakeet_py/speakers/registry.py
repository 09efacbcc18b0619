"""A voice registry: names for voices, kept in a file (parakeet.cpp's PKSR format).

    from parakeet_py import SpeakerEncoder, VoiceRegistry
    enc = SpeakerEncoder("ecapa.gguf")
    reg = VoiceRegistry()
    reg.enroll("Ada", "ada.wav", enc)            # a repeated name averages
    reg.identify("unknown.wav", enc)             # ("Ada", 0.83), or ("", score) when unsure
    reg.save("voices.pksr"); VoiceRegistry.load("voices.pksr")

A name is given when the best cosine is at least 0.5 and, with two or more names, beats the
second by 0.05 (docs/api.md, "Voice registry").
"""

import json
import os
from typing import Optional, Tuple, Union

import numpy as np

from .. import _native
from ..audio.prepare import AudioSource
from ..owned_handle import OwnedHandle
from .encoder import AUDIO_RATE, SpeakerEncoder, prepared_pcm


class VoiceRegistry(OwnedHandle):
    """Named voices (sums of normalised embeddings). Thread-safe: its calls run one at a time."""

    _FREE = "parakeet_capi_speaker_registry_free"
    _CLOSED = "the voice registry is closed"

    def __init__(self, *, strict: bool = False) -> None:
        self._ptr = _native.check_pointer(_native.load_or_raise()[1].parakeet_capi_speaker_registry_new())
        self.strict = strict

    @classmethod
    def load(cls, path: Union[str, "os.PathLike[str]"]) -> "VoiceRegistry":
        """A registry read from a file written by :meth:`save` (or parakeet.cpp)."""
        reg = cls.__new__(cls)
        lib = _native.load_or_raise()[1]
        reg._ptr = _native.check_pointer(lib.parakeet_capi_speaker_registry_load(os.fspath(path).encode("utf-8")))
        reg._strict = False
        return reg

    @property
    def strict(self) -> bool:
        """True: a registry without an encoder fingerprint is an error rather than a warning."""
        return self._strict

    @strict.setter
    def strict(self, value: bool) -> None:
        self._strict = bool(value)
        _native.load()[1].parakeet_capi_speaker_registry_set_strict(self.handle(), int(self._strict))

    def __len__(self) -> int:
        return int(_native.load()[1].parakeet_capi_speaker_registry_size(self.handle()))

    @property
    def fingerprint(self) -> Tuple[str, str]:
        """(encoder family, encoder weights) of the stored embeddings; ("", "") when unknown."""
        ffi, lib = _native.load()
        return (ffi.string(lib.parakeet_capi_speaker_registry_encoder_family(self.handle())).decode(),
                ffi.string(lib.parakeet_capi_speaker_registry_encoder_weights(self.handle())).decode())

    def enroll(self, name: str, audio: AudioSource, encoder: SpeakerEncoder, *,
               sample_rate: Optional[int] = None) -> None:
        """Adds the voice in ``audio`` under ``name``."""
        samples = prepared_pcm(audio, sample_rate)
        ffi, lib = _native.load()
        with encoder._using() as speaker:
            _native.check_status(lib.parakeet_capi_speaker_enroll(
                self.handle(), speaker, name.encode("utf-8"), ffi.from_buffer("float[]", samples),
                int(samples.size), AUDIO_RATE))

    def add(self, name: str, embedding: np.ndarray, *, family: Optional[str] = None,
            weights: Optional[str] = None) -> None:
        """Adds an embedding made elsewhere, with its encoder's fingerprint when known."""
        v = np.ascontiguousarray(embedding, dtype=np.float32).reshape(-1)
        ffi, lib = _native.load()
        _native.check_status(lib.parakeet_capi_speaker_registry_add_embedding_fp(
            self.handle(), name.encode("utf-8"), ffi.from_buffer("float[]", v), int(v.size),
            _native.c_string(family), _native.c_string(weights)))

    def identify(self, audio: AudioSource, encoder: SpeakerEncoder, *,
                 sample_rate: Optional[int] = None) -> Tuple[str, float]:
        """(name, score): the accepted name ("" if none) and the best cosine."""
        samples = prepared_pcm(audio, sample_rate)
        ffi, lib = _native.load()
        with encoder._using() as speaker:
            doc = json.loads(_native.string_result(lib.parakeet_capi_speaker_identify_pcm_json(
                self.handle(), speaker, ffi.from_buffer("float[]", samples), int(samples.size), AUDIO_RATE)))
        return doc["name"], float(doc["score"])

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes the registry (through ``<path>.tmp``, renamed)."""
        _native.check_status(_native.load()[1].parakeet_capi_speaker_registry_save(
            self.handle(), os.fspath(path).encode("utf-8")))
