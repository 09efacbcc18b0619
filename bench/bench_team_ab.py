#!/usr/bin/env python3
"""A/B of two libparakeet builds on one request at a time: what the thread team's dispatch costs,
on a quiet machine and with one core kept busy by another process.

    PYTHONPATH=. .venv/bin/python bench/bench_team_ab.py --lib-a build/libparakeet/libparakeet.so \\
        --lib-b ../main/build/libparakeet/libparakeet.so [--workload asr|speaker] [--speaker-model M] \\
        [--threads 2] [--rounds 6] [--calls 15] [--seconds 10] [--busy] [--model M.gguf]

Each round runs every library in its own fresh worker process, A then B (B then A the next
round), so that load changes on a shared machine hit both alike. A worker loads the model with
--threads threads, makes one untimed call, then --calls timed calls on --seconds of noise and
prints the median wall time and process CPU time (all threads) per call. Workloads: "asr", the
random-weight 110M q8_0 of parakeet_py.synthetic_model, or --model (the 0.6B of
bench/make_synthetic_bench_models.py, say), through Context.transcribe (front end, encoder,
greedy decoding); "speaker", SpeakerEncoder.embed on --speaker-model (e.g. a CAM++ GGUF, many
small passes). PARAKEET_CPU (avx2, ...) reaches the workers. --busy starts
`python3 -c 'while 1: pass'` for the whole run (stopped by its pid at the end): a neighbour that
takes one core, as a server's own Python or another process does. Reported: CPU, ISA level,
load average, per library the median over the rounds of each round's median, and B / A. A
benchmark's printout, not a test.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from bench_cacheaware import cpu_name  # noqa: E402
from benchlib import loadavg  # noqa: E402


def worker(args) -> None:
    """One library (PARAKEET_LIBRARY, set by the parent): timed calls, one JSON line out."""
    pcm = (0.1 * np.random.default_rng(0).standard_normal(int(16000 * args.seconds))).astype(np.float32)
    if args.workload == "asr":
        from parakeet_py import Context
        from parakeet_py.synthetic_model import ensure_synthetic_model

        engine = Context(args.model or ensure_synthetic_model(), threads=args.threads)
        isa = engine.info.get("isa", "?")

        def call():
            engine.transcribe(pcm, sample_rate=16000, timestamps=False)
    else:
        from parakeet_py import SpeakerEncoder

        engine = SpeakerEncoder(args.speaker_model)  # threads: PARAKEET_THREADS, set by the parent
        isa = "?"

        def call():
            engine.embed(pcm, sample_rate=16000)
    call()
    walls, cpus = [], []
    for _ in range(args.calls):
        w0, c0 = time.perf_counter(), time.process_time()
        call()
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    print(json.dumps({"wall": statistics.median(walls), "cpu": statistics.median(cpus), "isa": isa}))


def run_worker(lib: str, args) -> dict:
    env = dict(os.environ, PARAKEET_LIBRARY=lib, PARAKEET_THREADS=str(args.threads),
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    argv = [sys.executable, __file__, "--worker", "--workload", args.workload, "--threads", str(args.threads),
            "--calls", str(args.calls), "--seconds", str(args.seconds)]
    if args.speaker_model:
        argv += ["--speaker-model", args.speaker_model]
    if args.model:
        argv += ["--model", args.model]
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"worker on {lib} failed: {done.stderr.strip()[-500:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib-a", help="a libparakeet.so (required)")
    ap.add_argument("--lib-b", help="the other libparakeet.so (required)")
    ap.add_argument("--workload", choices=("asr", "speaker"), default="asr")
    ap.add_argument("--speaker-model", help="the GGUF for --workload speaker")
    ap.add_argument("--model", help="the ASR GGUF for --workload asr (default: the synthetic 110M q8_0)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--calls", type=int, default=15)
    ap.add_argument("--seconds", type=float, default=10.0, help="audio per call")
    ap.add_argument("--busy", action="store_true", help="keep one core busy with another process")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.workload == "speaker" and not args.speaker_model:
        ap.error("--workload speaker needs --speaker-model")
    if args.worker:
        worker(args)
        return 0
    if not (args.lib_a and args.lib_b):
        ap.error("--lib-a and --lib-b are required")

    libs = {"A": args.lib_a, "B": args.lib_b}
    results = {name: [] for name in libs}
    busy = subprocess.Popen([sys.executable, "-c", "while 1: pass"]) if args.busy else None
    loads = []
    try:
        for r in range(args.rounds):
            for name in (("A", "B") if r % 2 == 0 else ("B", "A")):
                loads.append(loadavg())
                results[name].append(run_worker(libs[name], args))
    finally:
        if busy is not None:
            busy.kill()
            busy.wait()
    isa = results["A"][0]["isa"]
    print(f"{cpu_name()}, {isa}; {args.workload}, {args.threads} threads, {args.seconds:g} s per call, "
          f"{args.rounds} rounds x {args.calls} calls; busy neighbour: {'yes' if args.busy else 'no'}; "
          f"load {min(loads):.1f}-{max(loads):.1f}")
    med = {name: {k: statistics.median(x[k] for x in rs) for k in ("wall", "cpu")} for name, rs in results.items()}
    for name in libs:
        walls = [x["wall"] * 1000 for x in results[name]]
        print(f"  {name} {libs[name]}: wall {med[name]['wall'] * 1000:.1f} ms (rounds {min(walls):.1f}-"
              f"{max(walls):.1f}), CPU {med[name]['cpu'] * 1000:.1f} ms")
    print(f"  B / A: wall {med['B']['wall'] / med['A']['wall']:.3f}, CPU {med['B']['cpu'] / med['A']['cpu']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
