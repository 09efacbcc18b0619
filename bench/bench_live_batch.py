#!/usr/bin/env python3
"""Live streams through the server's stream group: how many realtime sessions keep up with
--max-batch 1 (no batching) and with batching.

    PARAKEET_LIBRARY=build/libparakeet/libparakeet.so .venv/bin/python bench/bench_live_batch.py \\
        --streams 16,32,64,96 [--seconds 20] [--batches 1,32] [--batch-wait-ms 20] \\
        [--model 120m-streaming | --model 600m-streaming --att-context 70,1 | --model 110m --window 10,2,2]
        [--json out.json] [--vad] [--py-spy PATH]

A real ``parakeet-server`` on loopback (2 backends x 1 thread; no VAD but with --vad: manual
commits) serving a random-weight q8_0 model of parakeet_py.synthetic_model (written to the
synthetic model cache on first use): a cache-aware one (the 120M by default; the server's
--att-context sets its chunks, of (R + 1) x 80 ms: 160 ms for both models' 70,1), or an offline one
streamed with buffered windows (``--window`` left,chunk,right seconds, the server's
--realtime-window; the 110M one by default 10-2-2). N clients, on one event loop, each open a
realtime session and send one chunk of 24 kHz PCM16 (160 ms; a buffered window's chunk, 2 s)
every chunk period (the model's chunk), paced by the wall clock, their starts spread over one period. After each
append a client sends an event the server does not know: the server handles a session's events
in order, so its error answer comes once the append's audio has been fed and its text (if any)
sent. A chunk's latency is the wall time from the moment its last sample was due to that answer:
an upper bound of "chunk due -> its text final" beyond the chunk's own latency (the chunk, and a
buffered window's right context, must have been spoken first; random weights emit almost no text
to time directly). A buffered stream's first appends, which complete no window, are not counted.
N streams keep up when the p95 is <= 100 ms. Prints a table (with the server's CPU time per timed
chunk and per audio second per stream: steadier than the latencies on a shared machine), the
CPU, its ISA level and the load average; --json writes them all.

--vad: the server keeps its default VAD, so every session runs server_vad turn detection (each its
own Silero VAD stream), and the clients send speech (bench_realtime_vad.py's recording: the
speech fixture with 1-2.5 s pauses) instead of noise; the ASR runs on the turns only. --py-spy
PATH: the py-spy binary; it samples the server during each run, and the table gives the share of
its busy samples in the VAD (SpeechTurns.feed) and in the ASR streams' feeds
(bench/server_profile.py). py-spy takes a runnable thread for a running one, so on a loaded
machine read those shares as a cross-check of the CPU times, not as CPU times.
"""

import argparse
import asyncio
import base64
import json
import math
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Tuple

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from bench_cacheaware import cpu_name  # noqa: E402
from bench_realtime_vad import pcm24, recording  # noqa: E402
from bench_server import Server  # noqa: E402
from parakeet_py import Context  # noqa: E402
from parakeet_py.synthetic_model import ARCHS, ensure_synthetic_model  # noqa: E402
from server_profile import Profile, cpu_seconds  # noqa: E402

RATE = 24000
KEEPS_UP_P95_SEC = 0.100


@dataclass
class Pacing:
    """What a client sends: ``chunk_sec`` appends, the first ``uncounted`` of them not timed."""

    chunk_sec: float
    uncounted: int = 0

    @staticmethod
    def of(window: Optional[Tuple[float, float, float]], cache_aware_chunk_sec: float) -> "Pacing":
        """A cache-aware model's chunks (window None), or a buffered window's: its first window
        runs once more than chunk + right seconds have come."""
        if window is None:
            return Pacing(cache_aware_chunk_sec)
        _, chunk, right = window
        return Pacing(chunk, math.ceil((chunk + right) / chunk - 1e-9))


