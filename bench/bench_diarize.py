#!/usr/bin/env python3
"""Offline diarization RTFx: libparakeet against NeMo on a Sortformer of the published size.

    python3 bench/bench_diarize.py                      # 2 min of audio, 3 interleaved rounds
    python3 bench/bench_diarize.py --seconds 600 --rounds 2 --threads 2 --json out.json
    python3 bench/bench_diarize.py --seconds 600 --asr .cache/bench/600m/model-f32.gguf --no-nemo

With --asr, also "who said what" end to end: `Context.transcribe(x)` against
`Context.transcribe(x, diarizer=d)` (transcription and diarization in one library call, what
`parakeet-cli transcribe --diarize-model` runs per file), interleaved the same way, and the
overhead of diarization as their ratio. --no-nemo skips the NeMo comparison.

The model is random-weight, built once with NeMo's own class (tools/fixtures/
make_sortformer_fixtures.py's config at the size of diar_sortformer_4spk-v1: FastConformer 18 x
512 with 8 heads, transformer 18 x 192 with 8 heads and inner 768, 4 speakers), saved to
.cache/bench/sortformer/model.nemo and converted with our converter. The audio is the test
conversation (tests/data/audio/conversation_16k.wav) repeated to --seconds.

NeMo runs in a worker process (the .nemo venv; torch with --threads threads) that answers one
timed `model.forward` (its diarize()'s compute: peak scaling, mel, encoder, transformer, head;
no data loader, no post-processing) per request; ours is one `Diarizer.diarize` (the same plus
the post-processing and the JSON) in this process, on one backend of --threads threads. The two
alternate (NeMo, ours, NeMo, ours, ...) after one untimed call each; medians are reported.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import wave

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.path.join(REPO, ".cache", "bench", "sortformer")
NEMO_PYTHON = os.path.join(REPO, ".nemo", "bin", "python")
CLIP = os.path.join(REPO, "tests", "data", "audio", "conversation_16k.wav")
PUBLISHED = dict(n_layers=18, n_heads=8, conv_channels=256, ff_factor=4, tf_layers=18, tf_heads=8, tf_inner=768)


def audio(seconds: float) -> np.ndarray:
    with wave.open(CLIP, "rb") as w:
        x = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float32) / np.float32(32768.0)
    return np.ascontiguousarray(np.resize(x, int(seconds * 16000)))


def nemo_worker(threads: int, seconds: float) -> None:
    """Builds the model if needed, then answers "run" lines with one timed forward's seconds."""
    import torch
    sys.path.insert(0, os.path.join(REPO, "tools", "fixtures"))
    import make_sortformer_fixtures as F
    torch.set_num_threads(threads)
    path = os.path.join(CACHE, "model.nemo")
    spec = dict(F.MODELS["sortformer_offline"], fc_d_model=512, tf_d_model=192)
    x = audio(seconds)
    if not os.path.exists(path):
        model = F.build_sortformer(spec, x[: 30 * 16000], **PUBLISHED)
        F.save_sortformer(model, path, spec["seed"])
    from nemo.collections.asr.models import SortformerEncLabelModel
    model = SortformerEncLabelModel.restore_from(path, map_location="cpu")
    model.eval()
    sig, n = torch.from_numpy(x)[None, :], torch.tensor([x.shape[0]])
    print("@ready", flush=True)  # "@" marks the protocol's lines: NeMo logs to stdout too
    for line in sys.stdin:
        if line.strip() != "run":
            break
        with torch.no_grad():
            t0 = time.perf_counter()
            model.forward(audio_signal=sig, audio_signal_length=n)
            dt = time.perf_counter() - t0
        print(f"@{dt:.6f}", flush=True)


