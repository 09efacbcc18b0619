"""Context.scene_stream: the C ABI's scene stream from Python (SceneStream) on the conversation
fixture with the hybrid ASR, streaming Sortformer, CED and ECAPA fixtures: the documents carry
the parts asked for (names only with a speaker part), the words do not depend on how the audio is
cut, the sound scores drain, and bad options, models and feeds are refused with typed errors."""

from pathlib import Path

import pytest

from data_helpers import NEMO_DIR, conversation_pcm as pcm
from stream_helpers import check_finished_then_closed
from parakeet_py import Context, Diarizer, InvalidArgument, ParakeetError, SceneStream, SoundTagger, SpeakerEncoder, \
    VoiceRegistry

DATA = Path(__file__).resolve().parents[1] / "data"
ASR = NEMO_DIR / "hybrid_tdt_ctc" / "model.gguf"
DIAR = NEMO_DIR / "sortformer_stream" / "model.gguf"


@pytest.fixture(scope="module")
def models():
    with Context(ASR) as ctx, Diarizer(DIAR) as d, SoundTagger(DATA / "ced" / "ced-test.gguf") as t, \
            SpeakerEncoder(DATA / "speaker" / "ecapa_tiny.gguf") as enc:
        yield ctx, d, t, enc


def run(stream, x, feed):
    """Every document of the stream fed ``x`` ``feed`` samples at a time, the last with is_last."""
    docs = []
    with stream as s:
        for at in range(0, len(x), feed):
            docs.append(s.feed(x[at:at + feed], is_last=at + feed >= len(x)))
    return docs


def words(docs):
    return [(w["text"], w["speaker"], w.get("name")) for d in docs for w in d["words"]]


def test_asr_and_diarization_words_do_not_depend_on_the_feed_size(models):
    ctx, d, _, _ = models
    x = pcm()
    got = [words(run(ctx.scene_stream(diarizer=d, latency="low"), x, feed)) for feed in (1600, 80000)]
    assert len(got[0]) > 5 and got[0] == got[1]
    assert {speaker for _, speaker, _ in got[0]} - {-1}  # diarized speakers
    assert all(name is None for _, _, name in got[0])  # no speaker part: no names


def test_every_part_with_names_and_sounds(models):
    ctx, d, t, enc = models
    x = pcm()
    reg = VoiceRegistry()
    reg.enroll("Ada", x[:64000], enc, sample_rate=16000)
    s = ctx.scene_stream(diarizer=d, tagger=t, speaker_encoder=enc, registry=reg, latency="low",
                         accept_threshold=-1.0, min_voice_sec=0.5, refresh_sec=1.0)
    assert isinstance(s, SceneStream)
    docs = run(s, x, 16000)
    assert docs[0]["names"] == {} and set(docs[0]) == {"t", "names", "utterances", "words", "speakers", "sounds",
                                                       "active"}
    assert docs[-1]["t"] == pytest.approx(len(x) / 16000, abs=1e-3)
    assert any(n["name"] == "Ada" for n in docs[-1]["names"].values())
    assert any(name == "Ada" for _, _, name in words(docs))
    assert sum(len(doc["sounds"]) for doc in docs) > 0 and docs[-1]["active"] == {"speakers": [], "sounds": []}
    reg.close()


def test_sound_scores_drain_once(models):
    ctx, d, t, _ = models
    with ctx.scene_stream(tagger=t) as s:
        s.feed(pcm()[:48000])
        windows = s.drain_scores()
        assert [(w["start"], w["end"]) for w in windows] == [(0.0, 1.0), (0.0, 2.0), (0.0, 3.0)]
        assert all(len(w["tags"]) == 5 for w in windows)
        assert s.drain_scores() == []
    with ctx.scene_stream(diarizer=d) as s:
        assert s.drain_scores() == []  # no tagger


def test_bad_options_models_and_feeds_are_refused(models):
    ctx, d, t, enc = models
    with pytest.raises(InvalidArgument, match="unknown scene stream option 'colour'"):
        ctx.scene_stream(colour=1)
    with pytest.raises(InvalidArgument, match="give both"):
        ctx.scene_stream(diarizer=d, registry=VoiceRegistry())
    with pytest.raises(ParakeetError, match="speaker identification needs a registry"):
        ctx.scene_stream(diarizer=d, speaker_encoder=enc)
    with pytest.raises(ParakeetError, match="speaker identification needs a diarization model"):
        ctx.scene_stream(speaker_encoder=enc, registry=VoiceRegistry())
    with pytest.raises(ParakeetError, match="invalid sound options"):
        ctx.scene_stream(tagger=t, hop_sec=0.1)
    with pytest.raises(ParakeetError, match="invalid speaker options: margin must be >= 0"):
        ctx.scene_stream(diarizer=d, speaker_encoder=enc, registry=VoiceRegistry(), margin=-1.0)
    check_finished_then_closed(ctx.scene_stream(tagger=t), ParakeetError, "the scene stream is closed")
