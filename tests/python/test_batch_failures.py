"""The local batch job under failures that used to lose, duplicate or hide rows: a decoder
thread's MemoryError, a dead decoder, a WAV cut short, a corrupt line in the output on resume,
error rows retried with --retry-errors, and the Parquet finish (fsync, rename, fsync of the
folder, then the journal removed; a temporary name of its own)."""

import json
import os
import struct
from pathlib import Path

import pytest

from batch_helpers import CLIPS, MODEL, write_corpus
from parakeet_py import Context, InternalError, InvalidAudio
from parakeet_py.batch import BatchOptions, read_rows, run_batch
from parakeet_py.batch import output as batch_output
from parakeet_py.batch import prefetch

pytestmark = pytest.mark.skipif(not MODEL.exists(), reason=f"{MODEL} has not been generated")

OPTIONS = BatchOptions(concurrency=2, threads=1)


def _run(manifest: Path, out: Path, **kwargs):
    return run_batch(str(MODEL), [str(manifest)], str(out), OPTIONS, **kwargs)


def _wav(promised_seconds: float, data: bytes) -> bytes:
    """A 16 kHz mono 16-bit WAV whose header promises ``promised_seconds``, holding ``data``."""
    promised = int(promised_seconds * 32000)
    fmt = struct.pack("<HHIIHH", 1, 1, 16000, 32000, 2, 16)
    return (b"RIFF" + struct.pack("<I", 36 + promised) + b"WAVE" + b"fmt " + struct.pack("<I", 16) + fmt +
            b"data" + struct.pack("<I", promised) + data)


def test_a_decoder_memory_error_is_that_files_error_row(tmp_path, monkeypatch):
    manifest = write_corpus(tmp_path)
    real = prefetch.prepare_audio
    bomb = str(CLIPS[0])

    def prepare(path, **kwargs):  # a FLAC whose header claims 2^36 samples fails like this
        if path == bomb:
            raise MemoryError("Unable to allocate 256. GiB for an array")
        return real(path, **kwargs)

    monkeypatch.setattr(prefetch, "prepare_audio", prepare)
    out = tmp_path / "out.jsonl"
    stats = _run(manifest, out)
    rows = {r["id"]: r for r in read_rows(str(out))}
    assert stats.done == stats.total == len(rows) == len(CLIPS) + 2
    assert "MemoryError" in rows["c000"]["error"] and rows["c000"]["error"].startswith(bomb)


class _DecoderDeath(BaseException):
    """Escapes every `except Exception`, as a bug in the decoder loop would."""


def test_a_dead_decoder_fails_the_job_instead_of_dropping_rows(tmp_path, monkeypatch):
    manifest = write_corpus(tmp_path)

    def prepare(path, **kwargs):
        raise _DecoderDeath()

    monkeypatch.setattr(prefetch, "prepare_audio", prepare)
    with pytest.raises(InternalError, match="decoder thread died.*rows of"):
        run_batch(str(MODEL), [str(manifest)], str(tmp_path / "out.jsonl"), BatchOptions(decoders=1))


def test_a_truncated_wav_is_an_error_everywhere(tmp_path):
    cut = tmp_path / "cut.wav"
    cut.write_bytes(_wav(10.0, b"\x01\x00" * 8))  # promises 10 s, holds 16 bytes
    message = r"truncated WAV: the header promises 10.000 s of audio \(320000 bytes\), the file holds 0.001 s \(16"
    with Context(MODEL) as ctx:
        with pytest.raises(InvalidAudio, match=message):
            ctx.transcribe(str(cut))
    manifest = tmp_path / "m.jsonl"
    manifest.write_text(json.dumps({"id": "cut", "path": str(cut)}) + "\n")
    _run(manifest, tmp_path / "out.jsonl")
    (row,) = read_rows(str(tmp_path / "out.jsonl"))
    assert row["text"] is None and "truncated WAV" in row["error"]
    # Writers that stream leave the size unknown (0xFFFFFFFF): what is there is read.
    streamed = tmp_path / "streamed.wav"
    streamed.write_bytes(_wav(0, b"\x01\x00" * 1600)[:40] + struct.pack("<I", 0xFFFFFFFF) + b"\x01\x00" * 1600)
    with Context(MODEL) as ctx:
        assert ctx.transcribe(str(streamed)).duration == pytest.approx(0.1)


def test_resume_drops_a_corrupt_line_and_redoes_its_file(tmp_path, capsys):
    manifest = write_corpus(tmp_path)
    out = tmp_path / "out.jsonl"
    _run(manifest, out)
    lines = out.read_text().splitlines(keepends=True)
    lines[1] = '{"id": "c001", "text": \x00garbage\n'  # a bad sector in the middle
    out.write_text("".join(lines))
    stats = _run(manifest, out, resume=True)
    assert (stats.total, stats.skipped) == (1, len(lines) - 1)
    assert stats.dropped_lines == 1
    rows = read_rows(str(out))
    assert len({r["id"] for r in rows}) == len(rows) == len(lines)
    assert {r["id"]: r for r in rows}["c001"]["text"] is not None


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_retry_errors_redoes_only_the_error_rows(tmp_path, suffix):
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    manifest = write_corpus(tmp_path)
    out = tmp_path / f"out{suffix}"
    first = _run(manifest, out)
    assert first.errors == 2
    (tmp_path / "not_audio.wav").write_bytes(CLIPS[0].read_bytes())  # the bad file is fixed
    again = _run(manifest, out, resume=True, retry_errors=True)
    assert (again.total, again.errors) == (2, 1)  # "missing" is still missing
    rows = read_rows(str(out))
    assert len(rows) == len({r["id"] for r in rows}) == len(CLIPS) + 2
    assert {r["id"]: r["error"] is None for r in rows}["bad"]
    plain = _run(manifest, out, resume=True)
    assert plain.total == 0  # without --retry-errors an error row counts as done


def test_the_parquet_finish_is_durable_and_its_temporary_name_its_own(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow")
    manifest = write_corpus(tmp_path)
    out = tmp_path / "out.parquet"
    (tmp_path / "out.parquet.tmp").mkdir()  # a stale fixed-name temporary that used to collide
    events = []
    real_fsync, real_replace, real_remove = os.fsync, os.replace, os.remove

    def fsync(fd):
        events.append(("fsync", os.path.realpath(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    def replace(a, b):
        events.append(("replace", str(b)))
        real_replace(a, b)

    def remove(p):
        events.append(("remove", str(p)))
        real_remove(p)

    monkeypatch.setattr(batch_output.os, "fsync", fsync)
    monkeypatch.setattr(batch_output.os, "replace", replace)
    monkeypatch.setattr(batch_output.os, "remove", remove)
    _run(manifest, out)
    assert len(read_rows(str(out))) == len(CLIPS) + 2
    finish = events[events.index(("replace", str(out))) - 1:]
    assert finish[0][0] == "fsync" and finish[0][1].startswith(str(out) + ".") and finish[0][1] != str(out) + ".tmp"
    assert finish[1:] == [("replace", str(out)), ("fsync", str(tmp_path)), ("remove", str(out) + ".journal.jsonl")]
