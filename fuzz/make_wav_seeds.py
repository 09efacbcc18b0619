#!/usr/bin/env python3
"""Writes the seed inputs of fuzz_wav into fuzz/corpus/fuzz_wav/.

Small WAV files that between them use every layout the reader accepts (8/16/24/32-bit PCM,
32/64-bit float, WAVE_FORMAT_EXTENSIBLE, 1 to 3 channels), an odd-sized chunk before the
data, a streaming writer's 0xFFFFFFFF data size, a truncated data chunk and the rejected
neighbours (mu-law, RF64), so the fuzzer starts from inputs that reach every branch of the
parser. The first byte of a fuzz input also sets the target's length limit; 'R' (0x52) gives
0.5 s, which every seed here is shorter than. Written with `struct` alone, to need nothing
beyond Python.

Usage: python3 fuzz/make_wav_seeds.py
"""
import struct

from seed_corpus import write_seeds

PCM, FLOAT, MULAW, EXTENSIBLE = 0x0001, 0x0003, 0x0007, 0xFFFE


def chunk(tag, body, size=None):
    """A RIFF chunk, padded to an even length; `size` overrides the size field."""
    pad = b"\0" if len(body) % 2 else b""
    return tag + struct.pack("<I", len(body) if size is None else size) + body + pad


def fmt_body(tag, channels, rate, bits, extensible=False):
    align = channels * (bits // 8)
    head = struct.pack("<HHIIHH", EXTENSIBLE if extensible else tag, channels, rate, rate * align, align, bits)
    if not extensible:
        return head
    # cbSize, valid bits, channel mask, then the sub-format GUID, which starts with the tag.
    guid = struct.pack("<H", tag) + b"\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71"
    return head + struct.pack("<HHI", 22, bits, 0) + guid


def wav(tag, channels, rate, bits, payload, extensible=False, extra=b"", data_size=None, riff=b"RIFF"):
    body = b"WAVE" + chunk(b"fmt ", fmt_body(tag, channels, rate, bits, extensible)) + extra
    body += chunk(b"data", payload, data_size)
    return riff + struct.pack("<I", len(body)) + body


def ramp(n, width):
    """n samples of `width` bytes each, a ramp over the whole range."""
    out = b""
    for i in range(n):
        v = (i * 2654435761) & ((1 << (8 * width)) - 1)
        out += v.to_bytes(width, "little")
    return out


def floats(values, fmt):
    return b"".join(struct.pack(fmt, v) for v in values)


SEEDS = {
    "pcm8_mono": wav(PCM, 1, 8000, 8, ramp(16, 1)),
    "pcm16_stereo_list_chunk": wav(PCM, 2, 44100, 16, ramp(16, 2),
                                   extra=chunk(b"LIST", b"INFOabc")),
    "pcm24_mono": wav(PCM, 1, 48000, 24, ramp(12, 3)),
    "pcm32_stereo": wav(PCM, 2, 16000, 32, ramp(8, 4)),
    "float32_extensible_3ch": wav(FLOAT, 3, 22050, 32, floats([0.5, -0.25, 1.0, 0.0, -1.0, 0.125], "<f"),
                                  extensible=True),
    "float64_mono": wav(FLOAT, 1, 16000, 64, floats([0.5, -0.5, 0.0, 1e-3], "<d")),
    "pcm16_extensible_stream_size": wav(PCM, 1, 16000, 16, ramp(10, 2), extensible=True,
                                        data_size=0xFFFFFFFF),
    "pcm16_truncated_data": wav(PCM, 1, 16000, 16, ramp(10, 2), data_size=400),
    "mulaw_rejected": wav(MULAW, 1, 8000, 8, ramp(8, 1)),
    "rf64_rejected": wav(PCM, 1, 16000, 16, ramp(4, 2), riff=b"RF64"),
}

if __name__ == "__main__":
    write_seeds("fuzz_wav", SEEDS)
