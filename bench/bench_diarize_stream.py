#!/usr/bin/env python3
"""Live diarization streams: per-chunk compute at the latency presets, and how many live streams
the machine holds, on a streaming Sortformer of the published size (random weights).

    python3 bench/bench_diarize_stream.py                         # presets LOW and ULTRA_LOW
    python3 bench/bench_diarize_stream.py --seconds 90 --threads 1 --json out.json

The model is built once with NeMo's own class (tools/fixtures/make_sortformer_fixtures.py's
streaming config at the size of diar_streaming_sortformer_4spk-v2: FastConformer 17 x 512 with 8
heads and no mel normalisation, encoder_proj 512 -> 192, transformer 18 x 192 with 8 heads and
inner 768, 4 speakers), saved to .cache/bench/sortformer_stream/model.nemo and converted with our
converter. The audio is the test conversation repeated to --seconds.

A stream at each preset is fed one chunk period of audio (chunk_len x 1280 samples) per call, as a
live source delivers it, through the C ABI (cffi), on a context of --threads threads; the time of
each feed that ran exactly one chunk is that chunk's compute. A step's cost grows while the FIFO and the speaker cache fill (188 + 188 frames, 30 s),
so the figures are the steady state: the chunks after --warm seconds. A stream needs its
per-chunk compute once per chunk period (chunk_len x 80 ms), so a machine of C cores holds about
C / T x period / compute streams of T = --threads threads; --verify runs that many streams at
once on C / T backends of T threads and reports whether they kept up with real time.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import wave

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.path.join(REPO, ".cache", "bench", "sortformer_stream")
NEMO_PYTHON = os.path.join(REPO, ".nemo", "bin", "python")
VENV_PYTHON = os.path.join(REPO, ".venv", "bin", "python")
CLIP = os.path.join(REPO, "tests", "data", "audio", "conversation_16k.wav")
LIB = os.environ.get("PARAKEET_LIBRARY", os.path.join(REPO, "build", "libparakeet", "libparakeet.so"))
PUBLISHED = dict(n_layers=17, n_heads=8, conv_channels=256, ff_factor=4, tf_layers=18, tf_heads=8, tf_inner=768)
PRESETS = {"LOW": 1, "VERY_LOW": 2, "ULTRA_LOW": 3}



def audio(seconds: float) -> np.ndarray:
    with wave.open(CLIP, "rb") as w:
        x = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float32) / np.float32(32768.0)
    return np.ascontiguousarray(np.resize(x, int(seconds * 16000)))


def build_model() -> str:
    """The published-size streaming model as GGUF (built and converted on first use)."""
    gguf = os.path.join(CACHE, "model.gguf")
    if os.path.exists(gguf):
        return gguf
    os.makedirs(CACHE, exist_ok=True)
    nemo = os.path.join(CACHE, "model.nemo")
    script = (
        "import sys, os; sys.path.insert(0, os.path.join(%r, 'tools', 'fixtures'))\n"
        "import make_sortformer_fixtures as F, numpy as np, wave\n"
        "w = wave.open(%r, 'rb'); x = np.frombuffer(w.readframes(w.getnframes()), dtype='<i2')"
        ".astype(np.float32) / 32768.0\n"
        "spec = dict(F.MODELS['sortformer_stream'], fc_d_model=512, tf_d_model=192)\n"
        "m = F.build_sortformer(spec, x, **%r)\n"
        "F.save_sortformer(m, %r, spec['seed'])\n" % (REPO, CLIP, PUBLISHED, nemo))
    subprocess.run([NEMO_PYTHON, "-c", script], check=True, env=dict(os.environ, TQDM_DISABLE="1"))
    subprocess.run([VENV_PYTHON, "-m", "parakeet_py.convert", nemo, gguf, "--type", "f32"], check=True,
                   env=dict(os.environ, PYTHONPATH=REPO))
    return gguf


def open_lib():
    """The library through parakeet_py's binding (PARAKEET_LIBRARY, else the build tree's)."""
    os.environ.setdefault("PARAKEET_LIBRARY", LIB)
    sys.path.insert(0, REPO)
    from parakeet_py import _native
    return _native.load_or_raise()


def feed_all(ffi, lib, ctx, latency: int, chunk_len: int, x: np.ndarray, warm_s: float):
    """Feeds x one chunk period (chunk_len x 1280 samples) per call, as a live source delivers
    it; returns the compute per chunk of the feeds that ran exactly one chunk after warm_s."""
    s = lib.parakeet_capi_diarize_stream_begin_latency(ctx, latency)
    if s == ffi.NULL:
        raise RuntimeError(ffi.string(lib.parakeet_capi_thread_last_error()).decode())
    step = chunk_len * 1280
    out, n_out = ffi.new("parakeet_diar_segment**"), ffi.new("int*")
    times = []
    for at in range(0, len(x), step):
        piece = x[at:at + step]
        last = int(at + step >= len(x))
        before = lib.parakeet_capi_diarize_stream_time(s)
        t0 = time.perf_counter()
        rc = lib.parakeet_capi_diarize_stream_feed(s, ffi.cast("float*", piece.ctypes.data), len(piece), last, out, n_out)
        dt = time.perf_counter() - t0
        if rc != 0:
            raise RuntimeError(ffi.string(lib.parakeet_capi_thread_last_error()).decode())
        lib.parakeet_capi_free_diar_segments(out[0])
        chunks = round((lib.parakeet_capi_diarize_stream_time(s) - before) / (0.08 * chunk_len))
        if not last and chunks == 1 and at / 16000 >= warm_s:
            times.append(dt)
    lib.parakeet_capi_diarize_stream_free(s)
    return times


def verify(ffi, lib, ctx, latency: int, x: np.ndarray, n_streams: int) -> dict:
    """n_streams live streams at once, each fed in real time (one chunk per chunk period) from its
    own thread; reports the worst lag behind real time at the end of the audio."""
    lags = [0.0] * n_streams
    step = {1: 6, 2: 6, 3: 3}[latency] * 1280  # one chunk period per feed

    def run(i):
        s = lib.parakeet_capi_diarize_stream_begin_latency(ctx, latency)
        out, n_out = ffi.new("parakeet_diar_segment**"), ffi.new("int*")
        start = time.perf_counter()
        for at in range(0, len(x), step):
            due = start + at / 16000  # this piece exists at this time in a live stream
            wait = due - time.perf_counter()
            if wait > 0:
                time.sleep(wait)
            piece = x[at:at + step]
            lib.parakeet_capi_diarize_stream_feed(s, ffi.cast("float*", piece.ctypes.data), len(piece), 0, out, n_out)
            lib.parakeet_capi_free_diar_segments(out[0])
        lags[i] = time.perf_counter() - (start + len(x) / 16000)
        lib.parakeet_capi_diarize_stream_free(s)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n_streams)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"streams": n_streams, "worst_lag_s": max(lags)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=75.0)
    ap.add_argument("--warm", type=float, default=31.0, help="seconds before the FIFO and cache are full")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--presets", default="LOW,ULTRA_LOW")
    ap.add_argument("--cores", type=int, default=os.cpu_count())
    ap.add_argument("--verify", action="store_true", help="run the derived number of live streams at once")
    ap.add_argument("--json")
    args = ap.parse_args()
    gguf = build_model()
    ffi, lib = open_lib()
    ctx = lib.parakeet_capi_load_with(gguf.encode(), json.dumps({"threads": args.threads}).encode())
    if ctx == ffi.NULL:
        raise RuntimeError(ffi.string(lib.parakeet_capi_thread_last_error()).decode())
    x = audio(args.seconds)
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    result = {"cpu": cpu, "cores": args.cores, "threads": args.threads, "load": os.getloadavg(), "presets": {}}
    for name in args.presets.split(","):
        latency = PRESETS[name]
        chunk_len = {1: 6, 2: 6, 3: 3}[latency]
        times = feed_all(ffi, lib, ctx, latency, chunk_len, x, args.warm)
        period = chunk_len * 0.08
        med = statistics.median(times)
        r = {"chunk_period_s": period, "chunks_timed": len(times), "median_ms": med * 1e3,
             "p90_ms": sorted(times)[int(0.9 * (len(times) - 1))] * 1e3,
             # a stream of --threads threads occupies cores/threads of the machine's cores
             "streams_per_machine": int(args.cores / args.threads * period / med)}
        print(f"{name}: {len(times)} steady-state chunks, per-chunk compute median {r['median_ms']:.1f} ms "
              f"(p90 {r['p90_ms']:.1f}) on {args.threads} thread(s); chunk period {period * 1e3:.0f} ms -> "
              f"about {r['streams_per_machine']} live streams on {args.cores} cores", flush=True)
        if args.verify:
            n = max(1, r["streams_per_machine"])
            lib.parakeet_capi_set_concurrency(ctx, max(1, args.cores // args.threads), args.threads)
            r["verify"] = verify(ffi, lib, ctx, latency, x, n)
            print(f"  {n} streams at once: worst lag behind real time {r['verify']['worst_lag_s']:.2f} s", flush=True)
            lib.parakeet_capi_set_concurrency(ctx, 1, args.threads)
        result["presets"][name] = r
    print(f"CPU: {cpu}; load average {result['load']}")
    lib.parakeet_capi_free(ctx)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
