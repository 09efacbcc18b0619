"""Compressed audio files made in the test: the fixture speech encoded with PyAV (FFmpeg's own
encoders), and the reference decoding of such a file, by PyAV alone.

``KINDS`` names each file kind the tests make: its FFmpeg muxer and encoder, the muxer's
options, the codec's frame length in samples (the tolerance of a duration), and the rates and
channel counts the encoder takes (libopus encodes no 44.1 kHz; FFmpeg's Vorbis encoder only
stereo, and only as an "experimental" encoder).
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Dict, Tuple

import av
import numpy as np
import soundfile
import soxr

from data_helpers import SPEECH


@dataclass(frozen=True)
class Kind:
    muxer: str
    encoder: str
    frame: int                      # samples per codec frame, at the file's rate
    rates: Tuple[int, ...] = (16000, 44100, 48000)
    channels: Tuple[int, ...] = (1, 2)
    options: Dict[str, str] = field(default_factory=dict)        # the muxer's
    codec_options: Dict[str, str] = field(default_factory=dict)  # the encoder's
    video: bool = False             # add a small video track (an MP4 from a video tool)
    mime: str = "application/octet-stream"


KINDS = {
    "m4a": Kind("ipod", "aac", 1024, mime="audio/mp4"),
    # A video tool's MP4: a video track beside the audio.
    "mp4": Kind("mp4", "aac", 1024, video=True, mime="video/mp4"),
    "webm": Kind("webm", "libopus", 960, rates=(16000, 48000), mime="audio/webm"),
    "ogg": Kind("ogg", "vorbis", 2048, channels=(2,), codec_options={"strict": "experimental"}, mime="audio/ogg"),
    "mp3": Kind("mp3", "libmp3lame", 1152, mime="audio/mpeg"),
    "mpeg": Kind("mpeg", "mp2", 1152, mime="video/mpeg"),
}

#: (kind, rate, channels) for every file the encoders can make.
CASES = [(name, rate, channels) for name, kind in KINDS.items() for rate in kind.rates for channels in kind.channels]


def speech(rate: int, channels: int, repeat: int = 1) -> np.ndarray:
    """The fixture speech (``repeat`` times over) as float32 [frames, channels] at ``rate`` (the
    second channel is the first at -0.5, so a mixdown is not one channel)."""
    x, source_rate = soundfile.read(SPEECH, dtype="float32")
    if rate != source_rate:
        x = soxr.resample(x, source_rate, rate, quality="HQ")
    x = np.tile(x, repeat)
    return np.stack([x, -0.5 * x], axis=1) if channels == 2 else x[:, None]


def encode(name: str, rate: int, channels: int, repeat: int = 1) -> bytes:
    """The fixture speech (``repeat`` times over) encoded as ``name`` (a key of KINDS)."""
    kind = KINDS[name]
    pcm = speech(rate, channels, repeat)
    buf = io.BytesIO()
    with av.open(buf, "w", format=kind.muxer, options=kind.options) as out:
        stream = out.add_stream(kind.encoder, rate=rate, layout="stereo" if channels == 2 else "mono")
        stream.codec_context.options = dict(kind.codec_options)
        video = _add_video(out) if kind.video else None
        step = stream.codec_context.frame_size or kind.frame
        planar = stream.codec_context.format.is_planar
        for begin in range(0, len(pcm), step):
            block = pcm[begin:begin + step]
            data = np.ascontiguousarray(block.T if planar else block.reshape(1, -1))
            frame = av.AudioFrame.from_ndarray(data, format="fltp" if planar else "flt", layout=stream.layout)
            frame.sample_rate, frame.pts = rate, begin
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
        if video is not None:
            _mux_pictures(out, video, len(pcm) / rate)
    return buf.getvalue()


def _add_video(out):
    video = out.add_stream("mpeg4", rate=10)
    video.width, video.height, video.pix_fmt = 32, 32, "yuv420p"
    return video


def _mux_pictures(out, video, seconds: float) -> None:
    """A grey picture every 0.1 s for ``seconds``."""
    grey = av.VideoFrame.from_ndarray(np.full((32, 32, 3), 128, np.uint8), format="rgb24").reformat(format="yuv420p")
    for index in range(int(seconds * 10)):
        grey.pts = index
        out.mux(video.encode(grey))
    out.mux(video.encode(None))


def pyav_reference(data: bytes, target_rate: int = 16000) -> Tuple[np.ndarray, int, int]:
    """The file's audio as PyAV alone decodes it: (every frame as float32, averaged to mono and
    resampled whole with soxr to ``target_rate``; the file's rate; its frame count)."""
    blocks = []
    with av.open(io.BytesIO(data)) as container:
        stream = container.streams.audio[0]
        rate, channels = stream.codec_context.sample_rate, stream.codec_context.channels
        for frame in container.decode(stream):
            samples = frame.to_ndarray()
            samples = samples.T if frame.format.is_planar else samples.reshape(-1, channels)
            if samples.dtype.kind == "i":
                samples = samples / float(2 ** (8 * samples.dtype.itemsize - 1))
            blocks.append(samples.astype(np.float32))
    pcm = np.concatenate(blocks)
    mono = pcm.mean(axis=1, dtype=np.float32) if channels > 1 else pcm[:, 0]
    return soxr.resample(mono, rate, target_rate, quality="HQ"), rate, len(pcm)
