"""Word error rate: word-level edit distance over normalised text.

Normalisation (applied to reference and hypothesis alike): lower case, every character other
than a letter, digit or apostrophe becomes a space, then split on white space. WER is
(substitutions + deletions + insertions) / reference words.
"""

from __future__ import annotations

from typing import List, Optional, Sequence


def normalize(text: str) -> List[str]:
    """``"Hello, World!"`` → ``["hello", "world"]``."""
    return "".join(c if c.isalnum() or c == "'" else " " for c in text.lower()).split()


def edit_distance(ref: Sequence[str], hyp: Sequence[str]) -> int:
    """Fewest substitutions, deletions and insertions turning ``ref`` into ``hyp`` (Levenshtein)."""
    previous = list(range(len(hyp) + 1))  # distance from ref[:0] to hyp[:j]
    for i, r in enumerate(ref, start=1):
        current = [i] + [0] * len(hyp)
        for j, h in enumerate(hyp, start=1):
            current[j] = min(previous[j] + 1,            # delete r
                             current[j - 1] + 1,         # insert h
                             previous[j - 1] + (r != h))  # substitute (or match)
        previous = current
    return previous[-1]


def word_errors(reference: str, hypothesis: str) -> "tuple[int, int]":
    """(errors, reference words) after normalisation."""
    ref, hyp = normalize(reference), normalize(hypothesis)
    return edit_distance(ref, hyp), len(ref)


def wer(reference: str, hypothesis: str) -> Optional[float]:
    """WER of one utterance; None when the reference has no words (the rate is undefined)."""
    errors, words = word_errors(reference, hypothesis)
    return errors / words if words else None
