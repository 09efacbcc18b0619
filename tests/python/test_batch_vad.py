"""``batch --vad``: each file cut at pauses by the Silero VAD before transcription; every row is
Context.transcribe(path, vad=) of its file and keeps the segment list, in JSONL and Parquet;
bad files are still error rows; --vad-model without --vad and --vad with --ray are refused."""

import json

import pytest

from batch_helpers import CLIPS, MODEL, write_corpus
from test_batch import _cli
from parakeet_py import Context, Vad
from parakeet_py.batch import BatchOptions, read_rows, run_batch
from parakeet_py.vad import default_model

pytestmark = pytest.mark.skipif(not MODEL.exists(), reason=f"{MODEL} has not been generated")


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_rows_are_the_vad_cut_transcripts_with_their_segments(tmp_path, suffix):
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    manifest = write_corpus(tmp_path)
    out = tmp_path / f"out{suffix}"
    vad_path = str(default_model())
    stats = run_batch(str(MODEL), [str(manifest)], str(out),
                      BatchOptions(concurrency=2, threads=1, timestamps=True, vad=vad_path))
    assert (stats.done, stats.errors) == (len(CLIPS) + 2, 2)
    rows = {r["id"]: r for r in read_rows(str(out))}
    cut_any = False
    with Context(MODEL) as ctx, Vad(vad_path) as vad:
        for entry in map(json.loads, manifest.read_text().splitlines()):
            row = rows[entry["id"]]
            if entry["id"] in ("bad", "missing"):
                assert row["error"] and row["segments"] is None
                continue
            want = ctx.transcribe(entry["path"], timestamps=True, vad=vad)
            assert row["error"] is None and row["text"] == want.text and row["duration"] == want.duration
            assert row["segments"] == want.speech_segments
            assert [w["text"] for w in row["words"]] == [w.text for w in want.words]
            cut_any |= 0 < len(want.speech_segments) and sum(s["end"] - s["start"] for s in want.speech_segments) < want.duration
    assert cut_any  # some file lost silence to the cut


def test_cli_batch_vad(tmp_path):
    manifest = write_corpus(tmp_path)
    out = tmp_path / "out.jsonl"
    result = _cli("batch", "-m", MODEL, manifest, "-o", out, "-t", 1, "--vad", "--vad-model", default_model(),
                  "--no-progress")
    assert result.exit_code == 0, result.output
    assert all("segments" in r for r in read_rows(str(out)))
    no_vad = _cli("batch", "-m", MODEL, manifest, "-o", tmp_path / "x.jsonl", "--vad-model", default_model())
    assert no_vad.exit_code == 2 and "--vad-model goes with --vad" in no_vad.stderr
    ray = _cli("batch", "-m", MODEL, manifest, "-o", tmp_path / "y.jsonl", "--vad", "--ray")
    assert ray.exit_code == 2 and "not with --ray" in ray.stderr