async def session(url: str, seconds: float, start: float, pacing: Pacing, lat: list, lags: list,
                  speech: Optional[bytes]) -> None:
    """One client: chunk appends at 1x from wall time ``start``, each followed by a ping; noise,
    or ``speech`` (PCM16 bytes, as long as the run) when given."""
    from websockets.asyncio.client import connect

    rng = np.random.default_rng(int(start * 1e6) % 2**32)
    step = int(pacing.chunk_sec * RATE)
    due = {}
    async with connect(url.replace("http://", "ws://") + "/v1/realtime?intent=transcription", open_timeout=120,
                       max_size=None) as ws:
        assert json.loads(await ws.recv())["type"] == "session.created"

        async def receive() -> None:
            async for message in ws:
                event = json.loads(message)
                ping = event.get("error", {}).get("event_id") if event["type"] == "error" else None
                if ping is None:
                    continue
                due_at = due.pop(ping)
                if int(ping[1:]) >= pacing.uncounted:
                    lat.append(time.perf_counter() - due_at)

        reader = asyncio.create_task(receive())
        for k in range(int(seconds / pacing.chunk_sec)):
            due_at = start + (k + 1) * pacing.chunk_sec  # the chunk's last sample is due
            await asyncio.sleep(max(0.0, due_at - time.perf_counter()))
            lags.append(time.perf_counter() - due_at)
            pcm = (rng.normal(0, 3000, step)).astype("<i2").tobytes() if speech is None else \
                speech[2 * k * step:2 * (k + 1) * step]
            due[f"p{k}"] = due_at
            await ws.send(json.dumps({"type": "input_audio_buffer.append", "audio": base64.b64encode(pcm).decode()}))
            await ws.send(json.dumps({"type": "bench.ping", "event_id": f"p{k}"}))
        deadline = time.perf_counter() + 30
        while due and time.perf_counter() < deadline:
            await asyncio.sleep(0.05)
        reader.cancel()


async def run(url: str, n: int, seconds: float, pacing: Pacing, speech: Optional[bytes]) -> dict:
    start = time.perf_counter() + 2.0
    lat, lags = [], []
    await asyncio.gather(*(session(url, seconds, start + pacing.chunk_sec * k / n, pacing, lat, lags, speech)
                           for k in range(n)))
    expected = n * max(0, int(seconds / pacing.chunk_sec) - pacing.uncounted)
    row = {"streams": n, "chunks": len(lat), "chunks_expected": expected, "send_lag_max_ms": 1e3 * max(lags)}
    if lat:
        row.update({f"p{q}_ms": float(np.percentile(lat, q)) * 1e3 for q in (50, 95, 99)})
    row["keeps_up"] = len(lat) == expected and row.get("p95_ms", 1e9) <= KEEPS_UP_P95_SEC * 1e3
    return row


def metrics_line(url: str) -> dict:
    """The group's batch counters from /metrics (absent with --max-batch 1)."""
    import httpx
    from prometheus_client.parser import text_string_to_metric_families

    out = {}
    answer = httpx.get(url + "/metrics", timeout=10).raise_for_status()
    for family in text_string_to_metric_families(answer.text):
        for s in family.samples:
            if s.name in ("parakeet_stream_batch_size_sum", "parakeet_stream_batch_size_count",
                          "parakeet_stream_batch_wait_seconds_sum", "parakeet_stream_batch_wait_max_seconds"):
                out[s.name] = s.value
    return out


