"""SRT / WebVTT cue grouping, line wrapping and time formats."""

import re

import pytest

from parakeet_cli.subtitles import (MAX_CUE_SECONDS, MAX_LINE_CHARS, group_words, to_srt, to_vtt, wrap,
                                    _timestamp)
from parakeet_py import Word


def words_from(text, start=0.0, step=0.3, length=0.25):
    return [Word(w, round(start + i * step, 3), round(start + i * step + length, 3), 0.9)
            for i, w in enumerate(text.split())]


def test_timestamps():
    assert _timestamp(0, ",") == "00:00:00,000"
    assert _timestamp(3661.2345, ",") == "01:01:01,234" or _timestamp(3661.2345, ",") == "01:01:01,235"
    assert _timestamp(59.9996, ".") == "00:01:00.000"
    assert _timestamp(-1, ".") == "00:00:00.000"


def test_cues_of_a_three_hour_file_are_well_formed():
    # Word times as the library gives them for frames near the end of 3 hours (frame x 0.08).
    frames = range(134000, 135000, 7)
    words = [Word("w%d" % f, f * 0.08, (f + 3) * 0.08, 0.9) for f in frames]
    srt = to_srt(words, media_end=10800.0)
    stamps = re.findall(r"^(\d\d):(\d\d):(\d\d),(\d\d\d) --> (\d\d):(\d\d):(\d\d),(\d\d\d)$", srt, re.M)
    assert stamps and all(s[0] == "02" for s in stamps)
    ms = [[int(h) * 3_600_000 + int(m) * 60_000 + int(s) * 1000 + int(x) for h, m, s, x in (c[:4], c[4:])]
          for c in stamps]
    assert all(a < b for a, b in ms)  # every cue has a positive length
    assert all(ms[i][1] <= ms[i + 1][0] for i in range(len(ms) - 1))  # and cues never overlap
    assert ms[0][0] == 134000 * 80  # the first word's time, exact to the millisecond
    assert _timestamp(134995 * 0.08, ",") == "02:59:59,600"
    assert to_vtt(words, media_end=10800.0).startswith("WEBVTT")


def test_wrap_balances_two_lines():
    assert wrap("short line") == ["short line"]
    text = "one two three four five six seven eight nine ten"
    lines = wrap(text)
    assert len(lines) == 2 and " ".join(lines) == text
    assert all(len(line) <= MAX_LINE_CHARS for line in lines)
    assert abs(len(lines[0]) - len(lines[1])) <= 6
    assert wrap("x" * 60) == ["x" * 60]  # one over-long word stays whole


def test_cues_fit_two_lines_and_seven_seconds_and_never_overlap():
    text = " ".join(f"word{i}" for i in range(200))
    cues = group_words(words_from(text, step=0.2))
    assert len(cues) > 10
    assert " ".join(c.text for c in cues) == text  # nothing lost or reordered
    for cue in cues:
        lines = wrap(cue.text)
        assert len(lines) <= 2 and all(len(line) <= MAX_LINE_CHARS for line in lines)
        assert cue.end - cue.start <= MAX_CUE_SECONDS + 1.0
        assert cue.end > cue.start
    for a, b in zip(cues, cues[1:]):
        assert a.end <= b.start


def test_sentence_end_and_pause_start_new_cues():
    words = words_from("Hello there. How are you") + words_from("fine thanks", start=5.0)
    cues = group_words(words)
    assert [c.text for c in cues] == ["Hello there.", "How are you", "fine thanks"]
    assert cues[0].start == 0.0 and cues[2].start == 5.0


def test_short_cues_are_held_but_do_not_overlap():
    cues = group_words([Word("Hi.", 1.0, 1.1, 1.0), Word("Yes.", 1.5, 1.6, 1.0), Word("Ok", 4.0, 4.1, 1.0)])
    assert [(c.start, c.end) for c in cues] == [(1.0, 1.5), (1.5, 2.5), (4.0, 5.0)]


def test_cues_are_not_held_past_the_end_of_the_audio():
    words = [Word("a", 0.0, 0.05, 1.0), Word("b.", 0.05, 0.08, 1.0)]
    assert [(c.start, c.end) for c in group_words(words, media_end=0.1)] == [(0.0, 0.1)]
    assert [(c.start, c.end) for c in group_words(words)] == [(0.0, 1.0)]
    late = [Word("x", 2.0, 2.0, 1.0)]  # a word at the very end still lasts a moment
    assert group_words(late, media_end=2.0)[0].end == pytest.approx(2.001)
    assert to_vtt(words, 0.1) == "WEBVTT\n\n00:00:00.000 --> 00:00:00.100\na b.\n"


def test_zero_length_words_at_the_same_time_stay_ordered():
    words = [Word("a.", 2.0, 2.0, 1.0), Word("b.", 2.0, 2.0, 1.0), Word("c", 2.0, 2.0, 1.0)]
    cues = group_words(words)
    assert len(cues) == 3
    for a, b in zip(cues, cues[1:]):
        assert a.start < a.end <= b.start < b.end


def test_srt_and_vtt_documents():
    words = words_from("Hello there. How are you")
    srt = to_srt(words)
    assert srt == ("1\n00:00:00,000 --> 00:00:00,600\nHello there.\n\n"
                   "2\n00:00:00,600 --> 00:00:01,600\nHow are you\n")
    vtt = to_vtt(words)
    assert vtt.startswith("WEBVTT\n\n00:00:00.000 --> 00:00:00.600\nHello there.\n")
    assert re.findall(r"\d\d:\d\d:\d\d\.\d{3} --> ", vtt) and "," not in vtt
    assert to_srt([]) == "" and to_vtt([]) == "WEBVTT\n"


@pytest.mark.parametrize("n", [1, 2, 41, 42, 43, 84, 85])
def test_any_amount_of_text_is_kept(n):
    text = " ".join("ab" for _ in range(n))
    assert " ".join(c.text for c in group_words(words_from(text, step=0.05, length=0.04))) == text
