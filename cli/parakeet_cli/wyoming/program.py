"""What the service tells a client about itself (the ``info`` answer to ``describe``), and
which locale a client's ``transcribe`` language names."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from wyoming.info import AsrModel, AsrProgram, Attribution, Info

from parakeet_py import __version__

# The locale of a prompt-conditioned model that means "detect the language": not a language a
# client can ask for by name, so it is not listed.
AUTO_LOCALE = "auto"
# Who made the models: NVIDIA publishes the Parakeet checkpoints.
NVIDIA = ("NVIDIA", "https://huggingface.co/nvidia")
PROGRAM_NAME = "parakeet"


class UnknownLanguage(ValueError):
    """A language the model has no prompt for (the message names those it has)."""


def model_locales(model_info: Dict[str, Any]) -> List[str]:
    """A prompt-conditioned model's locales ("en-US", ...), [] for a model without prompts."""
    return [loc for loc in model_info.get("languages", {}).get("locales", []) if loc != AUTO_LOCALE]


def resolve_language(requested: Optional[str], locales: Sequence[str]) -> Optional[str]:
    """The locale to transcribe ``requested`` in: None for a model without prompts (it ignores
    the language) or when nothing was asked; the locale itself, matched without regard to
    case; or, for a bare language ("de"), its first locale ("de-DE"), as Home Assistant names
    a pipeline's language."""
    if requested is None or not locales:
        return None
    wanted = requested.strip().replace("_", "-").lower()
    for locale in locales:
        if locale.lower() == wanted:
            return locale
    for locale in locales:
        if locale.lower().split("-")[0] == wanted:
            return locale
    raise UnknownLanguage(f"unknown language {requested!r}; this model knows: {', '.join(locales)}")


def program_info(model_name: str, model_info: Dict[str, Any], languages: Sequence[str], streaming: bool) -> Info:
    """The ``info`` with one ``asr`` program serving one model."""
    arch = model_info.get("arch")
    model = AsrModel(name=model_name, description=f"Parakeet ({arch})" if arch else "Parakeet",
                     attribution=Attribution(*NVIDIA), installed=True, version=None, languages=list(languages))
    # The program is this project's engine, which has no web address of its own to give.
    program = AsrProgram(name=PROGRAM_NAME, description="Parakeet speech recognition on the CPU (parakeet-cli wyoming)",
                         attribution=Attribution(name=PROGRAM_NAME, url=""), installed=True, version=__version__,
                         models=[model], supports_transcript_streaming=streaming)
    return Info(asr=[program])
