#!/usr/bin/env python3
"""Realtime sessions with server_vad: how many a server holds at 1x real time, and the latency
from the end of speech to ``...transcription.completed``.

    PARAKEET_LIBRARY=build/libparakeet/libparakeet.so .venv/bin/python bench/bench_realtime_vad.py \\
        --sessions 1,2,4,8 --seconds 30 [--model M.gguf] [--concurrency 2 --threads 1] [--json]

A real ``parakeet-server`` on loopback (its default VAD: the silero-vad package's model;
default model: the random-weight 110M q8_0 of parakeet_py.synthetic_model, whose encoder costs
what a real one's does). N client threads each open a GA realtime session with server_vad
(OpenAI's defaults: 0.5, 300 ms, 500 ms) and send --seconds of 24 kHz PCM16 in 100 ms appends
paced by the wall clock: the speech fixture in sentence-sized pieces with 1.0-2.5 s pauses,
so a turn ends every few seconds. They never commit. For each turn, the latency is the wall
time from the moment the last sample of its speech was due to be sent (the VAD's own segment
end on the same audio) to the arrival of its ``completed``; it includes OpenAI's 500 ms of
closing silence, the VAD's frame and the text still undecoded. A session keeps up when its
appends were never more than --max-lag late (the socket slows a client the server cannot
serve) and every turn completed. Prints one line per N, or --json.
"""

import argparse
import base64
import json
import os
import sys
import threading
import time
from pathlib import Path

import numpy as np
import soundfile as sf

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from bench_server import Server  # noqa: E402
from parakeet_py.synthetic_model import ARCH_110M, ensure_synthetic_model  # noqa: E402
from parakeet_py.vad import Vad, default_model  # noqa: E402

APPEND_SEC = 0.1
RATE = 24000


def recording(seconds: float) -> np.ndarray:
    """16 kHz: the speech fixture in 4 pieces with 1.0-2.5 s pauses (faint noise), tiled."""
    speech, sr = sf.read(str(ROOT / "tests" / "data" / "audio" / "speech_16k.wav"), dtype="float32")
    rng = np.random.default_rng(7)
    parts = []
    for piece in np.array_split(speech, 4):
        parts += [piece, np.zeros(int(rng.uniform(1.0, 2.5) * sr), np.float32)]
    block = np.concatenate(parts)
    out = np.tile(block, int(seconds * sr) // block.size + 1)[:int(seconds * sr)]
    return out + rng.normal(0, 1e-3, out.size).astype(np.float32)


def pcm24(audio16: np.ndarray) -> bytes:
    import soxr

    up = soxr.resample(audio16, 16000, RATE, "HQ")
    return np.clip(np.round(up * 32767), -32768, 32767).astype("<i2").tobytes()


def session(url: str, pcm: bytes, speech_ends: list, start: float, out: dict) -> None:
    """One client: sends at 1x from wall time `start`, records lags and completion times."""
    from websockets.sync.client import connect

    step = int(APPEND_SEC * RATE) * 2
    lags, done = [], []
    with connect(url.replace("http://", "ws://") + "/v1/realtime?intent=transcription", open_timeout=60,
                 max_size=None) as ws:
        assert json.loads(ws.recv(timeout=60))["type"] == "session.created"
        ws.send(json.dumps({"type": "session.update", "session": {"type": "transcription", "audio": {"input": {
            "format": {"type": "audio/pcm", "rate": RATE},
            "turn_detection": {"type": "server_vad", "threshold": 0.5, "prefix_padding_ms": 300,
                               "silence_duration_ms": 500}}}}}))

        def receive() -> None:
            try:
                while True:
                    event = json.loads(ws.recv(timeout=120))
                    if event["type"] == "conversation.item.input_audio_transcription.completed":
                        done.append(time.perf_counter())
                    elif event["type"] == "error":
                        out.setdefault("errors", []).append(event["error"]["message"])
            except Exception:
                return

        reader = threading.Thread(target=receive, daemon=True)
        reader.start()
        for i in range(0, len(pcm), step):
            due = start + (i // 2) / RATE
            now = time.perf_counter()
            if now < due:
                time.sleep(due - now)
            lags.append(time.perf_counter() - due)
            ws.send(json.dumps({"type": "input_audio_buffer.append",
                                "audio": base64.b64encode(pcm[i:i + step]).decode()}))
        deadline = time.perf_counter() + 60
        while len(done) < len(speech_ends) and time.perf_counter() < deadline:
            time.sleep(0.05)
    out["lag_max"] = max(lags)
    out["latencies"] = [d - (start + e) for d, e in zip(done, speech_ends)]
    out["turns"] = len(done)


def run(url: str, pcm: bytes, speech_ends: list, n: int) -> dict:
    start = time.perf_counter() + 1.0
    outs = [{} for _ in range(n)]
    threads = [threading.Thread(target=session, args=(url, pcm, speech_ends, start + 0.037 * k, outs[k]))
               for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lat = [x for o in outs for x in o.get("latencies", [])]
    return {"sessions": n, "turns_expected": n * len(speech_ends), "turns": sum(o.get("turns", 0) for o in outs),
            "lag_max_s": max(o.get("lag_max", float("inf")) for o in outs),
            "latency_p50_s": float(np.percentile(lat, 50)) if lat else None,
            "latency_p95_s": float(np.percentile(lat, 95)) if lat else None,
            "errors": sum(len(o.get("errors", [])) for o in outs)}


def fmt(seconds) -> str:
    return "-" if seconds is None else f"{seconds:.2f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", default="1,2,4,8")
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--model", type=Path)
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--max-lag", type=float, default=0.5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    audio = recording(args.seconds)
    with Vad(default_model()) as vad:  # the turns the server's VAD will find in this audio
        segments = vad.segments(audio, 16000, threshold=0.5, min_pause=0.5, speech_pad=0.0)
    speech_ends = [s["end"] for s in segments if s["end"] + 0.6 < args.seconds]  # closed inside the audio
    pcm = pcm24(audio)
    model = args.model or ensure_synthetic_model(ARCH_110M, "q8_0")
    server = Server(model, args.concurrency, args.threads, extra=("--client-share", "1", "--max-streams", "64"))
    results = []
    try:
        for n in (int(x) for x in args.sessions.split(",")):
            r = run(server.url, pcm, speech_ends, n)
            r["keeps_up"] = r["turns"] == r["turns_expected"] and r["lag_max_s"] <= args.max_lag and not r["errors"]
            results.append(r)
            if not args.json:
                print(f"{n:3d} sessions: {r['turns']}/{r['turns_expected']} turns, append lag max {r['lag_max_s']:.2f} s, "
                      f"end of speech -> completed p50 {fmt(r['latency_p50_s'])} s p95 {fmt(r['latency_p95_s'])} s, "
                      f"errors {r['errors']}: {'keeps up' if r['keeps_up'] else 'falls behind'}", flush=True)
    finally:
        server.stop()
    doc = {"model": str(model), "concurrency": args.concurrency, "threads": args.threads, "seconds": args.seconds,
           "turns_per_session": len(speech_ends), "results": results,
           "load_average": [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]],
           "cpus": os.cpu_count()}
    if args.json:
        print(json.dumps(doc, indent=2))
    else:
        held = [r["sessions"] for r in results if r["keeps_up"]]
        print(f"held at 1x: {max(held) if held else 0} sessions; load average {doc['load_average']}")


if __name__ == "__main__":
    main()
