"""OpenAI's voice-activity settings (``turn_detection`` of a realtime session, ``chunking_strategy``
of a transcription request) checked, and turned into the Silero VAD's options (docs/vad.md).

OpenAI's knobs and defaults: ``threshold`` 0.5 (Silero's own, the same scale: a speech
probability), ``prefix_padding_ms`` 300 (audio kept before the detected start),
``silence_duration_ms`` 500 (silence that ends speech: Silero's ``min_pause``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Dict

DEFAULT_THRESHOLD = 0.5
DEFAULT_PREFIX_PADDING_MS = 300
DEFAULT_SILENCE_DURATION_MS = 500
# The server's limits on the two durations (docs/server.md, Limits): padding is Silero's
# speech_pad range; a longer silence than this is not a turn boundary anyone waits for.
MAX_PREFIX_PADDING_MS = 10_000
MAX_SILENCE_DURATION_MS = 10_000
VAD_KEYS = ("type", "threshold", "prefix_padding_ms", "silence_duration_ms")


@dataclass(frozen=True)
class ServerVad:
    threshold: float = DEFAULT_THRESHOLD
    prefix_padding_ms: int = DEFAULT_PREFIX_PADDING_MS
    silence_duration_ms: int = DEFAULT_SILENCE_DURATION_MS

    def to_dict(self) -> Dict[str, Any]:
        return {"type": "server_vad", "threshold": self.threshold, "prefix_padding_ms": self.prefix_padding_ms,
                "silence_duration_ms": self.silence_duration_ms}

    def cut_options(self) -> Dict[str, Any]:
        """Options for cutting a whole file (Context.transcribe(vad_options=)): the prefix padding
        pads both sides of each speech segment, as Silero's speech_pad does."""
        return {"threshold": self.threshold, "min_pause": self.silence_duration_ms / 1000,
                "speech_pad": self.prefix_padding_ms / 1000}


def parse_server_vad(value: Dict[str, Any], where: str, fail: Callable[[str, str], Exception],
                     extra_keys: tuple = ()) -> ServerVad:
    """``value`` (a server_vad object; its "type" already checked) → ServerVad. ``fail(param,
    message)`` makes the caller's error; ``extra_keys`` are accepted and ignored."""
    for key in value:
        if key not in VAD_KEYS + extra_keys:
            raise fail(f"{where}.{key}", f"unknown {where} field {key!r} (known: {', '.join(VAD_KEYS)})")
    threshold = value.get("threshold", DEFAULT_THRESHOLD)
    threshold = DEFAULT_THRESHOLD if threshold is None else _number(threshold, f"{where}.threshold", fail)
    if not 0.0 < threshold <= 1.0:
        raise fail(f"{where}.threshold", f"{where}.threshold must be in (0, 1], not {threshold:g}")
    durations = {}
    for key, default, most in (("prefix_padding_ms", DEFAULT_PREFIX_PADDING_MS, MAX_PREFIX_PADDING_MS),
                               ("silence_duration_ms", DEFAULT_SILENCE_DURATION_MS, MAX_SILENCE_DURATION_MS)):
        v = value.get(key, default)
        v = default if v is None else _number(v, f"{where}.{key}", fail)
        if v != int(v) or not 0 <= v <= most:
            raise fail(f"{where}.{key}", f"{where}.{key} must be a whole number of milliseconds from 0 to {most}")
        durations[key] = int(v)
    return ServerVad(threshold=float(threshold), **durations)


def _number(value: Any, param: str, fail: Callable[[str, str], Exception]) -> float:
    if isinstance(value, bool):
        raise fail(param, f"'{param}' must be a number, not {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise fail(param, f"'{param}' must be a number, not {value!r}") from None
    if not math.isfinite(number):
        raise fail(param, f"'{param}' must be a finite number, not {value!r}")
    return number


__all__ = ["ServerVad", "parse_server_vad", "DEFAULT_THRESHOLD", "DEFAULT_PREFIX_PADDING_MS",
           "DEFAULT_SILENCE_DURATION_MS", "MAX_PREFIX_PADDING_MS", "MAX_SILENCE_DURATION_MS"]