def reply(worker) -> str:
    """The worker's next protocol line (without its "@"); "" when it exits."""
    for line in worker.stdout:
        if line.startswith("@"):
            return line[1:].strip()
    return ""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=120.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("--asr", help="an ASR GGUF file: also time transcription alone against transcription with speakers")
    ap.add_argument("--no-nemo", action="store_true", help="skip NeMo (with --asr: only the end-to-end figures)")
    ap.add_argument("--nemo-worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.nemo_worker:
        nemo_worker(args.threads, args.seconds)
        return 0

    os.makedirs(CACHE, exist_ok=True)
    if args.no_nemo:
        if not args.asr:
            raise SystemExit("--no-nemo leaves nothing to measure without --asr")
        if not os.path.exists(os.path.join(CACHE, "model.gguf")):
            raise SystemExit("run once without --no-nemo first: it builds the model")
        return end_to_end(args, {})
    worker = subprocess.Popen([NEMO_PYTHON, os.path.abspath(__file__), "--nemo-worker", "--threads",
                               str(args.threads), "--seconds", str(args.seconds)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              env=dict(os.environ, TQDM_DISABLE="1"))
    try:
        if reply(worker) != "ready":
            raise SystemExit("the NeMo worker did not start")
        gguf = os.path.join(CACHE, "model.gguf")
        if not os.path.exists(gguf):
            sys.path.insert(0, REPO)
            from parakeet_py.convert import convert_nemo
            convert_nemo(os.path.join(CACHE, "model.nemo"), gguf)

        sys.path.insert(0, REPO)
        from parakeet_py import Diarizer
        from parakeet_py import _native
        _native.set_threads(args.threads)
        x = audio(args.seconds)
        d = Diarizer(gguf)

        def nemo_once() -> float:
            worker.stdin.write("run\n")
            worker.stdin.flush()
            return float(reply(worker))

        def ours_once() -> float:
            t0 = time.perf_counter()
            d.diarize(x, sample_rate=16000)
            return time.perf_counter() - t0

        nemo_once(), ours_once()  # untimed warm-up
        nemo, ours = [], []
        for _ in range(args.rounds):
            nemo.append(nemo_once())
            ours.append(ours_once())
    finally:
        worker.stdin.close()
        worker.wait(timeout=60)
    result = {
        "seconds_of_audio": args.seconds, "threads": args.threads, "rounds": args.rounds,
        "nemo_s": statistics.median(nemo), "ours_s": statistics.median(ours),
        "nemo_rtfx": args.seconds / statistics.median(nemo), "ours_rtfx": args.seconds / statistics.median(ours),
        "speedup": statistics.median(nemo) / statistics.median(ours), "nemo_all": nemo, "ours_all": ours,
    }
    print(f"{args.seconds:g} s of audio, {args.threads} threads, {args.rounds} rounds (medians)")
    print(f"  NeMo forward       {result['nemo_s']:8.2f} s   RTFx {result['nemo_rtfx']:7.1f}")
    print(f"  libparakeet        {result['ours_s']:8.2f} s   RTFx {result['ours_rtfx']:7.1f}")
    print(f"  ours / NeMo speed  {result['speedup']:.2f}x")
    if args.asr:
        d.close()
        return end_to_end(args, result)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
    return 0


def end_to_end(args, result: dict) -> int:
    """Transcription alone against transcription with speakers, interleaved, medians."""
    sys.path.insert(0, REPO)
    from parakeet_py import Context, Diarizer
    from parakeet_py import _native
    _native.set_threads(args.threads)
    x = audio(args.seconds)
    with Context(args.asr) as ctx, Diarizer(os.path.join(CACHE, "model.gguf")) as d:
        def timed(**kw) -> float:
            t0 = time.perf_counter()
            ctx.transcribe(x, sample_rate=16000, **kw)
            return time.perf_counter() - t0

        timed(), timed(diarizer=d)  # untimed warm-up
        alone, with_speakers = [], []
        for _ in range(args.rounds):
            alone.append(timed())
            with_speakers.append(timed(diarizer=d))
    a, w = statistics.median(alone), statistics.median(with_speakers)
    result.update({"asr": args.asr, "transcribe_s": a, "transcribe_diarize_s": w, "diarize_overhead": w / a - 1,
                   "transcribe_all": alone, "transcribe_diarize_all": with_speakers})
    print(f"{args.seconds:g} s of audio, {args.threads} threads, {args.rounds} rounds (medians), ASR {args.asr}")
    print(f"  transcribe                {a:8.2f} s   RTFx {args.seconds / a:7.1f}")
    print(f"  transcribe + diarize      {w:8.2f} s   RTFx {args.seconds / w:7.1f}   (+{100 * (w / a - 1):.0f} %)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
