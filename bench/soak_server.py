#!/usr/bin/env python3
"""An adversarial soak of parakeet-server: every attack of issue 22 at once against a live
server on loopback, for a bounded time, while a fresh client measures how it is served.

Not a test (it does not run in CI): it reports what the server held and how long the fresh
client waited. The attackers come from other loopback addresses (127.0.0.2-6; all of
127.0.0.0/8 is loopback on Linux), the fresh client from 127.0.0.1, so the per-client limits
apply as they would to strangers on a network.

  slowloris   --slowloris sockets (127.0.0.2) trickle a header byte every --trickle s, and
              reconnect --trickle s after they are cut or refused;
  upload      --uploads tasks (127.0.0.3) each send a 25 MiB body as fast as loopback goes,
              over and over (not audio: 400 once received; refused 503 before the body when
              the queue is full);
  squat       --squatters realtime sessions (127.0.0.4) send input_audio_buffer.clear every
              0.5 s and reconnect when closed;
  malformed   sessions (127.0.0.5) send deeply nested JSON, binary frames, bad base64;
  bombs       127.0.0.6 uploads a 30 KB FLAC of 2 h of silence (413 before decoding) and
              appends of --max-append-mb to realtime sessions.

Every second the fresh client does GET /health, POST a 2 s clip to /v1/audio/transcriptions,
and opens a realtime session (time to session.created); the server's RSS and open files are
sampled. Printed: a JSON report (p50 / p95 / max of each latency, RSS, what each attack got).

  PARAKEET_LIBRARY=build/libparakeet/libparakeet.so PYTHONPATH=.:cli \\
    python3 bench/soak_server.py --seconds 60 [--model M.gguf] [-- extra parakeet-server options]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import collections
import io
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time

import httpx
import numpy as np
import soundfile
from websockets.asyncio.client import connect as ws_connect
from websockets.sync.client import connect as ws_connect_sync

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MODEL = os.path.join(ROOT, "tests", "data", "nemo", "hybrid_tdt_ctc", "model.gguf")
SLOW, UPLOAD, SQUAT, MALFORMED, BOMB = "127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5", "127.0.0.6"
tally: collections.Counter = collections.Counter()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wav(seconds: float, rate: int = 16000) -> bytes:
    t = np.arange(int(seconds * rate)) / rate
    buf = io.BytesIO()
    soundfile.write(buf, (np.sin(2 * np.pi * 220 * t) * 0.3).astype(np.float32), rate, format="WAV",
                    subtype="PCM_16")
    return buf.getvalue()


def flac_bomb(hours: float = 2.0, rate: int = 8000) -> bytes:
    buf = io.BytesIO()
    with soundfile.SoundFile(buf, "w", samplerate=rate, channels=1, format="FLAC") as f:
        block = np.zeros(60 * rate, dtype=np.int16)
        for _ in range(int(hours * 60)):
            f.write(block)
    return buf.getvalue()


def multipart(port: int, body_len: int) -> bytes:
    return (f"POST /v1/audio/transcriptions HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            "Content-Type: multipart/form-data; boundary=XYZ\r\n"
            f"Content-Length: {body_len}\r\n\r\n").encode()


# ---- attacks (asyncio, one loop for all) ---------------------------------------------------
async def slowloris(port: int, trickle: float, stop: asyncio.Event) -> None:
    while not stop.is_set():
        try:
            r, w = await asyncio.open_connection("127.0.0.1", port, local_addr=(SLOW, 0))
        except OSError:
            tally["slowloris connect failed"] += 1
            await asyncio.sleep(1)
            continue
        tally["slowloris connections"] += 1
        try:
            w.write(f"GET /health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-A: ".encode())
            while not stop.is_set():
                try:
                    data = await asyncio.wait_for(r.read(1024), timeout=trickle)
                except asyncio.TimeoutError:
                    w.write(b"a")
                    await w.drain()
                    continue
                tally["slowloris refused 503" if data.startswith(b"HTTP/1.1 503") else "slowloris cut"] += 1
                break
        except OSError:
            tally["slowloris cut"] += 1
        w.close()
        await asyncio.sleep(trickle)  # back at a slowloris' own pace, not as a connection flood


def flood_body() -> bytes:
    """One 25 MiB multipart body, shared by every upload task (200 copies would be 5 GB)."""
    head = b"--XYZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.wav\"\r\n\r\n"
    return head + b"\x01" * (25 << 20) + b"\r\n--XYZ--\r\n"


def settle(task: asyncio.Future) -> None:
    """Cancels a read still pending, or retrieves the error of one that ended: when the server
    drops an upload mid-body, the read fails with the writer's BrokenPipeError, and left
    unretrieved, asyncio prints its traceback ("Task exception was never retrieved")."""
    if not task.done():
        task.cancel()
    elif not task.cancelled():
        task.exception()


async def upload_flood(port: int, body: bytes, stop: asyncio.Event) -> None:
    view = memoryview(body)
    while not stop.is_set():
        reader, w = None, None
        try:
            r, w = await asyncio.open_connection("127.0.0.1", port, local_addr=(UPLOAD, 0))
            w.write(multipart(port, len(body)))
            await w.drain()
            reader = asyncio.ensure_future(r.read(200))
            for i in range(0, len(body), 1 << 20):
                if reader.done():
                    break
                w.write(view[i:i + (1 << 20)])
                await w.drain()
            head = await asyncio.wait_for(reader, timeout=120)
            tally[f"upload answered {head[9:12].decode(errors='replace')}"] += 1
        except (OSError, asyncio.TimeoutError):
            tally["upload connection dropped"] += 1
            await asyncio.sleep(0.2)
        finally:
            if w is not None:
                w.close()
            if reader is not None:
                settle(reader)


async def squatter(url: str, stop: asyncio.Event) -> None:
    while not stop.is_set():
        try:
            async with ws_connect(url, local_addr=(SQUAT, 0), open_timeout=30) as ws:
                first = json.loads(await ws.recv())
                if first["type"] == "error":
                    tally[f"squatter refused {first['error']['code']}"] += 1
                    await asyncio.sleep(0.5)
                    continue
                tally["squatter sessions"] += 1
                while not stop.is_set():
                    await ws.send(json.dumps({"type": "input_audio_buffer.clear"}))
                    event = json.loads(await ws.recv())
                    if event["type"] == "error":
                        tally[f"squatter closed {event['error']['code']}"] += 1
                        break
                    await asyncio.sleep(0.5)
        except Exception as e:  # noqa: BLE001 (a soak counts every outcome)
            tally[f"squatter {type(e).__name__}"] += 1
            await asyncio.sleep(0.5)


async def malformed(url: str, stop: asyncio.Event) -> None:
    frames = ["[" * 200_000 + "]" * 200_000, b"\x00binary", json.dumps({"type": "input_audio_buffer.append",
                                                                          "audio": "***"}), "{not json"]
    while not stop.is_set():
        try:
            async with ws_connect(url, local_addr=(MALFORMED, 0), open_timeout=30, max_size=None) as ws:
                await ws.recv()
                for frame in frames * 5:
                    await ws.send(frame)
                    event = json.loads(await ws.recv())
                    tally[f"malformed answered {event.get('error', {}).get('code')}"] += 1
        except Exception as e:  # noqa: BLE001
            tally[f"malformed {type(e).__name__}"] += 1
            await asyncio.sleep(0.5)


async def bombs(port: int, url: str, append_mb: float, stop: asyncio.Event) -> None:
    bomb = flac_bomb()
    big = json.dumps({"type": "input_audio_buffer.append",
                      "audio": base64.b64encode(b"\x00" * int(append_mb * (1 << 20))).decode()})
    transport = httpx.AsyncHTTPTransport(local_address=BOMB)
    async with httpx.AsyncClient(transport=transport, timeout=120) as client:
        while not stop.is_set():
            try:
                r = await client.post(f"http://127.0.0.1:{port}/v1/audio/transcriptions",
                                      files={"file": ("bomb.flac", bomb, "audio/flac")})
                tally[f"flac bomb answered {r.status_code}"] += 1
                async with ws_connect(url, local_addr=(BOMB, 0), open_timeout=30, max_size=None) as ws:
                    await ws.recv()
                    for _ in range(3):
                        await ws.send(big)
                    tally["append bombs sent"] += 3
            except Exception as e:  # noqa: BLE001
                tally[f"bomb {type(e).__name__}"] += 1
                await asyncio.sleep(0.5)


# ---- the fresh client and the server's footprint (a thread of its own) ----------------------
def rss_and_files(pid: int) -> tuple:
    rss = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) * 1024
    return rss, len(os.listdir(f"/proc/{pid}/fd"))


def fresh_client(port: int, url: str, pid: int, clip: bytes, stop: threading.Event, out: dict) -> None:
    with httpx.Client(timeout=60) as client:
        while not stop.is_set():
            t0 = time.perf_counter()
            try:
                ok = client.get(f"http://127.0.0.1:{port}/health").status_code == 200
            except httpx.HTTPError:
                ok = False
            out["health_s"].append(time.perf_counter() - t0)
            out["health_failed"] += not ok
            t0 = time.perf_counter()
            try:
                r = client.post(f"http://127.0.0.1:{port}/v1/audio/transcriptions",
                                files={"file": ("clip.wav", clip, "audio/wav")})
                status = r.status_code
            except httpx.HTTPError as e:
                status = type(e).__name__
            out["transcribe_s"].append(time.perf_counter() - t0)
            out["transcribe_status"][str(status)] += 1
            t0 = time.perf_counter()
            try:
                with ws_connect_sync(url, open_timeout=30) as ws:
                    kind = json.loads(ws.recv(timeout=30))["type"]
            except Exception as e:  # noqa: BLE001
                kind = type(e).__name__
            out["realtime_s"].append(time.perf_counter() - t0)
            out["realtime_first_event"][kind] += 1
            rss, files = rss_and_files(pid)
            out["rss"].append(rss)
            out["files"].append(files)
            stop.wait(max(0.0, 1.0 - (time.perf_counter() - t0)))


def summary(xs: list) -> dict:
    if not xs:
        return {}
    p95 = statistics.quantiles(xs, n=20)[-1] if len(xs) > 1 else xs[0]
    return {"p50": round(statistics.median(xs), 4), "p95": round(p95, 4), "max": round(max(xs), 4), "n": len(xs)}


async def attack(args, port: int, url: str) -> None:
    stop = asyncio.Event()
    tasks = [asyncio.ensure_future(slowloris(port, args.trickle, stop)) for _ in range(args.slowloris)]
    body = flood_body()
    tasks += [asyncio.ensure_future(upload_flood(port, body, stop)) for _ in range(args.uploads)]
    tasks += [asyncio.ensure_future(squatter(url, stop)) for _ in range(args.squatters)]
    if not args.no_bombs:
        tasks += [asyncio.ensure_future(malformed(url, stop)) for _ in range(2)]
        tasks += [asyncio.ensure_future(bombs(port, url, args.max_append_mb, stop))]
    await asyncio.sleep(args.seconds)
    stop.set()
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=DEFAULT_MODEL)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--slowloris", type=int, default=2000)
    ap.add_argument("--trickle", type=float, default=10.0, help="seconds between a slowloris' bytes")
    ap.add_argument("--uploads", type=int, default=200)
    ap.add_argument("--squatters", type=int, default=16)
    ap.add_argument("--max-append-mb", type=float, default=15.0)
    ap.add_argument("--no-bombs", action="store_true", help="leave out the malformed events and the audio bombs")
    ap.add_argument("server_args", nargs="*", help="extra parakeet-server options (after --)")
    args = ap.parse_args()

    port = free_port()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.path.join(ROOT, "cli"), os.environ.get("PYTHONPATH", "")]))
    server = subprocess.Popen([sys.executable, "-m", "parakeet_cli.server", "--model", args.model, "--port", str(port),
                               "--log-level", "critical", "--max-append-mb", str(args.max_append_mb), *args.server_args],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit("the server did not start")
            time.sleep(0.1)
        url = f"ws://127.0.0.1:{port}/v1/realtime?intent=transcription"
        rss0, files0 = rss_and_files(server.pid)
        out = {"health_s": [], "health_failed": 0, "transcribe_s": [], "transcribe_status": collections.Counter(),
               "realtime_s": [], "realtime_first_event": collections.Counter(), "rss": [], "files": []}
        done = threading.Event()
        client = threading.Thread(target=fresh_client, args=(port, url, server.pid, wav(2.0), done, out), daemon=True)
        client.start()
        asyncio.run(attack(args, port, url))
        done.set()
        client.join(120)
        report = {
            "seconds": args.seconds, "attackers": {"slowloris": args.slowloris, "trickle_s": args.trickle,
                                                   "uploads": args.uploads, "squatters": args.squatters},
            "server_args": args.server_args,
            "fresh_client": {"health_s": summary(out["health_s"]), "health_failed": out["health_failed"],
                             "transcribe_2s_clip_s": summary(out["transcribe_s"]),
                             "transcribe_status": dict(out["transcribe_status"]),
                             "transcribe_s_each": [round(x, 3) for x in out["transcribe_s"]],
                             "realtime_session_created_s": summary(out["realtime_s"]),
                             "realtime_first_event": dict(out["realtime_first_event"])},
            "server": {"rss_mib_before": round(rss0 / 2**20, 1), "rss_mib_max": round(max(out["rss"]) / 2**20, 1),
                       "rss_mib_each": [round(x / 2**20) for x in out["rss"]],
                       "open_files_before": files0, "open_files_max": max(out["files"]),
                       "alive": server.poll() is None},
            "attacks": dict(sorted(tally.items())),
        }
        print(json.dumps(report, indent=2))
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()


if __name__ == "__main__":
    main()
