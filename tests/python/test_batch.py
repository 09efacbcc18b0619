"""The local batch job and `parakeet-cli batch`: rows equal Context.transcribe file by file,
bad files become error rows, a SIGKILLed run is completed by --resume with every id once."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from click.testing import CliRunner

from batch_helpers import AUDIO, CLIPS, MODEL, ROOT, check_rows, write_corpus
from parakeet_cli.main import cli
from parakeet_py import _native
from parakeet_py.batch import BatchOptions, ManifestError, OutputError, read_inputs, read_rows, run_batch
from parakeet_py.batch.manifest import Entry
from parakeet_py.batch.prefetch import Prefetcher

pytestmark = pytest.mark.skipif(not MODEL.exists(), reason=f"{MODEL} has not been generated")


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
@pytest.mark.parametrize("timestamps", [False, True])
def test_rows_equal_context_transcribe_and_bad_files_are_error_rows(tmp_path, suffix, timestamps):
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    manifest = write_corpus(tmp_path, copies=2)
    out = tmp_path / f"out{suffix}"
    stats = run_batch(str(MODEL), [str(manifest)], str(out),
                      BatchOptions(concurrency=2, threads=1, timestamps=timestamps, prefetch=2))
    assert (stats.done, stats.errors, stats.skipped) == (2 * len(CLIPS) + 2, 2, 0)
    check_rows(read_rows(str(out)), manifest, timestamps)
    assert not Path(str(out) + ".journal.jsonl").exists()


def test_inputs_directory_glob_and_list_name_the_same_files(tmp_path):
    listing = tmp_path / "files.txt"
    listing.write_text("# test clips\n" + "".join(f"{p}\n" for p in CLIPS) + "\n")
    by_dir = read_inputs([str(AUDIO)])
    assert [e.path for e in by_dir] == [str(p) for p in CLIPS]
    assert read_inputs([str(AUDIO / "*.wav")]) == by_dir == read_inputs([str(listing)])
    with pytest.raises(ManifestError, match="duplicate id"):
        read_inputs([str(AUDIO), str(listing)])
    with pytest.raises(ManifestError, match="no such file"):
        read_inputs([str(tmp_path / "absent")])


def test_prefetch_holds_at_most_its_bound_and_lets_a_big_clip_through():
    entries = [Entry(id=str(i), path=str(i)) for i in range(20)]
    high = []

    def fake_decode(entry, rate):  # a real Prefetcher around a stand-in decoder: only the bound is tested
        return entry, np.zeros(1000 if entry.id != "7" else 10**6, np.float32), None

    with Prefetcher(entries, 16000, decoders=3, max_items=4, max_bytes=50_000, decode_fn=fake_decode) as p:
        got = []
        for item in p:
            high.append(p.buffered)
            got.append(item[0].id)
            time.sleep(0.002)
    assert got == [e.id for e in entries]
    assert max(n for n, _ in high) <= 4 - 1  # one was just taken out
    assert all(b <= 50_000 or b - 4 * 10**6 <= 50_000 for _, b in high)  # the 4 MB clip beside the bound only


def test_prefetch_hands_out_in_input_order_when_decodes_finish_out_of_order():
    entries = [Entry(id=str(i), path=str(i)) for i in range(8)]
    later_done = threading.Event()
    decoded = []

    def decode_first_last(entry, rate):  # the first entry's decode ends after the next five
        if entry.id == "0":
            assert later_done.wait(30), "the other decoders never got past entry 0"
        decoded.append(entry.id)
        if len(decoded) >= 5:
            later_done.set()
        return entry, np.zeros(10, np.float32), None

    with Prefetcher(entries, 16000, decoders=3, max_items=8, decode_fn=decode_first_last) as p:
        got = [item[0].id for item in p]
    assert decoded.index("0") >= 5
    assert got == [e.id for e in entries]


def test_plain_job_writes_rows_in_input_order_when_the_first_file_decodes_last(tmp_path):
    # A minute of 44.1 kHz stereo FLAC takes ~100x longer to decode and resample than the
    # short WAVs after it, so the other decoder thread has them all ready first.
    slow = tmp_path / "slow.flac"
    noise = np.random.default_rng(0).standard_normal((44100 * 60, 2)).astype(np.float32) * 0.1
    sf.write(str(slow), noise, 44100)
    paths = [slow] + [CLIPS[i % len(CLIPS)] for i in range(12)]
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text("".join(json.dumps({"id": f"r{i:02d}", "path": str(p)}) + "\n" for i, p in enumerate(paths)))
    out = tmp_path / "out.jsonl"
    run_batch(str(MODEL), [str(manifest)], str(out), BatchOptions(concurrency=1, threads=1, decoders=2))
    rows = read_rows(str(out))
    assert [r["id"] for r in rows] == [f"r{i:02d}" for i in range(len(paths))]
    assert all(r["error"] is None for r in rows)


def _cli(*args):
    try:
        runner = CliRunner(mix_stderr=False)
    except TypeError:
        runner = CliRunner()
    result = runner.invoke(cli, [str(a) for a in args], catch_exceptions=False)
    _native.set_threads(0)
    return result


def test_cli_batch_writes_a_summary_and_refuses_to_clobber(tmp_path):
    manifest = write_corpus(tmp_path)
    out = tmp_path / "out.jsonl"
    result = _cli("batch", "-m", MODEL, manifest, "-o", out, "-c", 2, "-t", 1, "--no-progress")
    assert result.exit_code == 0, result.output
    assert f"{len(CLIPS) + 2} files (2 errors)" in result.stderr and "RTFx" in result.stderr
    check_rows(read_rows(str(out)), manifest, timestamps=False)
    again = _cli("batch", "-m", MODEL, manifest, "-o", out, "--no-progress")
    assert again.exit_code == 1 and "--resume" in again.stderr
    resumed = _cli("batch", "-m", MODEL, manifest, "-o", out, "--resume", "--no-progress")
    assert resumed.exit_code == 0 and f"0 files (0 errors, {len(CLIPS) + 2} already done)" in resumed.stderr
    assert "batch" in _cli("--help").output


def _line_count(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_sigkill_mid_run_then_resume_completes_with_every_id_once(tmp_path, suffix):
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    manifest = write_corpus(tmp_path, copies=120)  # 722 rows: a few seconds of work
    total = len(manifest.read_text().splitlines())
    out = tmp_path / f"out{suffix}"
    journal = out if suffix == ".jsonl" else Path(str(out) + ".journal.jsonl")
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'cli'}"}
    command = [sys.executable, "-m", "parakeet_cli.main", "batch", "-m", str(MODEL), str(manifest), "-o", str(out),
               "-c", "2", "-t", "1", "--no-progress"]
    child = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while _line_count(journal) < 40 and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    written = _line_count(journal)
    assert 40 <= written < total, "the kill must land mid-run"
    assert not out.exists() or suffix == ".jsonl"  # a Parquet output appears only when the job ends
    with open(journal, "ab") as f:
        f.write(b'{"id": "c0')  # a line torn by the crash: resume must drop it
    done = subprocess.run(command + ["--resume"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "already done" in done.stderr
    rows = read_rows(str(out))
    assert len(rows) == total
    check_rows(rows, manifest, timestamps=False)


def test_output_extension_is_checked_before_any_work(tmp_path):
    with pytest.raises(OutputError, match=".jsonl or .parquet"):
        run_batch(str(MODEL), [str(AUDIO)], str(tmp_path / "out.csv"))
