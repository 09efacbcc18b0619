"""The audio containers the decoders read, and how a file's first bytes name its container.

Every decoded file goes through :func:`sniff`: the decoder is chosen from the content, never
from the file name, and FFmpeg (PyAV) is always told which demuxer to use, so a hostile upload
cannot reach one of its dozens of other demuxers by dressing up as them.

``codecs`` are what an allowlist (the server's) lets through for each container: libsndfile
subtypes for the libsndfile formats, FFmpeg decoder names for the PyAV ones.

``length`` says how a truncated file is recognised, because decoders do not say so themselves
(they stop at the end of the data as if it were the end of the audio):

* ``"header"``: the header states the length exactly; decoding less than that is an error;
* ``"ogg"``: the length is the last page's position; that page must be complete and flagged
  end-of-stream (a truncated file's last page is neither), and then ``"header"`` applies (a
  page lost to corruption is then a shortfall);
* ``"xing"``: MP3 states a frame count only in a Xing/Info/VBRI header (without one, the
  length libsndfile reports is a guess from the file size): treated as ``"header"`` when
  the file has one;
* ``"none"``: nothing to check against (MPEG program streams, AMR, WebM as browsers record it,
  which has no duration element: ``"header"`` applies to Matroska only when it has one).
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from typing import BinaryIO, FrozenSet, Optional, Tuple

# How many leading bytes sniff() needs.
HEAD_BYTES = 16


@dataclass(frozen=True)
class Container:
    name: str                # the name allowlists use
    label: str               # for messages and docs
    decoder: str             # "sndfile" or "av"
    demuxer: Optional[str]   # FFmpeg demuxer (decoder "av")
    codecs: FrozenSet[str]
    length: str


_PCM = frozenset({"PCM_S8", "PCM_U8", "PCM_16", "PCM_24", "PCM_32", "FLOAT", "DOUBLE", "ULAW", "ALAW"})

CONTAINERS = {c.name: c for c in (
    Container("wav", "WAV (PCM, float, µ-law, A-law)", "sndfile", None, _PCM, "header"),
    Container("flac", "FLAC", "sndfile", None, frozenset({"PCM_S8", "PCM_16", "PCM_24"}), "header"),
    Container("ogg", "Ogg (Vorbis, Opus)", "sndfile", None, frozenset({"VORBIS", "OPUS"}), "ogg"),
    Container("mp3", "MP3 (MPEG audio layer I, II, III)", "sndfile", None,
              frozenset({"MPEG_LAYER_I", "MPEG_LAYER_II", "MPEG_LAYER_III"}), "xing"),
    Container("mp4", "M4A, MP4, MOV (AAC, Opus, MP3)", "av", "mov",
              frozenset({"aac", "opus", "mp3float", "mp3"}), "header"),
    Container("webm", "WebM, Matroska (Opus, Vorbis)", "av", "matroska", frozenset({"opus", "vorbis"}), "header"),
    Container("mpeg", "MPEG program stream (MPEG audio layer I, II, III)", "av", "mpeg",
              frozenset({"mp1float", "mp1", "mp2float", "mp2", "mp3float", "mp3"}), "none"),
    Container("amr", "AMR (narrow and wide band)", "av", "amr", frozenset({"amrnb", "amrwb"}), "none"),
)}

#: What the server decodes: everything above but AMR (a telephony codec no browser or phone
#: app uploads, whose decoders see little use).
UPLOAD_CONTAINERS = frozenset(CONTAINERS) - {"amr"}

# MP4/QuickTime files start with one of these boxes (ftyp in every MP4; the others in old
# QuickTime files).
_MP4_BOXES = (b"ftyp", b"moov", b"mdat", b"free", b"skip", b"wide")


def sniff(head: bytes) -> Optional[Container]:
    """The container ``head`` (a file's first HEAD_BYTES bytes or fewer) starts, or None."""
    if head[:4] in (b"RIFF", b"RF64") and head[8:12] == b"WAVE":
        return CONTAINERS["wav"]
    if head[:4] == b"fLaC":
        return CONTAINERS["flac"]
    if head[:4] == b"OggS":
        return CONTAINERS["ogg"]
    if head[:3] == b"ID3" or _mpeg_audio_sync(head):
        return CONTAINERS["mp3"]
    if head[4:8] in _MP4_BOXES:
        return CONTAINERS["mp4"]
    if head[:4] == b"\x1a\x45\xdf\xa3":  # the EBML magic of Matroska and WebM
        return CONTAINERS["webm"]
    if head[:4] == b"\x00\x00\x01\xba":  # an MPEG program stream pack header
        return CONTAINERS["mpeg"]
    if head.startswith(b"#!AMR"):  # "#!AMR\n" and "#!AMR-WB\n"
        return CONTAINERS["amr"]
    return None


def _mpeg_audio_sync(head: bytes) -> bool:
    """An MPEG audio frame header: 11 sync bits, a version other than 'reserved', a layer
    other than 0 (0 is AAC's ADTS, which uses the same sync)."""
    if len(head) < 2 or head[0] != 0xFF or head[1] & 0xE0 != 0xE0:
        return False
    return (head[1] >> 3) & 3 != 1 and (head[1] >> 1) & 3 != 0


def supported_text(names: Optional[FrozenSet[str]] = None) -> str:
    """'WAV (...), FLAC, ...': the containers ``names`` (default: all) for an error message."""
    return ", ".join(c.label for c in CONTAINERS.values() if names is None or c.name in names)


# ---- truncation: what the header promises -----------------------------------------------------

# The largest Ogg page: a 27-byte header, 255 lacing values and 255 segments of 255 bytes.
_MAX_OGG_PAGE = 27 + 255 + 255 * 255


def _ogg_crc_table() -> Tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7) if crc & 0x80000000 else crc << 1
        table.append(crc & 0xFFFFFFFF)
    return tuple(table)


