#!/usr/bin/env python3
"""Concurrent uploads through the server's request batching: throughput and latency of N
clients each sending uploads back to back, with --upload-batch 1 (no batching) and with batching.

    PARAKEET_LIBRARY=build/libparakeet/libparakeet.so .venv/bin/python bench/bench_upload_batch.py \\
        [--clients 32] [--seconds 3] [--requests 3] [--batches 1,16] [--batch-wait-ms 20] [--isa avx2] \\
        [--direct] [--json out.json]

A real ``parakeet-server`` on loopback (one backend of --threads threads) serving the
random-weight 110M q8_0 model of parakeet_py.synthetic_model (written to the synthetic model
cache on first use). Each client (one keep-alive connection, bench_server.RawClient) posts
--requests WAV uploads of --seconds of noise, one after the other, all clients at once; every
server gets one warm-up upload first. Reported per --upload-batch value: requests per second,
audio seconds per wall second (RTFx), p50 and p95 latency (upload sent -> response read), the
CPU time the server process (--direct: this process) spent per request, which a shared
machine's other work disturbs less than the wall time, the batch sizes the server's /metrics
counted, the CPU, its ISA level and the load average. The
transcripts of every mode are checked to be identical. Random weights emit almost no tokens, so
this times the front end and the encoder (what batching changes), not the decoder.

--direct measures the library alone instead (client threads calling Context.transcribe on the
decoded audio, request batching set as the server sets it): what the batching itself gains,
without the server's pipeline (with batching, the server's K x N workers also overlap decoding
uploads with the compute).
"""

import argparse
import io
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import numpy as np
import soundfile
from tabulate import tabulate

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from bench_cacheaware import cpu_name  # noqa: E402
from bench_server import RawClient, Server, percentile, run_clients  # noqa: E402
from parakeet_py import Context  # noqa: E402
from parakeet_py.synthetic_model import ARCH_110M, ensure_synthetic_model  # noqa: E402

RATE = 16000


