#!/usr/bin/env python3
"""parakeet-server against direct in-process transcription, on the same clips in the same run.

For each client count C (default 1, 2, 4):
  direct:  a Context with concurrency C; C threads take requests from one shared list (the
           clips repeated --repeat times) and call ctx.transcribe on pre-decoded audio, as
           `parakeet-cli bench` does, without timestamps (the server's json format needs none
           and skips them too, so both do the same library work);
  server:  `python -m parakeet_cli.server --concurrency C` in a subprocess; C client threads
           (one keep-alive connection each) POST the clips' WAV files to
           /v1/audio/transcriptions over loopback (multipart, response_format json); the server
           decodes them per request. --client raw (default) sends prebuilt requests on plain
           sockets, --client httpx builds each with httpx (more client CPU on the same cores).
Both stay up side by side and get one warm-up request per backend; then --rounds passes
alternate direct, server, direct, server... so that a change in the machine's load hits both
alike. Reported: aggregate RTFx (audio seconds of a pass / the median pass wall time), p50 and
p95 latency over every request of every pass, and server/direct RTFx. The transcripts of both
paths are checked to be identical.

Usage (from the repository root, with libparakeet built):
  PARAKEET_LIBRARY=build/libparakeet/libparakeet.so PYTHONPATH=.:cli \\
    python3 bench/bench_server.py [--model M.gguf] [--clips a.wav b.wav ...] [--repeat 10]
Default model: the test fixture tests/data/nemo/hybrid_tdt_ctc/model.gguf (tiny, random
weights: requests are short, so this measures the server's per-request overhead harshly).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

ROOT = Path(__file__).resolve().parents[1]
for p in (ROOT, ROOT / "cli"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import httpx  # noqa: E402
import soundfile  # noqa: E402
from tabulate import tabulate  # noqa: E402

from parakeet_py import Context, load_audio  # noqa: E402

DEFAULT_MODEL = ROOT / "tests" / "data" / "nemo" / "hybrid_tdt_ctc" / "model.gguf"
DEFAULT_CLIPS = sorted((ROOT / "tests" / "data" / "audio").glob("*.wav"))
START_TIMEOUT_SEC = 120


def percentile(values: List[float], q: float) -> float:
    """Nearest-rank percentile (q in [0, 100])."""
    ordered = sorted(values)
    rank = max(1, int(round(q / 100 * len(ordered) + 0.5 - 1e-9)))
    return ordered[min(rank, len(ordered)) - 1]


def run_clients(pool: ThreadPoolExecutor, n_clients: int, jobs: List[int],
                request: Callable[[int, int], str]) -> Tuple[float, List[float], Dict[int, str]]:
    """``n_clients`` loops on ``pool``'s threads take job indices from ``jobs``;
    request(client, job) -> text. Returns (wall seconds, per-request latencies, text by job).

    The pool's threads live for the whole measurement: the library keeps per-thread working
    memory, and a fresh thread per pass would pay for setting it up again (a server's
    worker threads do not)."""
    lock = threading.Lock()
    queue = list(reversed(jobs))
    latencies: List[float] = []
    texts: Dict[int, str] = {}

    def loop(client: int) -> None:
        while True:
            with lock:
                if not queue:
                    return
                job = queue.pop()
            t0 = time.perf_counter()
            text = request(client, job)
            dt = time.perf_counter() - t0
            with lock:
                latencies.append(dt)
                texts[job] = text

    start = time.perf_counter()
    futures = [pool.submit(loop, c) for c in range(n_clients)]
    for future in futures:
        future.result()  # re-raises a failed request
    wall = time.perf_counter() - start
    return wall, latencies, texts


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, model: Path, concurrency: int, threads: int | None, extra: tuple = ()) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        args = [sys.executable, "-m", "parakeet_cli.server", "--model", str(model), "--port", str(self.port),
                "--concurrency", str(concurrency), "--max-queue", "1024", "--log-level", "warning"]
        if threads:
            args += ["--threads", str(threads)]
        args += list(extra)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "cli"), env.get("PYTHONPATH", "")])
        self.proc = subprocess.Popen(args, env=env, cwd=ROOT)
        deadline = time.monotonic() + START_TIMEOUT_SEC
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited with status {self.proc.returncode}")
            try:
                if httpx.get(self.url + "/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the server did not start")
            time.sleep(0.05)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def summarize(walls: List[float], latencies: List[float], audio_sec: float) -> Dict[str, Any]:
    wall = statistics.median(walls)
    return {"rtfx": audio_sec / wall, "wall_s": wall, "walls_s": walls,
            "p50_ms": 1000 * statistics.median(latencies), "p95_ms": 1000 * percentile(latencies, 95)}


class RawClient:
    """A lean HTTP/1.1 client: one keep-alive connection, requests prebuilt once per clip.

    The bench machine runs the clients too, so a heavy client takes CPU from the server it
    measures; httpx spends a few ms of CPU per MB sent. These are the same bytes httpx sends.
    """

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.pending = b""

    @staticmethod
    def build(port: int, name: str, data: bytes, model: str) -> bytes:
        request = httpx.Request("POST", f"http://127.0.0.1:{port}/v1/audio/transcriptions",
                                files={"file": (name, data, "audio/wav")}, data={"model": model})
        body = request.read()
        head = (f"POST /v1/audio/transcriptions HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                f"Content-Type: {request.headers['content-type']}\r\nContent-Length: {len(body)}\r\n\r\n")
        return head.encode() + body

    def post(self, raw: bytes) -> Tuple[int, bytes]:
        self.sock.sendall(raw)
        while b"\r\n\r\n" not in self.pending:
            self.pending += self._recv()
        head, rest = self.pending.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        length = next(int(v) for k, _, v in (ln.partition(":") for ln in lines[1:]) if k.lower() == "content-length")
        while len(rest) < length:
            rest += self._recv()
        self.pending = rest[length:]
        return status, rest[:length]

    def _recv(self) -> bytes:
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            raise ConnectionError("the server closed the connection")
        return chunk

    def close(self) -> None:
        self.sock.close()


def bench_pair(model: Path, clients: int, threads: int | None, rounds: int, audio: list,
               files: List[Tuple[str, bytes]], jobs: List[int], client_kind: str):
    """Direct and server passes, alternating, ``rounds`` times each (so that a change in the
    machine's load hits both alike). Returns (direct runs, server runs), each a list of
    (wall, latencies, texts)."""
    server = Server(model, clients, threads)
    raw_requests = [RawClient.build(server.port, name, data, model.name) for name, data in files]
    sessions: list = []

    def connect() -> None:
        # Fresh connections for each server pass: idle ones time out (uvicorn closes them
        # after 5 s) while a direct pass runs.
        for session in sessions:
            session.close()
        sessions[:] = [RawClient(server.port) if client_kind == "raw"
                       else httpx.Client(base_url=server.url, timeout=600) for _ in range(clients)]

    try:
        with Context(model, concurrency=clients, threads=threads) as ctx:
            rate = ctx.sample_rate

            def direct(c: int, j: int) -> str:
                return ctx.transcribe(audio[j % len(audio)], sample_rate=rate, timestamps=False).text

            def over_http(c: int, j: int) -> str:
                if client_kind == "raw":
                    status, body = sessions[c].post(raw_requests[j % len(files)])
                else:
                    name, data = files[j % len(files)]
                    r = sessions[c].post("/v1/audio/transcriptions", files={"file": (name, data, "audio/wav")},
                                         data={"model": model.name})
                    status, body = r.status_code, r.content
                if status != 200:
                    raise RuntimeError(f"HTTP {status}: {body[:200]!r}")
                return json.loads(body)["text"]

            connect()
            with ThreadPoolExecutor(max_workers=clients, thread_name_prefix="client") as pool:
                warm_up = list(range(clients))  # one request per backend (and connection)
                run_clients(pool, clients, warm_up, direct)
                run_clients(pool, clients, warm_up, over_http)
                runs: Tuple[list, list] = ([], [])
                for _ in range(rounds):
                    runs[0].append(run_clients(pool, clients, jobs, direct))
                    connect()
                    runs[1].append(run_clients(pool, clients, jobs, over_http))
                return runs
    finally:
        for session in sessions:
            session.close()
        server.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    ap.add_argument("--clips", type=Path, nargs="+", default=DEFAULT_CLIPS)
    ap.add_argument("--repeat", type=int, default=4, help="passes over the clips per measurement")
    ap.add_argument("--rounds", type=int, default=5, help="alternating direct/server measurements per client count")
    ap.add_argument("--clients", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--threads", type=int, default=None,
                    help="threads per backend (default: the library divides the cores among the backends)")
    ap.add_argument("--client", choices=["raw", "httpx"], default="raw",
                    help="raw: prebuilt requests on a plain keep-alive socket (least client CPU); "
                         "httpx: httpx.Client building each multipart request")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args()

    files = [(p.name, p.read_bytes()) for p in args.clips]
    audio = [load_audio(p) for p in args.clips]  # the model's rate is 16 kHz for every Parakeet
    durations = [soundfile.info(p).duration for p in args.clips]
    jobs = list(range(len(files))) * args.repeat
    audio_sec = sum(durations[j % len(files)] for j in jobs)
    print(f"model {args.model} ({args.model.stat().st_size / 1e6:.1f} MB), {len(files)} clips, "
          f"{len(jobs)} requests ({audio_sec:.1f} s of audio) per pass, {args.rounds} passes each way, "
          f"{os.cpu_count()} CPUs, {args.client} HTTP client", flush=True)

    rows, results = [], []
    for clients in args.clients:
        direct_runs, server_runs = bench_pair(args.model, clients, args.threads, args.rounds, audio, files, jobs,
                                               args.client)
        d = summarize([w for w, _, _ in direct_runs], [x for _, lat, _ in direct_runs for x in lat], audio_sec)
        s = summarize([w for w, _, _ in server_runs], [x for _, lat, _ in server_runs for x in lat], audio_sec)
        if any(texts != direct_runs[0][2] for _, _, texts in direct_runs + server_runs):
            raise SystemExit("the server's transcripts differ from direct transcription")
        ratio = s["rtfx"] / d["rtfx"]
        results.append({"clients": clients, "direct": d, "server": s, "server_over_direct": ratio})
        rows.append([clients, f"{d['rtfx']:.1f}", f"{s['rtfx']:.1f}", f"{100 * ratio:.1f}%",
                     f"{d['p50_ms']:.1f} / {d['p95_ms']:.1f}", f"{s['p50_ms']:.1f} / {s['p95_ms']:.1f}"])
        print(f"  {clients} client(s) done", flush=True)
    print()
    print(tabulate(rows, headers=["clients", "direct RTFx", "server RTFx", "server/direct",
                                  "direct p50/p95 ms", "server p50/p95 ms"], stralign="right"))
    if args.json:
        args.json.write_text(json.dumps({"model": str(args.model), "clips": [str(c) for c in args.clips],
                                         "repeat": args.repeat, "rounds": args.rounds, "client": args.client,
                                         "results": results},
                                        indent=2))


if __name__ == "__main__":
    main()