_OGG_CRC = _ogg_crc_table()


def _ogg_crc(page: bytes) -> int:
    """Ogg's page checksum (CRC-32, polynomial 0x04C11DB7, unreflected, over the page with its
    checksum field zeroed)."""
    crc = 0
    for byte in page[:22] + b"\0\0\0\0" + page[26:]:
        crc = ((crc << 8) & 0xFFFFFFFF) ^ _OGG_CRC[(crc >> 24) ^ byte]
    return crc


def ogg_length(f: BinaryIO) -> Tuple[bool, Optional[float]]:
    """(whether the file's last Ogg page is whole, with a good checksum, and ends a logical
    stream (flag 0x04); the stream's length in seconds by that page's position, for Vorbis and
    Opus, else None).

    A truncated Ogg file ends mid-page or on a page without that flag, and libogg drops pages
    whose checksum fails: libsndfile and FFmpeg both decode such files without complaint, up to
    the last good page, and then state a length that matches (so the length is read here).
    """
    end = f.seek(0, os.SEEK_END)
    start = max(0, end - _MAX_OGG_PAGE)
    f.seek(start)
    tail = f.read(end - start)
    at = tail.rfind(b"OggS")
    if at < 0 or len(tail) - at < 27:
        return False, None
    page = tail[at:]
    segments = page[26]
    table = page[27:27 + segments]
    complete = (page[5] & 0x04 != 0 and len(table) == segments and 27 + segments + sum(table) == len(page)
                and _ogg_crc(page) == int.from_bytes(page[22:26], "little"))
    if not complete:
        return False, None
    granule = int.from_bytes(page[6:14], "little", signed=True)
    f.seek(0)
    first = f.read(27 + 255 + 32)
    ident = first[27 + first[26]:] if len(first) > 27 else b""
    if ident.startswith(b"\x01vorbis") and len(ident) >= 16:
        # Vorbis: the granule counts samples at the stream's rate.
        rate = int.from_bytes(ident[12:16], "little")
        return True, granule / rate if rate > 0 else None
    if ident.startswith(b"OpusHead") and len(ident) >= 12:
        # Opus: 48 kHz samples, the first pre-skip of them not part of the audio.
        return True, (granule - int.from_bytes(ident[10:12], "little")) / 48000
    return True, None


def mp3_states_length(f: BinaryIO) -> bool:
    """Whether the MP3's first frame is a Xing, Info or VBRI header (which counts the frames)."""
    f.seek(0)
    head = f.read(10)
    offset = 0
    if head[:3] == b"ID3" and len(head) == 10:
        # ID3v2: a 10-byte header whose size is four 7-bit bytes; a footer adds 10 more.
        size = (head[6] << 21) | (head[7] << 14) | (head[8] << 7) | head[9]
        offset = 10 + size + (10 if head[5] & 0x10 else 0)
    f.seek(offset)
    # The tag sits after the frame header and the side information: 4 + at most 32 bytes.
    frame = f.read(4 + 32 + 4)
    return any(tag in frame for tag in (b"Xing", b"Info", b"VBRI"))


def read_head(f: BinaryIO) -> bytes:
    """The file's first HEAD_BYTES bytes (f is left at its start)."""
    f.seek(0)
    head = f.read(HEAD_BYTES)
    f.seek(0)
    return bytes(head or b"")


def as_seekable(f: BinaryIO) -> BinaryIO:
    """``f`` itself if it can seek, else its remaining bytes in memory (sniffing and both
    decoders need to seek; the compressed bytes are small next to the decoded samples)."""
    seekable = getattr(f, "seekable", None)
    if seekable is not None and seekable():
        return f
    return io.BytesIO(f.read())
