"""Batch jobs with a diarizer (run_batch with BatchOptions.diarize_model, `parakeet-cli batch
--diarize-model`): rows gain speakers and utterances equal to Context.transcribe(diarizer=...)
file by file, words with --timestamps carry speakers, in JSONL and Parquet; a bad file is still an
error row; the options it does not go with are refused."""

import json

import pytest
from cli_helpers import run_cli
from data_helpers import AUDIO, NEMO_DIR
from parakeet_py import Context, Diarizer, InvalidArgument
from parakeet_py.batch import BatchOptions, read_rows, run_batch

ASR = NEMO_DIR / "hybrid_tdt_ctc" / "model.gguf"
DIAR = NEMO_DIR / "sortformer_offline" / "model.gguf"
CLIPS = [AUDIO / "conversation_16k.wav", AUDIO / "speech_16k.wav"]


@pytest.fixture(scope="module")
def expected():
    with Context(ASR) as ctx, Diarizer(DIAR) as d:
        return {str(p): ctx.transcribe(p, diarizer=d) for p in CLIPS}


def _manifest(tmp_path):
    bad = tmp_path / "bad.wav"
    bad.write_bytes(b"not audio")
    m = tmp_path / "in.jsonl"
    m.write_text("".join(json.dumps({"id": str(i), "path": str(p)}) + "\n" for i, p in enumerate(CLIPS + [bad])))
    return m


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
@pytest.mark.parametrize("timestamps", [False, True])
def test_rows_carry_the_speakers_of_context_transcribe(tmp_path, expected, suffix, timestamps):
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    out = tmp_path / f"out{suffix}"
    stats = run_batch(str(ASR), [str(_manifest(tmp_path))], str(out),
                      BatchOptions(concurrency=2, threads=1, timestamps=timestamps, diarize_model=str(DIAR)))
    assert (stats.done, stats.errors) == (3, 1)
    rows = {r["path"]: r for r in read_rows(str(out))}
    for path, t in expected.items():
        row = rows[path]
        assert row["error"] is None and row["text"] == t.text
        assert row["utterances"] == [u.to_dict() for u in t.utterances]
        assert row["speakers"] == len({u.speaker for u in t.utterances} - {-1})
        if timestamps:
            assert [w["speaker"] for w in row["words"]] == [w.speaker for w in t.words]
    assert rows[str(tmp_path / "bad.wav")]["utterances"] is None
    assert rows[str(tmp_path / "bad.wav")]["error"]


def test_cli_batch_diarize_model(tmp_path, expected):
    out = tmp_path / "out.jsonl"
    r = run_cli("batch", "-m", ASR, "--diarize-model", DIAR, _manifest(tmp_path), "-o", out, "--no-progress")
    assert r.exit_code == 0, r.output
    rows = {row["path"]: row for row in read_rows(str(out))}
    assert rows[str(CLIPS[0])]["utterances"] == [u.to_dict() for u in expected[str(CLIPS[0])].utterances]
    bad = run_cli("batch", "-m", ASR, "--diarize-model", DIAR, "-d", "ctc", _manifest(tmp_path), "-o",
                  tmp_path / "o2.jsonl", catch_exceptions=True)
    assert bad.exit_code == 2 and "--diarize-model" in bad.stderr
    with pytest.raises(InvalidArgument, match="default decoder"):
        run_batch(str(ASR), [str(_manifest(tmp_path))], str(tmp_path / "o3.jsonl"),
                  BatchOptions(decoder="ctc", diarize_model=str(DIAR)))
