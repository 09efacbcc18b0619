"""parakeet_py.SoundTagger on the CED fixture (tests/data/ced): scores equal to the PyTorch
reference's, resampling, the stream's segments and drained windows, and the errors."""

import numpy as np
import pytest

from ced_helpers import MODEL, clip, reference_scores
from gguf_rewrite import rewrite_gguf
from parakeet_py import Context, SoundTagger
from parakeet_py.errors import InvalidArgument, ParakeetError


@pytest.fixture(scope="module")
def tagger():
    with SoundTagger(MODEL) as t:
        yield t


@pytest.mark.parametrize("name", ["long", "tail", "short"])
def test_scores_match_the_pytorch_reference(tagger, name):
    want = reference_scores(name)
    np.testing.assert_allclose(tagger.scores(clip(name)), want, atol=1e-4, rtol=0)
    top = tagger.classify(clip(name), top_k=3)
    assert [t["index"] for t in top] == list(np.argsort(-want, kind="stable")[:3])
    assert top[0]["label"] == tagger.labels[top[0]["index"]]


def test_labels_and_resampling(tagger):
    assert tagger.labels[:4] == ["Speech", "Music", "Dog", "Doorbell"] and len(tagger.labels) == 10
    import soxr

    pcm = clip("long")
    at_48k = soxr.resample(pcm, 16000, 48000, quality="HQ").astype(np.float32)
    want = tagger.scores(np.ascontiguousarray(soxr.resample(at_48k, 48000, 16000, quality="HQ"), np.float32))
    np.testing.assert_array_equal(tagger.scores(at_48k, 48000), want)


def test_stream_segments_and_drained_windows(tagger):
    pcm = clip("long")
    with tagger.stream(top_k=2) as s:
        assert s.feed(pcm[:20000]) == []
        assert [a["index"] for a in s.active()] == sorted(a["index"] for a in s.active())
        closed = s.feed(pcm[20000:], is_last=True)
        windows = s.drain_scores()
    assert [(w["start"], w["end"]) for w in windows] == [(0.0, 1.0), (0.0, 2.0), (0.0, 2.5)]
    assert all(len(w["tags"]) == 2 for w in windows)
    # The drained top tags are the one-shot scores of each window's audio.
    for w in windows:
        top = tagger.classify(pcm[: int(w["end"] * 16000)], top_k=2)
        assert [t["index"] for t in w["tags"]] == [t["index"] for t in top]
        assert [t["score"] for t in w["tags"]] == pytest.approx([t["score"] for t in top], abs=5e-5)
    silence = [c for c in closed if c["label"] == "Silence"]
    assert silence and silence[0]["start"] == 0.0 and silence[0]["end"] == 2.5
    assert silence[0]["peak"] == pytest.approx(max(w["tags"][0]["score"] for w in windows), abs=1e-4)


def test_errors(tagger, model_path):
    with pytest.raises(InvalidArgument, match="unknown sound stream option 'window'"):
        tagger.stream(window=2)
    with pytest.raises(ParakeetError, match="invalid sound options: hop_sec must be at least 0.2"):
        tagger.stream(hop_sec=0.1)
    with pytest.raises(ParakeetError, match="audio too short for the sound tagger"):
        tagger.classify(np.zeros(100, np.float32))
    with pytest.raises(InvalidArgument, match="is not a CED sound model"):
        SoundTagger(model_path)
    with pytest.raises(ParakeetError, match="CED sound model; an ASR model"):
        Context(MODEL)
    with tagger.stream() as s:
        s.finish()
        with pytest.raises(ParakeetError, match="stream already finished"):
            s.feed(np.zeros(10, np.float32))


@pytest.mark.parametrize("changes,drop,message", [
    ({"ced.num_heads": 3}, (), "ced.embed_dim is not a multiple of ced.num_heads"),
    ({"ced.embed_dim": 32}, (), "encoder.init_bn|encoder.patch_embed.proj.weight has shape"),
    ({"ced.target_length": 2000}, (), "encoder.time_pos_embed is shorter than ced.target_length's patches"),
    ({"ced.pooling": "token"}, (), "ced.pooling is not 'mean'"),
    ({"ced.n_fft": 1, "ced.win_size": 1}, (), "ced.n_fft is not a power of two"),
    ({"ced.n_fft": 256}, (), "ced.win_size differs from ced.n_fft"),
    ({"ced.outputdim": 11}, (), "ced.labels does not have ced.outputdim entries"),
    ({}, ("ced.labels",), "ced.labels"),
])
def test_a_malformed_file_is_refused_in_one_line(tmp_path, changes, drop, message):
    bad = rewrite_gguf(MODEL, tmp_path / "bad.gguf", changes, drop=drop)
    with pytest.raises(ParakeetError, match=message) as e:
        SoundTagger(bad)
    assert "\n" not in str(e.value)