def share(samples: dict) -> str:
    """The VAD's and the ASR's share of py-spy's busy samples."""
    total = sum(samples.values())
    return f"{100 * samples['vad'] / total:.1f} % / {100 * samples['asr'] / total:.1f} %" if total else "-"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--streams", default="16,32,64,96")
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--batches", default="1,32", help="--max-batch values to compare (1: no batching)")
    ap.add_argument("--batch-wait-ms", type=int, default=20)
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--model", default="120m-streaming", choices=list(ARCHS))
    ap.add_argument("--window", default="10,2,2", help="an offline model's realtime window: left,chunk,right seconds")
    ap.add_argument("--att-context", default="70,1", help="a cache-aware model's attention context L,R (its chunks)")
    ap.add_argument("--vad", action="store_true", help="server_vad sessions on speech (see the docstring)")
    ap.add_argument("--py-spy", help="the py-spy binary: profile the server (see the docstring)")
    ap.add_argument("--json")
    args = ap.parse_args()
    speech = pcm24(recording(args.seconds)) if args.vad else None
    model = ensure_synthetic_model(ARCHS[args.model], "q8_0",
                                   on_generate=lambda p: print(f"writing {p} ...", file=sys.stderr))
    with Context(str(model)) as ctx:
        isa = ctx.info.get("isa", "?")
        streaming = ctx.info["streaming"]
    cache_aware = streaming["mode"] == "cache_aware"
    window = None if cache_aware else tuple(float(v) for v in args.window.split(","))
    att_context = tuple(int(v) for v in args.att_context.split(",")) if cache_aware else None
    chunk_ms = next((c["chunk_ms"] for c in streaming.get("contexts", []) if (c["left"], c["right"]) == att_context),
                    None)
    if cache_aware and chunk_ms is None:
        sys.exit(f"--att-context {args.att_context}: not one of the model's contexts {streaming['contexts']}")
    pacing = Pacing.of(window, (chunk_ms or 0) / 1000)
    doc = {"cpu": cpu_name(), "isa": isa, "model": str(model), "window": window, "att_context": att_context,
           "concurrency": args.concurrency,
           "threads": args.threads, "batch_wait_ms": args.batch_wait_ms, "seconds": args.seconds, "vad": args.vad,
           "load_before": os.getloadavg(), "rows": []}
    how = (f"cache-aware {att_context[0]},{att_context[1]} ({chunk_ms:g} ms chunks)" if window is None
           else "buffered " + "-".join(f"{v:g}" for v in window))
    print(f"{doc['cpu']}, {isa}; {args.model} {how}; {args.concurrency} backends x {args.threads} thread; "
          f"load {doc['load_before'][0]:.1f}")
    print("| streams | max batch | chunks | p50 ms | p95 ms | p99 ms | mean batch | mean batch wait ms | keeps up "
          "| server CPU ms per chunk | server CPU ms per audio s per stream | load | VAD / ASR share of samples |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |")
    for n in (int(v) for v in args.streams.split(",")):
        for max_batch in (int(v) for v in args.batches.split(",")):
            server = Server(model, args.concurrency, args.threads, extra=(
                *(() if args.vad else ("--vad-model", "none")), "--client-share", "1", "--max-streams", str(n),
                "--max-connections-per-client", str(n + 8), "--max-batch", str(max_batch),
                "--batch-wait-ms", str(args.batch_wait_ms),
                *(("--att-context", args.att_context) if window is None else
                  ("--realtime-window", ",".join(f"{v:g}" for v in window)))))
            try:
                cpu_before = cpu_seconds(server.proc.pid)
                profile = args.py_spy and Profile(args.py_spy, server.proc.pid,
                                                  Path(tempfile.gettempdir()) / f"live-batch-{n}-{max_batch}.txt")
                row = asyncio.run(run(server.url, n, args.seconds, pacing, speech))
                samples = profile.stop() if profile else {}
                cpu = cpu_seconds(server.proc.pid) - cpu_before
                answered = max(1, row["chunks"])
                row.update(max_batch=max_batch, load=os.getloadavg()[0], samples=samples, server_cpu_s=cpu,
                           cpu_ms_per_chunk=1e3 * cpu / answered,
                           # per second of the audio it answered (all of it, unless it fell far behind)
                           server_cpu_ms_per_audio_s=1e3 * cpu / answered / pacing.chunk_sec,
                           **metrics_line(server.url))
            finally:
                server.stop()
            batches = row.get("parakeet_stream_batch_size_count", 0)
            chunks = row.get("parakeet_stream_batch_size_sum", 0)
            mean = f"{chunks / batches:.1f}" if batches else "1"
            wait = f"{1e3 * row['parakeet_stream_batch_wait_seconds_sum'] / chunks:.1f}" if chunks else "-"
            print(f"| {n} | {max_batch} | {row['chunks']}/{row['chunks_expected']} | {row.get('p50_ms', 0):.0f} | "
                  f"{row.get('p95_ms', 0):.0f} | {row.get('p99_ms', 0):.0f} | {mean} | {wait} | "
                  f"{'yes' if row['keeps_up'] else 'no'} | {row['cpu_ms_per_chunk']:.1f} | "
                  f"{row['server_cpu_ms_per_audio_s']:.1f} | {row['load']:.1f} | {share(samples)} |", flush=True)
            doc["rows"].append(row)
    doc["load_after"] = os.getloadavg()
    print(f"load average before {doc['load_before'][0]:.1f}, after {doc['load_after'][0]:.1f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
