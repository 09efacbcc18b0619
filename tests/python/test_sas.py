"""Speaker-attributed transcripts in Python: Context.transcribe(audio, diarizer=d) on the
conversation fixture with an ASR fixture model and the offline Sortformer fixture. Each word's
speaker is recomputed here from the plain transcript's words and the Diarizer's own segments by
the documented rule (written out independently below); the utterances are runs of one speaker
with pauses of at most 0.5 s; a progress callback changes nothing, sees both stages (the
transcription below one half, the diarization above) and cancels either; bad combinations are
refused."""

import pytest

from data_helpers import AUDIO, NEMO_DIR
from parakeet_py import Cancelled, Context, Diarizer, InvalidArgument, Utterance

CLIP = AUDIO / "conversation_16k.wav"


@pytest.fixture(scope="module")
def asr():
    with Context(NEMO_DIR / "hybrid_tdt_ctc" / "model.gguf") as ctx:
        yield ctx


@pytest.fixture(scope="module")
def diarizer():
    with Diarizer(NEMO_DIR / "sortformer_offline" / "model.gguf") as d:
        yield d


def _expected_speaker(word, segments):
    """The most overlap (first on ties), else the nearest segment within 0.5 s (later on ties;
    a segment around a zero-length word is at distance 0), else -1; 1e-9 s tolerance."""
    best, most = -1, 1e-9
    for s in segments:
        overlap = min(word.end, s.end) - max(word.start, s.start)
        if overlap > most + (0 if best < 0 else 1e-9):
            best, most = s.speaker, overlap
    if best >= 0:
        return best
    nearest = 0.5 + 1e-9
    for s in segments:
        gap = max(0.0, s.start - word.end, word.start - s.end)
        if gap <= nearest + (0 if best < 0 else 1e-9):
            best, nearest = s.speaker, min(nearest, gap)
    return best


def test_each_word_has_the_speaker_the_rule_gives(asr, diarizer):
    t = asr.transcribe(CLIP, diarizer=diarizer)
    plain = asr.transcribe(CLIP)
    segments = diarizer.diarize(CLIP)
    assert t.text == plain.text and t.tokens == plain.tokens
    assert t.segments == segments
    assert [(w.text, w.start, w.end) for w in t.words] == [(w.text, w.start, w.end) for w in plain.words]
    assert len(t.words) > 5
    assert [w.speaker for w in t.words] == [_expected_speaker(w, segments) for w in plain.words]
    assert len({w.speaker for w in t.words} - {-1}) >= 2
    assert all(w.speaker is None for w in plain.words) and plain.segments == [] and plain.utterances == []


def test_utterances_are_runs_of_one_speaker(asr, diarizer):
    t = asr.transcribe(CLIP, diarizer=diarizer)
    assert len(t.utterances) > 1 and all(isinstance(u, Utterance) for u in t.utterances)
    # Rebuild the runs from the words: same speaker and a pause of at most 0.5 s joins.
    runs = []
    for w in t.words:
        if runs and runs[-1][0] == w.speaker and w.start - runs[-1][2] <= 0.5 + 1e-9:
            runs[-1][1].append(w.text)
            runs[-1][2] = max(runs[-1][2], w.end)
            runs[-1][3] = min(runs[-1][3], w.confidence)
        else:
            runs.append([w.speaker, [w.text], w.end, w.confidence])
    assert [(u.speaker, u.text) for u in t.utterances] == [(r[0], " ".join(r[1])) for r in runs]
    assert [u.end for u in t.utterances] == pytest.approx([r[2] for r in runs], abs=0.006)
    assert [u.confidence for u in t.utterances] == pytest.approx([r[3] for r in runs], abs=1e-4)
    d = t.to_dict()
    assert d["utterances"][0]["speaker"] == t.utterances[0].speaker and "speaker" in d["words"][0]


@pytest.mark.parametrize("name", ["sortformer_offline", "sortformer_stream"])
def test_progress_changes_nothing_and_covers_both_stages(asr, name):
    with Diarizer(NEMO_DIR / name / "model.gguf") as d:
        plain = asr.transcribe(CLIP, diarizer=d)
        seen = []
        assert asr.transcribe(CLIP, diarizer=d, progress=seen.append) == plain
    assert seen[0] == 0.0 and seen[-1] == 1.0 and seen == sorted(seen)
    assert sum(0.0 < f < 0.5 for f in seen) >= 3 and sum(0.5 < f < 1.0 for f in seen) >= 3


def test_returning_false_cancels_either_stage(asr, diarizer):
    plain = asr.transcribe(CLIP, diarizer=diarizer)
    for stop_after in (-1.0, 0.5, 0.75):  # at once (transcribing), then while diarizing
        calls = []

        def stop(f):
            calls.append(f)
            return f <= stop_after

        with pytest.raises(Cancelled, match="cancelled by the progress callback"):
            asr.transcribe(CLIP, diarizer=diarizer, progress=stop)
        assert stop_after < calls[-1] < 1.0 and sorted(calls) == calls
        if stop_after < 0:
            assert calls == [0.0]
        # Both backends are free: the next request runs and gives the same result.
        assert asr.transcribe(CLIP, diarizer=diarizer) == plain


def test_an_exception_in_the_callback_cancels_and_is_reraised(asr, diarizer):
    def explode(f):
        if f > 0.6:
            raise KeyError("stop here")

    with pytest.raises(KeyError, match="stop here"):
        asr.transcribe(CLIP, diarizer=diarizer, progress=explode)


def test_bad_combinations_are_refused(asr, diarizer):
    for kwargs in ({"decoder": "ctc"}, {"beam": 2}, {"timestamps": False}, {"progress": "not callable"}):
        with pytest.raises(InvalidArgument):
            asr.transcribe(CLIP, diarizer=diarizer, **kwargs)
    with pytest.raises(InvalidArgument, match="Diarizer"):
        asr.transcribe(CLIP, diarizer="model.gguf")
    closed = Diarizer(NEMO_DIR / "sortformer_offline" / "model.gguf")
    closed.close()
    with pytest.raises(InvalidArgument, match="closed"):
        asr.transcribe(CLIP, diarizer=closed)
