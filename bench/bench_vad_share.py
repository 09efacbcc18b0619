#!/usr/bin/env python3
"""What a realtime session costs besides its ASR step: the CPU time of its turn detector (the
server's own SpeechTurns: soxr 24 -> 16 kHz and a Silero VAD stream) and of a live Sortformer
diarization stream, against the batched cache-aware ASR step, in CPU milliseconds per audio
second per stream. CPU time, not wall time: the figures hold on a shared, loaded machine.

    PARAKEET_LIBRARY=build/libparakeet/libparakeet.so PYTHONPATH=.:cli .venv/bin/python \\
        bench/bench_vad_share.py --streams 16,32,64 [--seconds 8] [--diarizer M.gguf] [--json out.json]

For each N: N cache-aware streams of the random-weight 120M q8_0 model (parakeet_py.synthetic_model)
in one stream group (max batch N), fed 160 ms chunks from N threads in lockstep, so every round
is one batched step, as the server's group runs them at full load; then N SpeechTurns fed the
same 160 ms of 24 kHz PCM16 (the speech fixture with pauses, repeated); then N diarization
streams (default: the small streaming Sortformer test fixture; give the published-size model of
bench_diarize_stream.py with --diarizer) at the server's realtime latency preset, fed the same
chunks at 16 kHz, round-robin on one thread. The library runs one thread throughout. The VAD
and diarization work is per stream (nothing is batched), so its cost per stream is flat in N
while the ASR step's falls with the batch: the share column is what batching the VAD too could
win at most.
"""

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "cli"), str(ROOT / "bench"), str(ROOT / "tests" / "python")]

from bench_cacheaware import cpu_name  # noqa: E402
from parakeet_cli.server.limits import DEFAULT_REALTIME_DIARIZE_LATENCY  # noqa: E402
from parakeet_cli.server.speech_turns import SpeechTurns  # noqa: E402
from parakeet_cli.server.vad_settings import ServerVad  # noqa: E402
from parakeet_py import Context, Vad  # noqa: E402
from parakeet_py.speakers.diarize import Diarizer  # noqa: E402
from parakeet_py.synthetic_model import ARCHS, ensure_synthetic_model  # noqa: E402
from parakeet_py.vad import default_model  # noqa: E402
from vad_helpers import speech_with_pauses  # noqa: E402

CHUNK_SEC = 0.16
SESSION_RATE = 24000  # the realtime API's PCM16 rate
MODEL_RATE = 16000
FIXTURE = ROOT / "tests" / "data" / "nemo" / "sortformer_stream" / "model.gguf"


def chunks(audio: np.ndarray, rate: int, seconds: float) -> list:
    """``seconds`` of ``audio`` (repeated) in 160 ms pieces."""
    step = int(CHUNK_SEC * rate)
    n = int(seconds / CHUNK_SEC)
    whole = np.tile(audio, int(np.ceil(n * step / audio.size)))
    return [whole[k * step:(k + 1) * step] for k in range(n)]


def asr_cpu(ctx: Context, n: int, pieces: list) -> float:
    """CPU seconds of n grouped streams fed ``pieces`` in lockstep (one batched step a round)."""
    streams = [ctx.stream() for _ in range(n)]
    barrier = threading.Barrier(n)
    with ctx.stream_group(max_batch=n, max_wait_ms=1000) as group:
        for s in streams:
            group.join(s)

        def feed(s) -> None:
            for piece in pieces:
                barrier.wait()
                s.feed(piece)

        threads = [threading.Thread(target=feed, args=(s,)) for s in streams]
        started = time.process_time()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        spent = time.process_time() - started
    for s in streams:
        s.close()
    return spent


def per_stream_cpu(make, pieces: list, n: int) -> float:
    """CPU seconds (this thread) of n streams made by ``make`` each fed ``pieces`` round-robin."""
    streams = [make() for _ in range(n)]
    started = time.thread_time()
    for piece in pieces:
        for s in streams:
            s.feed(piece)
    spent = time.thread_time() - started
    for s in streams:
        s.close()
    return spent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--streams", default="16,32,64")
    ap.add_argument("--seconds", type=float, default=8.0, help="audio per stream")
    ap.add_argument("--diarizer", default=str(FIXTURE), help="a streaming Sortformer GGUF")
    ap.add_argument("--json")
    args = ap.parse_args()

    speech = speech_with_pauses(ROOT / "tests" / "data" / "audio")
    pcm16 = np.clip(np.interp(np.arange(0, speech.size, MODEL_RATE / SESSION_RATE), np.arange(speech.size), speech)
                    * 32768, -32768, 32767).astype(np.int16)
    session_pieces = chunks(pcm16, SESSION_RATE, args.seconds)
    model_pieces = chunks(speech, MODEL_RATE, args.seconds)
    audio = len(model_pieces) * CHUNK_SEC
    model = ensure_synthetic_model(ARCHS["120m-streaming"], "q8_0",
                                   on_generate=lambda p: print(f"writing {p} ...", file=sys.stderr))
    vad = Vad(default_model())
    doc = {"cpu": cpu_name(), "audio_seconds_per_stream": audio, "diarizer": args.diarizer,
           "load_before": os.getloadavg(), "rows": []}
    with Context(str(model), threads=1) as ctx, Diarizer(args.diarizer) as diarizer:
        doc["isa"] = ctx.info.get("isa", "?")
        print(f"{doc['cpu']}, {doc['isa']}; {audio:.1f} s per stream; load {doc['load_before'][0]:.1f}")
        print("| streams | ASR step (batch N) | VAD (SpeechTurns) | VAD share | diarization stream | diar / ASR |")
        print("| ---: | ---: | ---: | ---: | ---: | ---: |")
        for n in (int(v) for v in args.streams.split(",")):
            ms = lambda seconds: 1e3 * seconds / (n * audio)  # noqa: E731  CPU ms per audio second per stream
            asr = ms(asr_cpu(ctx, n, model_pieces))
            turns = ms(per_stream_cpu(lambda: SpeechTurns(vad, SESSION_RATE, ServerVad(), 3600.0), session_pieces, n))
            diar = ms(per_stream_cpu(lambda: diarizer.stream(DEFAULT_REALTIME_DIARIZE_LATENCY), model_pieces, n))
            row = {"streams": n, "asr_ms_per_s": asr, "vad_ms_per_s": turns, "diar_ms_per_s": diar,
                   "vad_share": turns / (asr + turns), "diar_over_asr": diar / asr, "load": os.getloadavg()[0]}
            doc["rows"].append(row)
            print(f"| {n} | {asr:.2f} | {turns:.2f} | {100 * row['vad_share']:.1f} % | {diar:.2f} | "
                  f"{row['diar_over_asr']:.2f}x |", flush=True)
    doc["load_after"] = os.getloadavg()
    print(f"CPU ms per audio second per stream; load average before {doc['load_before'][0]:.1f}, "
          f"after {doc['load_after'][0]:.1f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)


if __name__ == "__main__":
    os.environ.setdefault("PARAKEET_THREADS", "1")
    main()
