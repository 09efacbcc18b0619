#!/usr/bin/env python3
"""The scene stream at its defaults on ONE core: does it keep up with real time, and by how much?

Real-size random-weight models: the ASR is the synthetic 110M TDT (q8_0, parakeet_py.
synthetic_model), the diarizer a streaming Sortformer of the published size
(sortformer_bench_model.py), the speaker encoder SpeechBrain's ECAPA at 1024 channels
(bench_speaker.py) with a registry of two voices enrolled from the clip, the sound tagger CED
(bench_ced.py; --ced-size, default base, f32). The clip is the test conversation repeated to
--seconds, fed in --piece-second pieces as fast as the stream takes them, on a process pinned
to one CPU with every model on one thread.

The real-time factor is the stream's CPU time over the audio's duration (the wall time too,
which a busy machine inflates); the margin is its inverse: how many times faster than real
time the scene runs on one core. --breakdown also runs each part alone (ASR; diarization;
diarization + naming; sound). Runs in the fixtures' .refvenv (torch for the model builders):

    PARAKEET_LIBRARY=build/libparakeet/libparakeet.so .refvenv/bin/python bench/bench_scene.py --seconds 60
"""
import argparse
import json
import os
import sys
import time
import wave
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
CACHE = ROOT / ".cache" / "bench" / "scene"
CLIP = ROOT / "tests" / "data" / "audio" / "conversation_16k.wav"


def audio(seconds: float) -> np.ndarray:
    with wave.open(str(CLIP), "rb") as w:
        x = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float32) / np.float32(32768.0)
    return np.ascontiguousarray(np.resize(x, int(seconds * 16000)))


def models(ced_size: str) -> dict:
    """name -> GGUF path, built into .cache/bench/scene/ on first use."""
    import bench_ced
    import bench_speaker
    import sortformer_bench_model

    from parakeet_py.synthetic_model import ARCH_110M, ensure_synthetic_model

    ced = CACHE / f"ced-{ced_size}-f32.gguf"
    if not ced.exists():
        bench_ced.write_ced(ced_size, CACHE, ("f32",))
    ecapa = CACHE / "ecapa-f32.gguf"
    if not ecapa.exists():
        bench_speaker.write_ecapa(CACHE, ("f32",))
    return {"asr": ensure_synthetic_model(ARCH_110M, "q8_0", directory=CACHE), "ced": ced, "ecapa": ecapa,
            "diarizer": sortformer_bench_model.build(CACHE / "sortformer")}


def run(parts: dict, pcm: np.ndarray, piece: int) -> dict:
    """Feeds pcm through a scene stream of `parts` (Context, diarizer, tagger, speaker_encoder,
    registry; absent ones left out); the CPU and wall time of every feed and the finish."""
    from parakeet_py.speakers.scene_stream import begin

    stream = begin(parts.get("context"), diarizer=parts.get("diarizer"), tagger=parts.get("tagger"),
                   speaker_encoder=parts.get("speaker_encoder"), registry=parts.get("registry"))
    words = sounds = 0
    named = set()
    wall, cpu = time.perf_counter(), time.process_time()
    with stream:
        for i in range(0, len(pcm), piece):
            doc = stream.feed(pcm[i:i + piece])
            words, sounds = words + len(doc["words"]), sounds + len(doc["sounds"])
            named |= {v["name"] for v in doc.get("names", {}).values() if v.get("name")}
        doc = stream.finish()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    seconds = len(pcm) / 16000
    return {"rtf_cpu": round(cpu / seconds, 4), "rtf_wall": round(wall / seconds, 4),
            "margin_cpu": round(seconds / cpu, 2), "margin_wall": round(seconds / wall, 2),
            "words": words + len(doc["words"]), "sounds": sounds + len(doc["sounds"]), "names": sorted(named)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--piece", type=float, default=0.5, help="seconds of audio per feed")
    ap.add_argument("--ced-size", default="base", choices=("tiny", "mini", "small", "base"))
    ap.add_argument("--breakdown", action="store_true", help="also time each part alone")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core, every thread of the process
    os.environ["PARAKEET_THREADS"] = "1"  # read at the first load
    paths = models(args.ced_size)

    from parakeet_py import Context, Diarizer, SoundTagger, SpeakerEncoder, VoiceRegistry

    pcm = audio(args.seconds)
    with Context(paths["asr"], threads=1) as ctx, Diarizer(paths["diarizer"]) as diar, \
            SoundTagger(paths["ced"]) as tagger, SpeakerEncoder(paths["ecapa"]) as enc, VoiceRegistry() as reg:
        reg.enroll("Ada", pcm[:5 * 16000], enc, sample_rate=16000)
        reg.enroll("Grace", pcm[5 * 16000:10 * 16000], enc, sample_rate=16000)
        everything = dict(context=ctx, diarizer=diar, tagger=tagger, speaker_encoder=enc, registry=reg)
        configs = {"scene": everything}
        if args.breakdown:
            configs.update({"asr": dict(context=ctx), "diarization": dict(diarizer=diar),
                            "diarization+names": dict(diarizer=diar, speaker_encoder=enc, registry=reg),
                            "sound": dict(tagger=tagger)})
        results = {name: run(parts, pcm, int(args.piece * 16000)) for name, parts in configs.items()}
    cpu = open("/proc/cpuinfo").read().split("model name")[1].split("\n")[0].strip(" :\t")
    header = {"cpu": cpu, "seconds": args.seconds, "ced_size": args.ced_size, "threads": 1}
    if args.json:
        print(json.dumps(dict(header, **results)))
        return
    print(", ".join(f"{k} {v}" for k, v in header.items()))
    print(f"{'run':>18} {'RTF (CPU)':>10} {'margin':>8} {'RTF (wall)':>11} {'words':>6} {'sounds':>7}  names")
    for name, r in results.items():
        print(f"{name:>18} {r['rtf_cpu']:10.3f} {r['margin_cpu']:7.2f}x {r['rtf_wall']:11.3f} {r['words']:6d} "
              f"{r['sounds']:7d}  {','.join(r['names']) or '-'}")


if __name__ == "__main__":
    main()
