"""verbose_json segments of the server, built from word and token timestamps (no server run)."""

import math

import pytest

from parakeet_cli.server import formats
from parakeet_py import Token, Transcript, Word


def transcript(words, tokens=(), duration=None):
    words = [Word(text=t, start=s, end=e, confidence=0.9) for t, s, e in words]
    return Transcript(text=" ".join(w.text for w in words), tokens=list(tokens), words=words,
                      duration=duration if duration is not None else (words[-1].end if words else 0.0),
                      frame_sec=0.08)


def tok(i, start, conf=0.5):
    return Token(id=i, start=start, duration=0.08, confidence=conf)


def texts(t):
    return [s.text for s in formats.segments(t)]


def test_sentence_ends_split_segments():
    t = transcript([("Hello", 0.0, 0.4), ("there.", 0.5, 0.9), ("How", 1.0, 1.2), ("are", 1.3, 1.4),
                    ("you?", 1.5, 1.8), ("Fine!", 1.9, 2.2)])
    segs = formats.segments(t)
    assert [s.text for s in segs] == ["Hello there.", "How are you?", "Fine!"]
    assert [(s.start, s.end) for s in segs] == [(0.0, 0.9), (1.0, 1.8), (1.9, 2.2)]


def test_pauses_split_segments():
    t = transcript([("one", 0.0, 0.3), ("two", 0.4, 0.6), ("three", 1.6, 1.9), ("four", 2.85, 3.0)])
    # 1.0 s between "two" and "three" splits; 0.95 s between "three" and "four" does not.
    assert texts(t) == ["one two", "three four"]


def test_long_runs_are_cut_at_the_max_segment_length():
    words = [(f"w{i}", i * 0.5, i * 0.5 + 0.4) for i in range(50)]  # 25 s without a pause or stop
    segs = formats.segments(transcript(words))
    assert len(segs) > 1
    assert all(s.end - s.start <= formats.MAX_SEGMENT_SEC for s in segs)
    assert " ".join(s.text for s in segs) == " ".join(w[0] for w in words)
    assert all(a.end <= b.start for a, b in zip(segs, segs[1:]))


def test_one_word_and_no_words():
    assert texts(transcript([("Hi.", 0.1, 0.3)])) == ["Hi."]
    assert formats.segments(transcript([])) == []
    # Text without word times (not produced today, but handled): one segment over the clip.
    bare = Transcript(text="hello", tokens=[], words=[], duration=2.0, frame_sec=0.08)
    [seg] = formats.segments(bare)
    assert (seg.start, seg.end, seg.text, seg.token_ids, seg.avg_logprob) == (0.0, 2.0, "hello", [], None)


def test_tokens_go_to_the_segment_they_start_in():
    t = transcript([("a.", 0.0, 0.2), ("b.", 1.0, 1.2), ("c", 2.0, 2.2)],
                   tokens=[tok(1, 0.0, 0.5), tok(2, 0.16), tok(3, 1.0, 0.25), tok(4, 1.6), tok(5, 2.0), tok(6, 2.1)])
    segs = formats.segments(t)
    assert [s.token_ids for s in segs] == [[1, 2], [3, 4], [5, 6]]
    assert segs[0].avg_logprob == pytest.approx(round(math.log(0.5), 4))
    assert segs[1].avg_logprob == pytest.approx(round((math.log(0.25) + math.log(0.5)) / 2, 4))


def test_verbose_json_shape():
    t = transcript([("Hello", 0.0, 0.4), ("world.", 0.5, 0.9)], tokens=[tok(7, 0.0), tok(8, 0.5)], duration=1.25)
    body = formats.verbose_json_body(t, ["word", "segment"], "en")
    assert body["task"] == "transcribe" and body["language"] == "en" and body["duration"] == 1.25
    assert body["text"] == "Hello world."
    assert body["words"] == [{"word": "Hello", "start": 0.0, "end": 0.4}, {"word": "world.", "start": 0.5, "end": 0.9}]
    [seg] = body["segments"]
    assert seg["id"] == 0 and seg["seek"] == 0 and seg["text"] == "Hello world." and seg["tokens"] == [7, 8]
    assert seg["temperature"] == 0.0 and seg["no_speech_prob"] is None and seg["compression_ratio"] > 0
    assert set(formats.verbose_json_body(t, [], None)) == {"task", "language", "duration", "text", "segments"}
    assert set(formats.verbose_json_body(t, ["word"], None)) == {"task", "language", "duration", "text", "words"}


def test_text_and_json_bodies():
    t = transcript([("Hi", 0.0, 0.2)])
    assert formats.json_body(t) == {"text": "Hi"}
    assert formats.text_body(t) == "Hi\n"
    assert formats.srt_body(transcript([])) == ""
    assert formats.vtt_body(transcript([])).startswith("WEBVTT")