def wav_of(seconds: float, seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    buf = io.BytesIO()
    soundfile.write(buf, (0.1 * rng.standard_normal(int(seconds * RATE))).astype(np.float32), RATE, format="WAV",
                    subtype="PCM_16")
    return buf.getvalue()


def batch_metrics(url: str) -> dict:
    """The upload batches /metrics counted: {size bucket: batches}, batches, uploads."""
    from prometheus_client.parser import text_string_to_metric_families

    out = {"buckets": {}, "batches": 0.0, "uploads": 0.0}
    for family in text_string_to_metric_families(httpx.get(url + "/metrics", timeout=10).text):
        for s in family.samples:
            if s.name == "parakeet_upload_batch_size_bucket":
                out["buckets"][s.labels["le"]] = s.value
            elif s.name == "parakeet_upload_batch_size_count":
                out["batches"] = s.value
            elif s.name == "parakeet_upload_batch_size_sum":
                out["uploads"] = s.value
    return out


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process `pid` so far, all its threads (/proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_direct(model: Path, upload_batch: int, args, wavs: list) -> dict:
    """The library alone: N threads calling Context.transcribe on decoded audio (no HTTP, no
    upload decoding), request batching set as the server sets it."""
    audio = [soundfile.read(io.BytesIO(w), dtype="float32")[0] for w in wavs]
    with Context(model, threads=args.threads, isa=args.isa) as ctx:
        if upload_batch > 1:
            ctx.set_request_batching(upload_batch, args.batch_wait_ms)

        def request(client: int, job: int) -> str:
            return ctx.transcribe(audio[job % len(audio)], sample_rate=RATE, timestamps=False).text

        with ThreadPoolExecutor(max_workers=args.clients, thread_name_prefix="client") as pool:
            run_clients(pool, 1, [0], request)  # warm-up
            load = os.getloadavg()[0]
            cpu0 = process_cpu_seconds(os.getpid())
            wall, latencies, texts = run_clients(pool, args.clients, list(range(args.clients * args.requests)),
                                                 request)
            cpu = process_cpu_seconds(os.getpid()) - cpu0
        stats = ctx.request_batching_stats()
    batches = stats["batches"]
    return summary(upload_batch, args, wall, cpu, latencies, texts, load,
                   sum((i + 1) * n for i, n in enumerate(stats["batch_sizes"])) / batches if batches else 1.0)


def summary(upload_batch: int, args, wall: float, cpu: float, latencies: list, texts: dict, load: float,
            mean_batch: float) -> dict:
    n = len(latencies)
    return {"upload_batch": upload_batch, "requests": n, "wall_s": wall, "req_per_s": n / wall,
            "cpu_ms_per_req": 1000 * cpu / n, "rtfx": n * args.seconds / wall,
            "p50_ms": 1000 * percentile(latencies, 50),
            "p95_ms": 1000 * percentile(latencies, 95), "load": load, "mean_batch": mean_batch,
            "texts": [texts[j] for j in sorted(texts)]}


def run_mode(model: Path, upload_batch: int, args, wavs: list) -> dict:
    extra = ("--upload-batch", str(upload_batch), "--batch-wait-ms", str(args.batch_wait_ms), "--client-share", "1",
             *(("--isa", args.isa) if args.isa else ()))
    server = Server(model, 1, args.threads, extra)
    try:
        raw = [RawClient.build(server.port, f"u{i}.wav", w, model.name) for i, w in enumerate(wavs)]
        sessions = [RawClient(server.port) for _ in range(args.clients)]

        def request(client: int, job: int) -> str:
            status, body = sessions[client].post(raw[job % len(raw)])
            if status != 200:
                raise RuntimeError(f"HTTP {status}: {body[:200]!r}")
            return json.loads(body)["text"]

        with ThreadPoolExecutor(max_workers=args.clients, thread_name_prefix="client") as pool:
            run_clients(pool, 1, [0], request)  # warm-up
            load = os.getloadavg()[0]
            jobs = list(range(args.clients * args.requests))
            cpu0 = process_cpu_seconds(server.proc.pid)
            wall, latencies, texts = run_clients(pool, args.clients, jobs, request)
            cpu = process_cpu_seconds(server.proc.pid) - cpu0
        for s in sessions:
            s.close()
        metrics = batch_metrics(server.url)
    finally:
        server.stop()
    return summary(upload_batch, args, wall, cpu, latencies, texts, load,
                   metrics["uploads"] / metrics["batches"] if metrics["batches"] else 1.0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=3.0, help="audio per upload")
    ap.add_argument("--requests", type=int, default=3, help="uploads per client")
    ap.add_argument("--batches", default="1,16", help="--upload-batch values to compare")
    ap.add_argument("--batch-wait-ms", type=int, default=20)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="threads of the one backend")
    ap.add_argument("--isa", help="the server's kernel level (default: the CPU's highest)")
    ap.add_argument("--direct", action="store_true",
                    help="the library alone (threads calling Context.transcribe), no server")
    ap.add_argument("--json")
    args = ap.parse_args()
    model = ensure_synthetic_model(ARCH_110M, "q8_0")
    with Context(model, isa=args.isa) as ctx:
        isa = ctx.info.get("isa", "?")
    wavs = [wav_of(args.seconds, seed) for seed in range(8)]
    doc = {"cpu": cpu_name(), "isa": isa, "model": str(model), "clients": args.clients, "seconds": args.seconds,
           "threads": args.threads, "date": time.strftime("%Y-%m-%d"), "load_before": os.getloadavg(), "rows": []}
    print(f"{doc['cpu']}, {isa}; 1 backend x {args.threads} threads; {args.clients} clients x {args.requests} "
          f"{'requests (in process)' if args.direct else 'uploads'} of {args.seconds:g} s; "
          f"load {doc['load_before'][0]:.1f}", flush=True)
    doc["direct"] = args.direct
    for b in (int(v) for v in args.batches.split(",")):
        doc["rows"].append((run_direct if args.direct else run_mode)(model, b, args, wavs))
        print(f"  --upload-batch {b}: {doc['rows'][-1]['req_per_s']:.2f} req/s", flush=True)
    if any(r["texts"] != doc["rows"][0]["texts"] for r in doc["rows"]):
        raise SystemExit("the transcripts differ between modes")
    base = doc["rows"][0]
    print(tabulate([[r["upload_batch"], f"{r['req_per_s']:.2f}", f"{r['rtfx']:.1f}", f"{r['p50_ms']:.0f}",
                     f"{r['p95_ms']:.0f}", f"{r['cpu_ms_per_req']:.1f}", f"{r['mean_batch']:.1f}",
                     f"{r['req_per_s'] / base['req_per_s']:.2f}x", f"{base['cpu_ms_per_req'] / r['cpu_ms_per_req']:.2f}x",
                     f"{r['load']:.1f}"] for r in doc["rows"]],
                   headers=["--upload-batch", "req/s", "RTFx", "p50 ms", "p95 ms", "CPU ms/req", "mean batch",
                            "throughput", "CPU gain", "load"]))
    doc["load_after"] = os.getloadavg()
    if args.json:
        for r in doc["rows"]:
            del r["texts"]
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
