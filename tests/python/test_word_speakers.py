"""parakeet_py.speakers.diarize.word_speakers / speaker_utterances: the library's word-to-speaker and
utterance rules on words and segments from anywhere. On the conversation fixture they give
exactly the speakers and utterances Context.transcribe(diarizer=) gives (one rule, not two);
hand-built cases of the rule; bad input is InvalidArgument."""

import math

import pytest

from data_helpers import AUDIO, MODEL, NEMO_DIR
from parakeet_py import Context, Diarizer, InvalidArgument, Segment, Word
from parakeet_py.speakers.diarize import attribute_words, speaker_utterances, word_speakers

CLIP = AUDIO / "conversation_16k.wav"


def test_the_offline_paths_speakers_and_utterances():
    with Context(MODEL) as ctx, Diarizer(NEMO_DIR / "sortformer_offline" / "model.gguf") as d:
        t = ctx.transcribe(CLIP, diarizer=d)
    assert len({w.speaker for w in t.words}) >= 2
    assert word_speakers(t.words, t.segments) == [w.speaker for w in t.words]
    got = speaker_utterances(t.words, t.segments)
    assert [(u.speaker, u.text) for u in got] == [(u.speaker, u.text) for u in t.utterances]
    # the library's utterance document rounds its times to 10 ms and its confidences to 3 decimals
    assert [(round(u.start, 2), round(u.end, 2)) for u in got] == [(u.start, u.end) for u in t.utterances]
    assert [u.confidence for u in got] == pytest.approx([u.confidence for u in t.utterances], abs=5e-4)
    assert attribute_words(t.words, t.segments) == ([w.speaker for w in t.words], got)


def word(start, end, text="w", confidence=0.9):
    return Word(text, start, end, confidence)


def test_the_rule_on_hand_built_cases():
    segs = [Segment(0, 0.0, 1.3), Segment(1, 1.3, 3.0), Segment(2, 4.0, 4.5)]
    words = [word(1.0, 2.0), word(3.2, 3.4), word(3.5, 3.5), word(5.0, 5.1), word(6.0, 6.5)]
    # most overlap; nearest within 0.5 s (0.2 s after speaker 1); equal gaps (0.5 s): the later;
    # 0.5 s after speaker 2's end; nobody within 0.5 s
    assert word_speakers(words, segs) == [1, 1, 2, 2, -1]
    assert word_speakers([], segs) == [] and word_speakers(words[:1], []) == [-1]
    u = speaker_utterances([word(0.0, 0.4, "hello", 0.9), word(0.5, 0.9, "there", 0.6), word(1.5, 1.8, "again")],
                           [Segment(0, 0.0, 2.0)])
    assert [(x.text, x.start, x.end, x.confidence) for x in u] == [("hello there", 0.0, 0.9, 0.6),
                                                                   ("again", 1.5, 1.8, 0.9)]


@pytest.mark.parametrize("words, segments, message", [
    ([word(1.0, 0.5)], [Segment(0, 0.0, 1.0)], "word 0 ends before it starts"),
    ([word(0.0, math.nan)], [], "not finite"),
    ([word(0.0, 1.0)], [Segment(-1, 0.0, 1.0)], "negative speaker"),
    ([word(0.0, 1.0)], [Segment(0, 2.0, 1.0)], "segment 0 ends before it starts"),
])
def test_bad_input_is_refused(words, segments, message):
    with pytest.raises(InvalidArgument, match=message):
        word_speakers(words, segments)
