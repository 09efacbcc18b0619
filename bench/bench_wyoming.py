#!/usr/bin/env python3
"""``parakeet-cli wyoming`` under Home Assistant's load: C clients speak at once, in real time.

Two services run side by side on the same model and --concurrency: one with live text (the
default) and one with --no-streaming. For each client count C, --rounds passes alternate
between them (live, final-only, live, ...); in a pass C clients each send --seconds of speech
(the fixture clip, repeated) as 16 kHz 16-bit mono chunks of 1024 frames, paced at real time as
a microphone sends them, then audio-stop. Reported: p50 / p95 of the time from audio-stop to
the transcript (what a person waits for), and, with live text, the transcript-chunks that
arrived before audio-stop per utterance.

Usage (from the repository root, with libparakeet built):
  PARAKEET_LIBRARY=build/libparakeet/libparakeet.so PYTHONPATH=.:cli:tests/python \\
    python3 bench/bench_wyoming.py [--model M.gguf] [--clients 1,4,8] [--seconds 5] [--rounds 3] [-c 2]
Default model: the synthetic 110M hybrid TDT-CTC (q8_0, random weights: the cost of the real
model of that shape; `parakeet-cli bench` makes it once).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import List, Tuple

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "cli"), str(ROOT / "tests" / "python")]

import numpy as np  # noqa: E402
import soundfile  # noqa: E402
from tabulate import tabulate  # noqa: E402
from wyoming.asr import Transcribe  # noqa: E402
from wyoming.audio import AudioChunk, AudioStart, AudioStop  # noqa: E402

from parakeet_py.synthetic_model import ensure_synthetic_model  # noqa: E402
from wyoming_helpers import FRAMES_PER_CHUNK, WyomingProcess, read  # noqa: E402

RATE = 16000


async def speak(srv: WyomingProcess, pcm: bytes) -> Tuple[float, int]:
    """One utterance at real time: (seconds from audio-stop to the transcript, live chunks before audio-stop)."""
    async with srv.client() as client:
        live = 0
        stopped = asyncio.Event()

        async def listen() -> float:
            nonlocal live
            while True:
                event = await read(client)
                if event.type == "transcript-chunk" and not stopped.is_set():
                    live += 1
                if event.type == "transcript":
                    return time.perf_counter()

        listener = asyncio.create_task(listen())
        await client.write_event(Transcribe().event())
        await client.write_event(AudioStart(rate=RATE, width=2, channels=1).event())
        begin, step = time.perf_counter(), FRAMES_PER_CHUNK * 2
        for i, offset in enumerate(range(0, len(pcm), step)):
            await asyncio.sleep(max(0.0, begin + i * FRAMES_PER_CHUNK / RATE - time.perf_counter()))
            chunk = AudioChunk(rate=RATE, width=2, channels=1, audio=pcm[offset:offset + step])
            await client.write_event(chunk.event())
        await client.write_event(AudioStop().event())
        stop = time.perf_counter()
        stopped.set()
        return await listener - stop, live


async def one_pass(srv: WyomingProcess, pcm: bytes, clients: int) -> List[Tuple[float, int]]:
    return list(await asyncio.gather(*(speak(srv, pcm) for _ in range(clients))))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, default=None)
    ap.add_argument("--clients", default="1,4,8")
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("-c", "--concurrency", type=int, default=2)
    args = ap.parse_args()
    model = args.model or ensure_synthetic_model()
    speech = soundfile.read(ROOT / "tests" / "data" / "audio" / "speech_16k.wav", dtype="int16")[0]
    pcm = np.resize(speech, int(args.seconds * RATE)).tobytes()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        live_dir, final_dir = Path(tmp, "live"), Path(tmp, "final")
        live_dir.mkdir(), final_dir.mkdir()
        common = ["-c", str(args.concurrency)]
        with WyomingProcess(common, live_dir, model=model) as live, \
                WyomingProcess(common + ["--no-streaming"], final_dir, model=model) as final:
            for srv in (live, final):  # warm-up
                asyncio.run(one_pass(srv, pcm[:RATE * 2], args.concurrency))
            for clients in (int(c) for c in args.clients.split(",")):
                results = {"live": [], "final only": []}
                for _ in range(args.rounds):
                    for name, srv in (("live", live), ("final only", final)):
                        results[name] += asyncio.run(one_pass(srv, pcm, clients))
                for name, got in results.items():
                    waits = sorted(w for w, _ in got)
                    rows.append([clients, name, f"{statistics.median(waits) * 1000:.0f}",
                                 f"{waits[max(0, int(round(0.95 * len(waits))) - 1)] * 1000:.0f}",
                                 f"{statistics.mean(n for _, n in got):.1f}" if name == "live" else ""])
    print(f"model {Path(model).name}, -c {args.concurrency}, {args.seconds:g} s utterances at real time, "
          f"{args.rounds} rounds")
    print(tabulate(rows, headers=["clients", "mode", "stop->transcript p50 ms", "p95 ms", "live chunks before stop"]))


if __name__ == "__main__":
    main()
