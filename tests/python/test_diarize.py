"""parakeet_py.Diarizer and the converter's diarization kind on the Sortformer fixtures
(tools/fixtures/make_sortformer_fixtures.py): converting the .nemo again gives the committed
file's tensors and keys, the segments are NeMo's (as recorded by the fixture script, default and
tuned post-processing), probabilities within 1e-4 of NeMo's, a progress callback changes nothing
and cancels, and bad input is refused."""

import gguf
import numpy as np
import pytest

from data_helpers import AUDIO, NEMO_DIR
from parakeet_py import Cancelled, Diarizer, InvalidArgument, Segment
from parakeet_py.convert import convert_nemo

MODELS = ("sortformer_offline", "sortformer_stream")
CLIP = AUDIO / "conversation_16k.wav"


def _ref(name):
    """NeMo's diarize() on the clip as the checkpoint runs it: the streaming checkpoint
    (streaming_mode on) through forward_streaming, the offline one through the offline network."""
    ref = "diarref_streaming_conversation.gguf" if name == "sortformer_stream" else "diarref_conversation.gguf"
    return gguf.GGUFReader(str(NEMO_DIR / name / ref))


def _array(r, key):
    f = r.fields[key]
    return [f.parts[i].tolist()[0] for i in f.data]


def _nemo_segments(r, prefix):
    return sorted(Segment(int(s), round(a, 2), round(b, 2))
                  for s, a, b in zip(_array(r, f"{prefix}.speaker"), _array(r, f"{prefix}.start"),
                                     _array(r, f"{prefix}.end")))


@pytest.mark.parametrize("name", MODELS)
def test_converting_the_nemo_file_again_gives_the_committed_gguf(name, tmp_path):
    out = tmp_path / "model.gguf"
    report = convert_nemo(NEMO_DIR / name / "model.nemo", out)
    assert report.arch == "diarization"
    ours, committed = gguf.GGUFReader(str(out)), gguf.GGUFReader(str(NEMO_DIR / name / "model.gguf"))
    assert [t.name for t in ours.tensors] == [t.name for t in committed.tensors]
    for a, b in zip(ours.tensors, committed.tensors):
        np.testing.assert_array_equal(np.array(a.data), np.array(b.data), err_msg=a.name)
    names = {t.name for t in ours.tensors}
    assert ("sortformer_modules.encoder_proj.weight" in names) == (name == "sortformer_offline")
    assert not any("out_projection" in n for n in names)  # stored as attn.out_proj (GGUF's 63 bytes)


@pytest.mark.parametrize("name", MODELS)
def test_segments_and_probabilities_are_nemos(name):
    ref = _ref(name)
    probs = np.array([t for t in ref.tensors if t.name == "probs"][0].data)
    with Diarizer(NEMO_DIR / name / "model.gguf", concurrency=2) as d:
        assert sorted(d.diarize(CLIP)) == _nemo_segments(ref, "seg")
        tuned = {k: float(_array(ref, f"post.{k}")[0]) for k in
                 ("onset", "offset", "pad_onset", "pad_offset", "min_duration_on", "min_duration_off")}
        assert sorted(d.diarize(CLIP, **tuned)) == _nemo_segments(ref, "segpp")
        ours = d.probabilities(CLIP)
    assert ours.shape == probs.shape
    assert np.abs(ours - probs).max() <= 1e-4


@pytest.mark.parametrize("name", MODELS)
def test_progress_changes_nothing_and_cancels(name):
    with Diarizer(NEMO_DIR / name / "model.gguf") as d:
        plain = d.diarize(CLIP)
        seen = []
        assert d.diarize(CLIP, progress=seen.append) == plain
        assert seen[0] == 0.0 and seen[-1] == 1.0 and seen == sorted(seen) and len(seen) >= 4
        # forward_streaming on the offline checkpoint too: reports chunk by chunk
        chunked = []
        assert d.diarize(CLIP, streaming={"chunk_len": 4}, progress=chunked.append) == d.diarize(
            CLIP, streaming={"chunk_len": 4})
        assert len(chunked) > 14 / 0.32 and chunked == sorted(chunked) and chunked[-1] == 1.0
        calls = []
        with pytest.raises(Cancelled, match="cancelled by the progress callback"):
            d.diarize(CLIP, progress=lambda f: calls.append(f) or f < 0.5)
        assert 0.5 <= calls[-1] < 1.0
        assert d.diarize(CLIP) == plain
        with pytest.raises(InvalidArgument, match="progress must be callable"):
            d.diarize(CLIP, progress=3)
        reports = []
        assert np.array_equal(d.probabilities(CLIP, progress=reports.append), d.probabilities(CLIP))
        assert reports[-1] == 1.0
        with pytest.raises(Cancelled):
            d.probabilities(CLIP, progress=lambda f: False)


def test_bad_models_and_options_are_refused():
    with pytest.raises(InvalidArgument, match="not a diarization model"):
        Diarizer(NEMO_DIR / "hybrid_tdt_ctc" / "model.gguf")
    with Diarizer(NEMO_DIR / "sortformer_offline" / "model.gguf") as d:
        x = np.zeros(1600, np.float32)
        with pytest.raises(InvalidArgument, match="unknown key"):
            d.diarize(x, sample_rate=16000, onsett=0.5)
        with pytest.raises(InvalidArgument, match="out of range"):
            d.diarize(x, sample_rate=16000, min_duration_on=-1)
        with pytest.raises(InvalidArgument, match="unknown streaming key"):
            d.diarize(x, sample_rate=16000, streaming={"chunk_size": 6})
        # NeMo's forward_streaming with these settings, on an offline checkpoint too
        assert isinstance(d.diarize(x, sample_rate=16000, streaming={"chunk_len": 6}), list)
        assert d.diarize(np.zeros(0, np.float32), sample_rate=16000) == []
    with pytest.raises(InvalidArgument, match="closed"):
        d.diarize(x, sample_rate=16000)


def test_the_cli_prints_the_segments_as_text_rttm_and_json():
    import json

    from click.testing import CliRunner
    from parakeet_cli.main import cli

    model = NEMO_DIR / "sortformer_offline" / "model.gguf"
    want = _nemo_segments(_ref("sortformer_offline"), "segpp")
    args = ["diarize", "-m", str(model), "--onset", "0.6", "--offset", "0.4", "--pad-onset", "0.05",
            "--pad-offset", "0.1", "--min-duration-on", "0.25", "--min-duration-off", "0.3", str(CLIP)]
    text = CliRunner().invoke(cli, args, catch_exceptions=False).output.splitlines()
    assert sorted(Segment(int(s.split("_")[1]), float(a), float(b)) for a, b, s in (t.split() for t in text)) == want
    rttm = CliRunner().invoke(cli, args[:3] + ["--format", "rttm"] + args[3:], catch_exceptions=False).output
    lines = [line.split() for line in rttm.splitlines()]
    assert all(f[0] == "SPEAKER" and f[1] == "conversation_16k" and f[7].startswith("speaker_") for f in lines)
    assert sorted(Segment(int(f[7].split("_")[1]), float(f[3]), round(float(f[3]) + float(f[4]), 2))
                  for f in lines) == want
    doc = json.loads(CliRunner().invoke(cli, args[:3] + ["--format", "json"] + args[3:],
                                        catch_exceptions=False).output)
    assert doc["speakers"] == 4 and doc["file"] == str(CLIP)
    assert sorted(Segment(s["speaker"], s["start"], s["end"]) for s in doc["segments"]) == want
