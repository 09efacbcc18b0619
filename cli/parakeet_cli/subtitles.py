"""SRT and WebVTT subtitles from word timestamps.

Words are grouped into cues the way subtitle style guides ask for: at most two lines of 42
characters, at most 7 seconds on screen, a new cue after a pause of a second or more and
after a sentence ends, and, once a cue is well filled, after a comma. Cues never overlap;
a short cue is held on screen for up to 1 s when the next one (and the audio's end) allows.
Words with speakers (a diarized transcript) also start a new cue where the speaker changes, and
each cue begins with its speaker's label, "[Speaker 1]" (counting from 1; "[Speaker ?]" for
words no speaker segment is near).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence

from parakeet_py import Utterance, Word

MAX_LINE_CHARS = 42
MAX_LINES = 2
MAX_CUE_SECONDS = 7.0
PAUSE_SECONDS = 1.0
MIN_CUE_SECONDS = 1.0
SENTENCE_END = (".", "?", "!", "…")
CLAUSE_END = (",", ";", ":")


@dataclass
class Cue:
    start: float
    end: float
    text: str


def wrap(text: str, width: int = MAX_LINE_CHARS) -> List[str]:
    """One line if it fits, else two lines split at the space that balances them best.

    (A cue is only ever given text that fits in two lines, or a single over-long word.)
    """
    if len(text) <= width or " " not in text:
        return [text]
    # Never inside a leading speaker label ("[Speaker 1] ...").
    label_end = text.find("] ") + 1 if text.startswith("[Speaker ") else 0
    spaces = [i for i, c in enumerate(text) if c == " " and i >= label_end]
    best = min(spaces, key=lambda i: (max(i, len(text) - i - 1) > width, abs(len(text) - 2 * i - 1)))
    return [text[:best], text[best + 1:]]


def speaker_label(speaker: Optional[int]) -> str:
    """"[Speaker N] " for the library's 0-based speaker N - 1, "[Speaker ?] " for -1, "" for None."""
    if speaker is None:
        return ""
    return f"[Speaker {speaker + 1}] " if speaker >= 0 else "[Speaker ?] "


def utterance_line(utterance: Utterance) -> str:
    """A diarized transcript's text line, "[Speaker N] text" (transcribe's text format, offline and live),
    or "Ada: text" when a voice registry named the speaker."""
    if utterance.name:
        return f"{utterance.name}: {utterance.text}"
    return speaker_label(utterance.speaker) + utterance.text


def sound_line(event: Dict[str, Any]) -> str:
    """A sound event's text line, "[start end label]" (transcribe --sound-model, offline and live)."""
    return f"[{event['start']:.2f} {event['end']:.2f} {event['label']}]"


def _fits(text: str) -> bool:
    lines = wrap(text)
    return len(lines) <= MAX_LINES and all(len(line) <= MAX_LINE_CHARS for line in lines)


def group_words(words: Sequence[Word], media_end: Optional[float] = None) -> List[Cue]:
    """Group timed words into cues (see the module docstring for the rules). ``media_end``
    (the audio's length) stops the last cue from being held past the end of the audio."""
    cues: List[Cue] = []
    current: List[Word] = []

    def flush() -> None:
        if current:
            label = speaker_label(current[0].speaker)
            cues.append(Cue(current[0].start, current[-1].end, label + " ".join(w.text for w in current)))
            current.clear()

    for word in words:
        if current:
            text = speaker_label(current[0].speaker) + " ".join(w.text for w in current)
            last = current[-1].text
            if (
                word.speaker != current[0].speaker
                or not _fits(f"{text} {word.text}")
                or word.end - current[0].start > MAX_CUE_SECONDS
                or word.start - current[-1].end >= PAUSE_SECONDS
                or last.endswith(SENTENCE_END)
                or (last.endswith(CLAUSE_END) and len(text) >= MAX_LINE_CHARS)
            ):
                flush()
        current.append(word)
    flush()
    _fix_times(cues, media_end)
    return cues


def _fix_times(cues: List[Cue], media_end: Optional[float]) -> None:
    """Hold short cues longer, and keep cues in order without overlap (each lasts >= 1 ms)."""
    for i, cue in enumerate(cues):
        if i:
            cue.start = max(cue.start, cues[i - 1].end)
        held = cue.start + MIN_CUE_SECONDS
        if media_end is not None:
            held = min(held, media_end)
        cue.end = max(cue.end, held)
        if i + 1 < len(cues):
            cue.end = min(cue.end, max(cues[i + 1].start, cue.start + 0.001))
        cue.end = max(cue.end, cue.start + 0.001)


def _timestamp(seconds: float, sep: str) -> str:
    ms = max(0, int(round(seconds * 1000)))
    h, rest = divmod(ms, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, ms = divmod(rest, 1000)
    return f"{h:02d}:{m:02d}:{s:02d}{sep}{ms:03d}"


def to_srt(words: Sequence[Word], media_end: Optional[float] = None) -> str:
    """SubRip: numbered cues, ``HH:MM:SS,mmm --> HH:MM:SS,mmm``, blank line between cues."""
    blocks = []
    for n, cue in enumerate(group_words(words, media_end), start=1):
        lines = "\n".join(wrap(cue.text))
        blocks.append(f"{n}\n{_timestamp(cue.start, ',')} --> {_timestamp(cue.end, ',')}\n{lines}\n")
    return "\n".join(blocks)


def to_vtt(words: Sequence[Word], media_end: Optional[float] = None) -> str:
    """WebVTT: the ``WEBVTT`` header, then cues with ``HH:MM:SS.mmm`` times."""
    blocks = ["WEBVTT\n"]
    for cue in group_words(words, media_end):
        lines = "\n".join(wrap(cue.text))
        blocks.append(f"{_timestamp(cue.start, '.')} --> {_timestamp(cue.end, '.')}\n{lines}\n")
    return "\n".join(blocks)
