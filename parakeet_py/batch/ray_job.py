"""The batch job on Ray Data: a Dataset of ``path`` (+ ``id``, other columns) rows → transcript rows.

Shape (one actor per node holding one model with K backends; no scheduler of our own):

    ds = ray.data.read_parquet("manifest.parquet")
    out = transcribe_dataset(ds, "/shared/model.gguf", concurrency=K, actors=N_NODES, num_cpus=CORES - 1)
    out.write_parquet("transcripts/")

* :class:`ParakeetUDF` is the ``map_batches`` callable class: each actor loads the model once
  (``Context(concurrency=K)``), and ``max_concurrent_calls_per_actor=K`` with true
  multi-threading lets K batches run on it at once. Within a call the batch's files are
  decoded on the actor's decoding threads, then transcribed in one call of the library's
  batched pass (:mod:`..batch_call`: each file bitwise as alone, with its own error).
* A file that fails is a row with its ``error``, never a failed task: a failed task would be
  retried, and once retries run out Ray drops the whole block (``max_errored_blocks``).
  A native crash kills the actor; Ray restarts it and retries the batch without bound (Ray
  Data's default for actor pools; its ``map_batches`` names no parameter for it, and the
  ``**ray_remote_args`` that took one go away in Ray 2.64). So the UDF counts each batch's
  starts in a small actor (:class:`_BatchStarts`) and, past ``max_task_retries`` retries,
  answers the batch with error rows instead of running it again.
* The model is a path every node sees, or a URI pyarrow opens (``s3://``, ``gs://``,
  ``hdfs://``, ``file://``), copied once per node into ``$PARAKEET_CACHE/models``.
* :func:`run_ray_job` is ``parakeet-cli batch --ray``: manifest → Ray → a directory of Parquet
  or JSONL part files, resumable by skipping the ids already written.

Only this module imports Ray.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Set, Tuple, Union

import pyarrow as pa

from ..batch_call import transcribe_decoded, window_size
from ..context import Context
from ..transcript import Attention, Transcript
from .local_job import BatchOptions
from .manifest import PATH_COLUMNS, Entry, ManifestError, entry_from_row, read_inputs, row_id
from .output import OutputError, durable_replace, output_format, unique_tmp
from .prefetch import decode
from .rows import arrow_schema, decoder_label, error_message, exception_message, make_row, model_id

MODEL_CACHE = os.path.join(os.environ.get("PARAKEET_CACHE", os.path.expanduser("~/.cache/parakeet")), "models")


def local_model(model: str, cache: str = MODEL_CACHE) -> str:
    """A local path for ``model``: itself when it is a path, else a copy of the URI's file made
    once per machine (under a lock, written to a temporary name and renamed)."""
    if "://" not in model:
        return model
    from pyarrow import fs

    filesystem, remote = fs.FileSystem.from_uri(model)
    key = hashlib.sha256(model.encode("utf-8")).hexdigest()[:16]
    target = os.path.join(cache, key, os.path.basename(remote))
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # other actors on this machine wait for the one copy
        if not os.path.exists(target):
            tmp = f"{target}.{os.getpid()}.tmp"
            fs.copy_files(remote, tmp, source_filesystem=filesystem, destination_filesystem=fs.LocalFileSystem())
            os.replace(tmp, target)
    return target


def _assigned_cpus() -> Optional[float]:
    try:
        import ray

        return ray.get_runtime_context().get_assigned_resources().get("CPU")
    except Exception:  # not inside a Ray worker
        return None


class _BatchStarts:
    """How many times each batch (by its rows' ids) was started, for every actor of a job: a
    batch started again was retried after its actor died."""

    def __init__(self) -> None:
        self._starts: Dict[str, int] = {}

    def start(self, key: str) -> int:
        self._starts[key] = self._starts.get(key, 0) + 1
        return self._starts[key]


def _batch_starts() -> Any:
    """A new :class:`_BatchStarts` actor (no CPU reserved: it only counts)."""
    import ray

    return ray.remote(num_cpus=0)(_BatchStarts).remote()


class ParakeetUDF:
    """``map_batches`` callable class: pyarrow batches of manifest rows → transcript rows.
    ``starts`` (a :class:`_BatchStarts` actor) and ``max_task_retries`` bound the retries of a
    batch whose actor died."""

    def __init__(self, model: str, concurrency: int = 1, threads: Optional[int] = None,
                 decoder: Optional[str] = None, timestamps: bool = False, attention: Optional[Attention] = None,
                 base_dir: Optional[str] = None, starts: Any = None, max_task_retries: int = 3) -> None:
        self.starts, self.max_task_retries = starts, max_task_retries
        path = local_model(model)
        if threads is None:  # the CPUs Ray gave this actor, shared among the K backends
            cpus = _assigned_cpus()
            threads = max(1, int(cpus) // concurrency) if cpus else None
        self.ctx = Context(path, concurrency=concurrency, threads=threads, attention=attention)
        self.decoder_name, self.decoder_label = decoder, decoder_label(self.ctx.info, decoder)
        self.model = model_id(self.ctx.model_path)
        self.timestamps = timestamps
        self.base = Path(base_dir) if base_dir else None
        # Decodes a batch's next files while its current one is transcribed (K calls at once).
        self._decode = ThreadPoolExecutor(max(1, concurrency), thread_name_prefix="parakeet-decode")

    def _entry(self, index: int, row: Dict[str, Any]) -> Tuple[Entry, Optional[str]]:
        try:
            return entry_from_row(row, self.base, f"row {index}"), None
        except ManifestError as e:
            extra = {k: v for k, v in row.items() if k not in ("id",) + PATH_COLUMNS}
            return Entry(id=str(row.get("id")), path="", extra=extra), str(e)

    def _rows(self, decoded: List[Tuple[Entry, Any, Optional[str]]]) -> List[Dict[str, Any]]:
        """The rows of a call's decoded entries: the good ones transcribed in batch calls of a
        window each (:func:`...batch_call.transcribe_decoded`; each file with the result or the
        error of its own call)."""
        rows = []
        for entry, result in transcribe_decoded(self.ctx, decoded, decoder=self.decoder_name,
                                                timestamps=self.timestamps):
            if isinstance(result, Transcript):
                transcript, error = result, None
            else:  # the decoder's message, or the exception of the file's own call: its row, never the task's
                transcript, error = None, result if isinstance(result, str) else exception_message(entry.path, result)
            rows.append(make_row(entry, transcript, error, decoder=self.decoder_label, model=self.model,
                                 timestamps=self.timestamps))
        return rows

    def _retries_exhausted(self, entries: List[Tuple[Entry, Optional[str]]]) -> bool:
        if self.starts is None:
            return False
        import ray

        key = hashlib.sha256("\0".join(e.id for e, _ in entries).encode("utf-8")).hexdigest()
        return ray.get(self.starts.start.remote(key)) > self.max_task_retries + 1

    def __call__(self, batch: pa.Table) -> pa.Table:
        rows = batch.to_pylist()
        entries = [self._entry(i, row) for i, row in enumerate(rows)]
        if self._retries_exhausted(entries):
            crashed = (f"not transcribed: a worker died on this batch {self.max_task_retries + 1} times "
                       "(max_task_retries); one of its files may crash the library")
            entries = [(e, err or error_message(e.path, crashed)) for e, err in entries]
        decoded = [self._decode.submit(decode, e, self.ctx.sample_rate) if err is None else None
                   for e, err in entries]
        out = self._rows([(entry, None, err) if future is None else future.result()
                          for (entry, err), future in zip(entries, decoded)])
        passthrough = pa.schema([f for f in batch.schema if f.name not in ("id",) + PATH_COLUMNS])
        return pa.Table.from_pylist(out, schema=arrow_schema(self.timestamps, passthrough))


def transcribe_dataset(ds: Any, model: str, *, concurrency: int = 1, threads: Optional[int] = None,
                       decoder: Optional[str] = None, timestamps: bool = False,
                       attention: Optional[Attention] = None, actors: Union[int, Tuple[int, int]] = 1,
                       num_cpus: float = 1.0, batch_size: Optional[int] = None, max_task_retries: int = 3,
                       base_dir: Optional[str] = None) -> Any:
    """``ds`` (rows with ``path`` or ``audio_filepath``, optional ``id``, other columns passed
    through) transcribed: a lazy Ray Dataset with the rows of :mod:`.rows`.

    ``actors``: how many actors (an int, or ``(min, max)`` to autoscale), each holding one
    model with ``concurrency`` K backends of ``threads`` threads (default: the actor's
    ``num_cpus`` divided by K). ``num_cpus``: the CPUs each actor reserves; leave at least one
    CPU of the cluster to Ray's read and write tasks or the job can stall (ray-project/ray#44687).
    ``batch_size``: rows per call; None: the local job's window (:func:`..batch_call.window_size`),
    one full batch of the library's batched pass for each backend (the library splits a call's
    clips over every backend, so fewer rows give each a part batch; a crash retries a call whole).
    ``max_task_retries``: retries of a batch whose actor died; after them its rows are errors.
    ``base_dir``: relative paths are relative to it.
    """
    import ray.data

    size = {"size": actors} if isinstance(actors, int) else {"min_size": actors[0], "max_size": actors[1]}
    return ds.map_batches(
        ParakeetUDF, batch_size=batch_size or window_size(concurrency), batch_format="pyarrow",
        fn_constructor_kwargs={"model": model, "concurrency": concurrency, "threads": threads, "decoder": decoder,
                               "timestamps": timestamps, "attention": attention, "base_dir": base_dir,
                               "starts": _batch_starts(), "max_task_retries": max_task_retries},
        compute=ray.data.ActorPoolStrategy(**size, max_concurrent_calls_per_actor=concurrency,
                                           enable_true_multi_threading=concurrency > 1),
        num_cpus=num_cpus)


def _drop_done(batch: pa.Table, done: Set[str], base: Optional[str]) -> pa.Table:
    """The rows of ``batch`` whose ids are not in ``done``; a row's id is the one the UDF gives it
    (a row without an ``id`` takes its path resolved against the manifest's folder)."""
    columns = [c for c in ("id",) + PATH_COLUMNS if c in batch.column_names]
    folder = Path(base) if base else None
    keep = [row_id(row, folder) not in done for row in batch.select(columns).to_pylist()]
    return batch.filter(pa.array(keep, pa.bool_()))


def written_ids(directory: str, retry_errors: bool = False) -> Set[str]:
    """The ids in a Ray job's output directory. A part file that cannot be read (a writer
    killed mid-file) is renamed to ``*.incomplete`` so its rows are done again. With
    ``retry_errors`` the error rows are removed from their part files (rewritten whole, then
    renamed into place) and their ids left out, so they are done again."""
    import pyarrow.json as pj
    import pyarrow.parquet as pq

    ids: Set[str] = set()
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if not name.endswith((".parquet", ".json", ".jsonl")):
            continue
        try:
            table = pq.read_table(path) if name.endswith(".parquet") else pj.read_json(path)
        except (pa.ArrowException, OSError):
            os.replace(path, path + ".incomplete")
            continue
        if retry_errors and table.column("error").null_count != table.num_rows:
            table = table.filter(table.column("error").is_null())
            _rewrite_part(path, table)
        ids.update(str(v) for v in table.column("id").to_pylist())
    return ids


def _rewrite_part(path: str, table: pa.Table) -> None:
    import pyarrow.parquet as pq

    tmp = unique_tmp(path)
    if path.endswith(".parquet"):
        pq.write_table(table, tmp)
    else:
        with open(tmp, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(row, ensure_ascii=False, default=str) + "\n" for row in table.to_pylist())
    durable_replace(tmp, path)


def _read_manifest(inputs: List[str]) -> Tuple[Any, Optional[str]]:
    """The inputs as a Ray Dataset: one Parquet/JSONL manifest is read by Ray itself (its
    relative paths resolve against its folder); anything else is listed here first."""
    import ray.data

    if len(inputs) == 1 and os.path.isfile(inputs[0]):
        lower = inputs[0].lower()
        if lower.endswith(".parquet"):
            return ray.data.read_parquet(inputs[0]), os.path.dirname(os.path.abspath(inputs[0]))
        if lower.endswith((".jsonl", ".json")):
            return ray.data.read_json(inputs[0], lines=True), os.path.dirname(os.path.abspath(inputs[0]))
    entries = read_inputs(inputs)
    return ray.data.from_items([{"id": e.id, "path": e.path, **e.extra} for e in entries]), None


# Ray's switch between a cluster's node (listeners on the machine's network address) and a
# single machine (every listener on 127.0.0.1). Ray reads it when it is imported.
_RAY_CLUSTER_VAR = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


def ray_init(address: Optional[str], network: bool = False) -> None:
    """Join ``address`` (or ``$RAY_ADDRESS``), or start Ray in this process when neither is given.
    A Ray started here keeps every listener on 127.0.0.1 unless ``network`` (or the user's own
    ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=1``) opens it to the network: a job on one machine must
    not expose ports by default."""
    joining = bool(address or os.environ.get("RAY_ADDRESS"))
    if not joining:
        os.environ.setdefault(_RAY_CLUSTER_VAR, "1" if network else "0")
    import ray

    if ray.is_initialized():
        return
    if joining:
        ray.init(address=address or None, log_to_driver=False)
        return
    loopback = os.environ[_RAY_CLUSTER_VAR] == "0"
    if loopback:
        # Ray imported before the variable was set has read it already: tell it again.
        from ray._private import ray_constants

        ray_constants.ENABLE_RAY_CLUSTER = False
    ray.init(include_dashboard=False, log_to_driver=False, _node_ip_address="127.0.0.1" if loopback else None)


def run_ray_job(model: str, inputs: Iterable[str], output: str, options: Optional[BatchOptions] = None, *,
                address: Optional[str] = None, actors: Union[int, Tuple[int, int]] = 1, num_cpus: float = 1.0,
                batch_size: Optional[int] = None, resume: bool = False, overwrite: bool = False,
                retry_errors: bool = False, network: bool = False) -> Dict[str, Any]:
    """``parakeet-cli batch --ray``: ``output`` (ending .parquet or .jsonl) becomes a directory of
    part files. Returns a summary: rows written this run, errors, audio seconds, wall seconds.
    ``retry_errors`` with ``resume`` does the error rows again; ``network`` lets a Ray started
    here (no ``address``) listen on the network (see :func:`ray_init`)."""
    options = options or BatchOptions()
    fmt = output_format(output)
    if os.path.exists(output) and not os.path.isdir(output):
        raise OutputError(f"{output} exists and is not a directory (a Ray job writes a directory of part files)")
    if os.path.isdir(output) and os.listdir(output) and not resume:
        if not overwrite:
            raise OutputError(f"{output} exists: pass --resume to continue the job, or --overwrite")
        shutil.rmtree(output)
    ray_init(address, network)
    started = time.perf_counter()
    ds, base = _read_manifest(list(inputs))
    if resume and os.path.isdir(output):
        done = written_ids(output, retry_errors)
        if done:
            ds = ds.map_batches(_drop_done, fn_kwargs={"done": done, "base": base}, batch_format="pyarrow")
    out = transcribe_dataset(ds, model, concurrency=options.concurrency, threads=options.threads,
                             decoder=options.decoder, timestamps=options.timestamps, attention=options.attention,
                             actors=actors, num_cpus=num_cpus, batch_size=batch_size, base_dir=base)
    before = set(os.listdir(output)) if os.path.isdir(output) else set()
    if fmt == "parquet":
        out.write_parquet(output)
    else:
        out.write_json(output)
    wall = time.perf_counter() - started
    new = [os.path.join(output, f) for f in sorted(set(os.listdir(output)) - before)]
    return {"rows": 0, "errors": 0, "audio_seconds": 0.0, **_summarise(new), "wall_seconds": wall}


def _summarise(files: List[str]) -> Dict[str, Any]:
    import pyarrow.json as pj
    import pyarrow.parquet as pq

    rows = errors = 0
    audio = 0.0
    for f in files:
        t = pq.read_table(f, columns=["duration", "error"]) if f.endswith(".parquet") else pj.read_json(f)
        rows += t.num_rows
        errors += t.num_rows - t.column("error").null_count
        audio += sum(d for d in t.column("duration").to_pylist() if d is not None)
    return {"rows": rows, "errors": errors, "audio_seconds": audio}
