"""parakeet.cpp's own Python package (PyPI parakeet-cpp-cuda 0.2.2) on our library against the
same package on its bundled library: `Model.transcribe_pcm` on a 10 s clip, one interleaved
run, the same thread count, each in its own process.

    bash bench/setup_parakeet_cpp.sh      # the package in .cache/pcpp/venv, CUDA stubs
    .venv/bin/python bench/bench_pcpp_package.py --lib build-bench/libparakeet/libparakeet.so

Ours gets its threads from PARAKEET_THREADS, theirs from pk::set_num_threads (exported by their
library, no C wrapper). A pause before each timed call (--settle) keeps one engine's spinning
threads from stealing the next one's cores.
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

PCPP = os.path.join(bl.REPO, ".cache", "pcpp")


def worker(args):
    proto = bl.claim_stdout()
    import ctypes

    import parakeet  # the package: PARAKEET_LIBRARY (ours) or its bundled library
    from parakeet import _ffi

    if args.engine == "theirs":
        ctypes.CDLL(_ffi.lib._name)._ZN2pk15set_num_threadsEi(args.threads)
    model = parakeet.Model(args.model)
    audio, rate = bl.read_wav(args.clip), 16000

    def run():
        time.sleep(args.settle)
        t0 = time.perf_counter()
        text = model.transcribe_pcm(audio, rate)
        return {"ms": (time.perf_counter() - t0) * 1e3, "chars": len(text)}

    def ready():
        for _ in range(2):
            model.transcribe_pcm(audio, rate)
        return {"lib": _ffi.lib._name, "abi": parakeet.abi_version()}

    bl.serve(proto, {"ready": ready, "run": run, "quit": lambda: {}})


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", default=bl.DEFAULT_LIB, help="our libparakeet.so")
    ap.add_argument("--model", default=os.path.join(bl.CACHE, "110m", "model-q8_0.gguf"))
    ap.add_argument("--clip", default=os.path.join(bl.CACHE, "clips", "clip_10s.wav"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--settle", type=float, default=0.5)
    ap.add_argument("--python", default=os.path.join(PCPP, "venv", "bin", "python"))
    ap.add_argument("--json", help="write the results here too")
    ap.add_argument("--worker", choices=("ours", "theirs"), dest="engine")
    args = ap.parse_args()
    if args.engine:
        return worker(args)

    env = dict(os.environ)
    env.pop("PARAKEET_LIBRARY", None)
    workers = {}
    for engine in ("ours", "theirs"):
        e = dict(env, PARAKEET_THREADS=str(args.threads), OMP_NUM_THREADS=str(args.threads))
        if engine == "ours":
            e["PARAKEET_LIBRARY"] = os.path.abspath(bl.library_path(args.lib))
        else:
            stub = os.path.join(PCPP, "stub")
            e["LD_LIBRARY_PATH"] = stub + (":" + e["LD_LIBRARY_PATH"] if e.get("LD_LIBRARY_PATH") else "")
        argv = [args.python, os.path.abspath(__file__), "--worker", engine, "--model", args.model, "--clip",
                args.clip, "--threads", str(args.threads), "--settle", str(args.settle)]
        workers[engine] = bl.Worker(engine, argv, env=e)
    info = {name: w.call("ready") for name, w in workers.items()}
    if info["ours"]["lib"] != os.path.abspath(bl.library_path(args.lib)):
        sys.exit(f"the package did not load our library: {info['ours']['lib']}")
    times = {name: [] for name in workers}
    for _ in range(args.rounds):
        for name, w in workers.items():
            times[name].append(w.call("run")["ms"])
    for w in workers.values():
        w.close()

    audio_sec = len(bl.read_wav(args.clip)) / 16000
    med = {name: bl.median(ts) for name, ts in times.items()}
    rows = [[name, info[name]["lib"], info[name]["abi"], f"{med[name]:.1f}", f"{audio_sec * 1e3 / med[name]:.1f}"]
            for name in workers]
    print(bl.table(["package on", "library", "abi", "median ms", "RTFx"], rows))
    per_round = sorted(t / o for o, t in zip(times["ours"], times["theirs"]))
    print(f"\nours / theirs RTFx: {med['theirs'] / med['ours']:.2f} (median of per-round ratios "
          f"{per_round[len(per_round) // 2]:.2f}), {args.rounds} rounds, {args.threads} threads, "
          f"{os.path.basename(args.model)}, {audio_sec:.1f} s clip")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"times_ms": times, "info": info, "threads": args.threads, "model": args.model}, f, indent=1)


if __name__ == "__main__":
    main()
