"""Decoding speed per audio format, in samples (frames) per second, libsndfile against FFmpeg
(PyAV) for the formats both read.

The fixture speech, repeated --repeat times, is encoded once per format (48 kHz stereo, AAC/Opus/
Vorbis/MP3/MP2 by FFmpeg's encoders, WAV/FLAC by libsndfile) and held in memory; then each
decoder decodes it to float32 blocks (the package's decoders, no mixdown or resampling),
interleaved (A B A B ...) after a warm-up. The table shows the median rate and, where both
decoders read the format, FFmpeg's time over libsndfile's.

    python3 bench/bench_decode.py [--repeat 12] [--reps 5]
"""
import argparse
import dataclasses
import io
import os
import statistics
import sys
import time

import numpy as np
import soundfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [REPO, os.path.join(REPO, "tests", "python")]

from av_helpers import encode, speech  # noqa: E402
from parakeet_py.audio.formats import CONTAINERS  # noqa: E402
from parakeet_py.audio.pyav import AvDecoder  # noqa: E402
from parakeet_py.audio.sndfile import SndfileDecoder  # noqa: E402
from tabulate import tabulate  # noqa: E402

# format → (how it is made, the container of the package's decoder, FFmpeg's demuxer for it)
FORMATS = {
    "wav": ("sndfile:WAV:PCM_16", "wav", "wav"),
    "flac": ("sndfile:FLAC:PCM_16", "flac", "flac"),
    "ogg/vorbis": ("av:ogg", "ogg", "ogg"),
    "ogg/opus": ("sndfile:OGG:OPUS", "ogg", "ogg"),
    "mp3": ("av:mp3", "mp3", "mp3"),
    "m4a/aac": ("av:m4a", "mp4", None),
    "webm/opus": ("av:webm", "webm", None),
    "mpeg/mp2": ("av:mpeg", "mpeg", None),
}


def make(recipe: str, repeat: int) -> bytes:
    kind, *rest = recipe.split(":")
    if kind == "av":
        return encode(rest[0], 48000, 2, repeat)
    buf = io.BytesIO()
    soundfile.write(buf, speech(48000, 2, repeat), 48000, format=rest[0], subtype=rest[1])
    return buf.getvalue()


def decode_rate(make_decoder, data: bytes) -> float:
    start = time.perf_counter()
    decoder = make_decoder(io.BytesIO(data))
    frames = sum(len(block) for block in decoder.blocks())
    decoder.close()
    return frames / (time.perf_counter() - start)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=12, help="times the 9.6 s clip is repeated (default 12)")
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    rows = []
    for label, (recipe, container, demuxer) in FORMATS.items():
        data = make(recipe, args.repeat)
        c = CONTAINERS[container]
        decoders = {}
        if c.decoder == "sndfile":
            decoders["libsndfile"] = lambda f, c=c: SndfileDecoder(f, label, c, strict=False)
        if c.decoder == "av" or demuxer:
            av_container = dataclasses.replace(c, demuxer=demuxer or c.demuxer)
            decoders["ffmpeg"] = lambda f, c=av_container: AvDecoder(f, label, c, strict=False)
        for make_decoder in decoders.values():
            decode_rate(make_decoder, data)  # warm-up
        rates = {name: [] for name in decoders}
        for _ in range(args.reps):
            for name, make_decoder in decoders.items():
                rates[name].append(decode_rate(make_decoder, data))
        med = {name: statistics.median(r) for name, r in rates.items()}
        ratio = f"{med['libsndfile'] / med['ffmpeg']:.2f}" if len(med) == 2 else ""
        rows.append([label, f"{len(data) / 1e6:.1f}", f"{med['libsndfile'] / 1e6:.1f}" if "libsndfile" in med else "",
                     f"{med['ffmpeg'] / 1e6:.1f}" if "ffmpeg" in med else "", ratio,
                     "libsndfile" if c.decoder == "sndfile" else "ffmpeg"])
    print(f"{args.repeat} x 9.6 s of 48 kHz stereo speech, median of {args.reps} (Msamples/s = million frames/s)")
    print(tabulate(rows, headers=["format", "MB", "libsndfile Msamples/s", "FFmpeg Msamples/s",
                                  "FFmpeg time / libsndfile", "package uses"], tablefmt="github"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
