"""The batch job on Ray Data, in-process Ray with a few CPUs: results equal the local batch,
the model can come from a URI, resume skips what is written, an actor killed mid-job is
retried with no row lost or duplicated, and a batch retried past max_task_retries gives error
rows. Ray's deprecation of ray_remote_args is an error here (the job must name its parameters)."""

import importlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # keeps every Ray listener on 127.0.0.1
# CI installs Ray (the test extra) and must run these tests: there a missing Ray is an error, not a skip.
ray = importlib.import_module("ray") if os.environ.get("CI") else pytest.importorskip("ray")

from batch_helpers import CLIPS, MODEL, ROOT, check_rows, write_corpus  # noqa: E402
from parakeet_py.batch import BatchOptions, read_inputs, read_rows, run_batch, transcribe_dataset  # noqa: E402
from parakeet_py.batch.ray_job import run_ray_job  # noqa: E402
from parakeet_py.batch_call import BATCH  # noqa: E402

pytestmark = [
    pytest.mark.skipif(not MODEL.exists(), reason=f"{MODEL} has not been generated"),
    # ray_remote_args (map_batches' **kwargs) go away in Ray 2.64: the job names its parameters.
    pytest.mark.filterwarnings("error:.*ray_remote_args:ray.util.annotations.RayDeprecationWarning"),
]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    cache = tmp_path_factory.mktemp("model-cache")
    # 4 logical CPUs on 2 cores: actors at 1 CPU each always leave one for reads and writes.
    ray.init(num_cpus=4, object_store_memory=200 * 2**20, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PARAKEET_CACHE": str(cache)}})
    try:
        yield cache
    finally:
        ray.shutdown()


def _without_order(rows):
    return sorted(rows, key=lambda r: r["id"])


def test_ray_job_equals_local_batch(cluster, tmp_path):
    manifest = write_corpus(tmp_path)
    local = tmp_path / "local.parquet"
    run_batch(str(MODEL), [str(manifest)], str(local), BatchOptions(concurrency=2, threads=1, timestamps=True))
    out = tmp_path / "ray.parquet"
    summary = run_ray_job(str(MODEL), [str(manifest)], str(out), BatchOptions(concurrency=2, threads=1,
                                                                              timestamps=True), batch_size=3)
    assert (summary["rows"], summary["errors"]) == (len(CLIPS) + 2, 2)
    assert out.is_dir()
    assert _without_order(read_rows(str(out))) == _without_order(read_rows(str(local)))
    check_rows(read_rows(str(out)), manifest, timestamps=True)


def test_transcribe_dataset_with_a_model_uri_and_jsonl_out(cluster, tmp_path):
    manifest = write_corpus(tmp_path)
    entries = read_inputs([str(manifest)])
    ds = ray.data.from_items([{"id": e.id, "path": e.path, **e.extra} for e in entries])
    out = tmp_path / "out.jsonl"
    transcribe_dataset(ds, MODEL.as_uri(), batch_size=4).write_json(str(out))
    check_rows(read_rows(str(out)), manifest, timestamps=False)
    copies = list(Path(cluster).rglob("model.gguf"))  # fetched once into this machine's cache
    assert len(copies) == 1 and copies[0].read_bytes() == MODEL.read_bytes()


class _PlanOnly:
    """A dataset that records what map_batches is asked (transcribe_dataset's one call on it)."""

    def map_batches(self, fn, **options):
        self.batch_size = options["batch_size"]
        return self


def test_a_call_fills_every_backend_by_default(cluster):  # the call creates its retry-count actor
    # The library splits a call's clips over every backend: a call of fewer than one window
    # (BATCH per backend) runs part batches. Read from the call transcribe_dataset makes: nothing
    # is executed (and nothing of Ray's private plan is read).
    for concurrency in (1, 3):
        plan = transcribe_dataset(_PlanOnly(), str(MODEL), concurrency=concurrency)
        assert plan.batch_size == BATCH * concurrency
    assert transcribe_dataset(_PlanOnly(), str(MODEL), concurrency=3, batch_size=5).batch_size == 5


def test_resume_transcribes_only_the_missing_ids(cluster, tmp_path):
    manifest = write_corpus(tmp_path)
    lines = manifest.read_text().splitlines()
    half = tmp_path / "half.jsonl"
    half.write_text("\n".join(lines[::2]) + "\n")
    out = tmp_path / "out.parquet"
    first = run_ray_job(str(MODEL), [str(half)], str(out), batch_size=2)
    second = run_ray_job(str(MODEL), [str(manifest)], str(out), batch_size=2, resume=True)
    assert first["rows"] + second["rows"] == len(lines)
    assert second["rows"] == len(lines) - len(lines[::2])
    check_rows(read_rows(str(out)), manifest, timestamps=False)


def _udf_pids():
    """Pids of Ray's actor processes running the parakeet UDF (Ray names them in their title)."""
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"MapBatches(ParakeetUDF)" in f.read():
                    pids.append(int(pid))
        except OSError:  # gone meanwhile, or not a process (/proc/dma...)
            pass
    return pids


def test_an_actor_killed_mid_job_is_retried_without_losing_or_duplicating_rows(cluster, tmp_path):
    manifest = write_corpus(tmp_path, copies=60)  # 362 rows in 91 batches
    total = len(manifest.read_text().splitlines())
    out = tmp_path / "out.parquet"
    entries = read_inputs([str(manifest)])
    ds = ray.data.from_items([{"id": e.id, "path": e.path, **e.extra} for e in entries], override_num_blocks=40)
    failure = []

    def job():
        try:
            transcribe_dataset(ds, str(MODEL), batch_size=4, max_task_retries=3).write_parquet(str(out))
        except BaseException as e:  # reported by the test thread
            failure.append(e)

    runner = threading.Thread(target=job)
    runner.start()
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and not (out.is_dir() and os.listdir(out) and _udf_pids()):
        time.sleep(0.02)  # until the actor has written a first block
    victims = _udf_pids()
    assert victims and runner.is_alive(), "the kill must land mid-job"
    for pid in victims:
        os.kill(pid, signal.SIGKILL)
    runner.join(timeout=150)
    assert not runner.is_alive() and not failure, failure
    assert all(pid not in _udf_pids() for pid in victims)
    rows = read_rows(str(out))
    assert len(rows) == total
    check_rows(rows, manifest, timestamps=False)


def test_a_batch_started_past_max_task_retries_is_answered_with_error_rows(cluster):
    """Ray Data retries a batch whose actor died without bound; the UDF counts the batch's
    starts (a batch started again is such a retry) and stops after max_task_retries of them.
    The UDF is called here as an actor calls it, the same batch three times."""
    import pyarrow as pa

    from parakeet_py.batch.ray_job import ParakeetUDF, _batch_starts

    udf = ParakeetUDF(str(MODEL), starts=_batch_starts(), max_task_retries=1)
    batch = pa.Table.from_pylist([{"id": f"c{i}", "path": str(clip)} for i, clip in enumerate(CLIPS[:2])])
    first, retry, past = (udf(batch).to_pylist() for _ in range(3))
    assert retry == first and all(r["error"] is None and r["text"] for r in first)
    assert [r["id"] for r in past] == ["c0", "c1"]
    for row, clip in zip(past, CLIPS):
        assert row["text"] is None
        assert row["error"] == f"{clip}: not transcribed: a worker died on this batch 2 times (max_task_retries); " \
                               "one of its files may crash the library"
    other = pa.Table.from_pylist([{"id": "c2", "path": str(CLIPS[2])}])  # counted apart
    assert udf(other).to_pylist()[0]["error"] is None


def test_resume_of_a_relative_manifest_without_ids_redoes_nothing(cluster, tmp_path):
    # Ids are the paths resolved against the manifest's folder; resume compared them with the
    # raw relative paths, so every row was done (and written) again.
    for i, clip in enumerate(CLIPS):
        (tmp_path / f"clip{i}.wav").write_bytes(clip.read_bytes())
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text("".join(f'{{"path": "clip{i}.wav"}}\n' for i in range(len(CLIPS))))
    out = tmp_path / "out.jsonl"
    first = run_ray_job(str(MODEL), [str(manifest)], str(out), batch_size=2)
    second = run_ray_job(str(MODEL), [str(manifest)], str(out), batch_size=2, resume=True)
    assert (first["rows"], second["rows"]) == (len(CLIPS), 0)
    assert len(read_rows(str(out))) == len(CLIPS)


def test_retry_errors_on_ray_replaces_the_error_rows(cluster, tmp_path):
    manifest = write_corpus(tmp_path)
    out = tmp_path / "out.parquet"
    assert run_ray_job(str(MODEL), [str(manifest)], str(out), batch_size=3)["errors"] == 2
    (tmp_path / "not_audio.wav").write_bytes(CLIPS[0].read_bytes())  # the bad file is fixed
    again = run_ray_job(str(MODEL), [str(manifest)], str(out), batch_size=3, resume=True, retry_errors=True)
    assert (again["rows"], again["errors"]) == (2, 1)
    rows = read_rows(str(out))
    assert len(rows) == len({r["id"] for r in rows}) == len(CLIPS) + 2


def test_a_ray_started_here_listens_only_on_loopback(tmp_path):
    # In a fresh process, without the variable the other tests set: what `batch --ray` starts.
    env = {k: v for k, v in os.environ.items() if k != "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "cli"), str(Path(__file__).parent)])
    done = subprocess.run([sys.executable, str(Path(__file__).parent / "listening_sockets.py")], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found, "Ray started no listener?"
    assert all(address == "127.0.0.1" for address, _ in found), found
