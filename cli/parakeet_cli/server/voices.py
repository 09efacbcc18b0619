"""Named voices on the server: ``--speaker-model`` (a voicedetect speaker encoder) and
``--voices`` (a voice registry file, parakeet-cli speakers enroll). With --diarize-model and
--voices, diarized_json names its speakers, and so do realtime turns (realtime_speakers.py, by
the library's live naming; ``--voice-min-seconds``); the encoder alone serves LocalAI's
``/v1/voice/embed`` and ``/verify``, and with the registry ``/identify`` (voice_api.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Optional

import click

from ..common import SPEAKER_MODEL


def voice_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The two options, for parakeet-server's command."""
    command = click.option("--speaker-model", type=SPEAKER_MODEL, default=None,
                           help="A voicedetect speaker-encoder GGUF file or model name: LocalAI's /v1/voice/embed "
                                "and /v1/voice/verify, and with --voices named speakers (docs/server.md).")(command)
    command = click.option("--voice-min-seconds", type=click.FloatRange(min=0, min_open=True), default=None,
                           help="--voices on realtime turns: seconds of clean voice a session's speaker needs before "
                                "the library names it live [default: 2].")(command)
    return click.option("--voices", type=click.Path(exists=True, dir_okay=False), default=None,
                        help="A voice registry file (parakeet-cli speakers enroll), enrolled with --speaker-model: "
                             "diarized_json and realtime turns give each speaker its \"name\" (with "
                             "--diarize-model), and /v1/voice/identify names a voice.")(command)


@dataclass
class Voices:
    """The loaded speaker encoder and, with --voices, the registry (both thread-safe)."""

    encoder: Any
    registry: Optional[Any]
    # The scene stream's naming options of realtime sessions (SceneStream's keywords; {}: its defaults).
    live_naming: Dict[str, float] = field(default_factory=dict)

    def naming(self) -> Dict[str, Any]:
        """Context.transcribe's keyword arguments of a named transcript ({} without a registry)."""
        return {} if self.registry is None else {"speakers": self.registry, "speaker_encoder": self.encoder}

    def close(self) -> None:
        for loaded in (self.registry, self.encoder):
            if loaded is not None:
                loaded.close()


def load_voices(voices: Optional[str], speaker_model: Optional[str],
                voice_min_seconds: Optional[float] = None) -> Optional[Voices]:
    """The --speaker-model encoder and --voices registry; None without --speaker-model. A usage
    error for --voices alone (or --voice-min-seconds without it), a one-line error for a file
    that cannot be loaded."""
    from parakeet_py import ParakeetError, SpeakerEncoder, VoiceRegistry

    if speaker_model is None and voices is not None:
        raise click.UsageError("--voices goes with --speaker-model (the encoder its voices were enrolled with)")
    if voice_min_seconds is not None and voices is None:
        raise click.UsageError("--voice-min-seconds goes with --voices")
    if speaker_model is None:
        return None
    try:
        encoder = SpeakerEncoder(speaker_model)
    except ParakeetError as e:
        raise click.ClickException(f"cannot load {speaker_model}: {e}") from e
    try:
        naming = {} if voice_min_seconds is None else {"min_voice_sec": voice_min_seconds}
        return Voices(encoder, VoiceRegistry.load(voices) if voices is not None else None, naming)
    except ParakeetError as e:
        encoder.close()
        raise click.ClickException(f"cannot load {voices}: {e}") from e
