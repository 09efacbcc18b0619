"""Opening an audio file for decoding: a path, bytes or a binary file object → a decoder chosen
from the file's first bytes (:func:`formats.sniff`), libsndfile's or FFmpeg's.

A decoder has ``rate``, ``channels``, ``stated_frames`` (the length the header states, or None),
``blocks()`` ([n, channels] float32 blocks in one reused buffer: use each before the next) and
``close()``. :func:`check_complete` then compares what was decoded with what was stated.
"""

from __future__ import annotations

import contextlib
import io
import os
from typing import Any, BinaryIO, Collection, Iterator, Optional, Union

from ..errors import InvalidAudio
from .formats import as_seekable, mp3_states_length, ogg_length, read_head, sniff
from .formats import supported_text
from .pyav import AvDecoder
from .sndfile import SndfileDecoder

Decoder = Union[SndfileDecoder, AvDecoder]


@contextlib.contextmanager
def open_decoder(source: Any, name: str, formats: Optional[Collection[str]] = None) -> Iterator[Decoder]:
    """A decoder for ``source`` (a path, bytes or a binary file object, read from its start).

    ``formats``: the container names (:data:`formats.CONTAINERS`) to accept, each only with
    its listed codecs; None accepts every container there with any codec its decoder reads, and
    hands a file no signature matches to libsndfile, which reads many more.
    """
    allowed = None if formats is None else frozenset(formats)
    with _binary(source, name) as (f, path):
        head = read_head(f)
        if not head:
            raise InvalidAudio(f"{name}: cannot decode audio: the file is empty")
        container = sniff(head)
        if container is None or (allowed is not None and container.name not in allowed):
            decoder = _unrecognised(path or f, name, allowed)
        else:
            ogg_seconds = _ogg_seconds(f, name) if container.length == "ogg" else None
            trust = container.length == "header" or ogg_seconds is not None or (
                container.length == "xing" and mp3_states_length(f))
            f.seek(0)
            kind = SndfileDecoder if container.decoder == "sndfile" else AvDecoder
            decoder = kind(path or f, name, container, strict=allowed is not None)
            decoder.trust_length = trust
            if ogg_seconds is not None:
                decoder.stated_frames = round(ogg_seconds * decoder.rate)
        try:
            yield decoder
        finally:
            decoder.close()


def _unrecognised(source: Any, name: str, allowed: Optional[frozenset]) -> SndfileDecoder:
    """No container of ours: libsndfile's own detection when every format is allowed."""
    if allowed is not None:
        raise InvalidAudio(f"{name}: cannot decode audio: not a supported format "
                           f"(supported: {supported_text(allowed)})")
    try:
        decoder = SndfileDecoder(source, name, None, strict=False)
    except InvalidAudio as e:
        raise InvalidAudio(f"{e} (supported: {supported_text()}, and the other formats libsndfile "
                           "reads)") from e
    return decoder


def _ogg_seconds(f: BinaryIO, name: str) -> Optional[float]:
    """The Ogg stream's length by its last page (None: a codec whose position we do not read);
    a truncated stream is an error."""
    complete, seconds = ogg_length(f)
    if not complete:
        raise InvalidAudio(f"{name}: cannot decode audio: the Ogg stream is truncated or corrupt (its last page "
                           "is incomplete, damaged or does not end the stream)")
    return seconds


# Decoded frames may fall short of the stated length by this much: the largest codec frame
# (Vorbis' 8192-sample long block; AAC and MP3 drop their encoder delay, up to 2112 samples)
# plus 0.2 % for containers that state the duration rounded (Matroska in milliseconds).
_SLACK_FRAMES = 8192


def check_complete(decoder: Decoder, decoded: int) -> None:
    """Raises InvalidAudio when the header stated more audio than could be decoded."""
    stated = decoder.stated_frames
    if not decoder.trust_length or stated is None or decoded >= stated - _SLACK_FRAMES - stated // 500:
        return
    raise InvalidAudio(f"{decoder.name}: the audio is truncated or corrupt: its header states "
                       f"{stated / decoder.rate:.2f} s, only {decoded / decoder.rate:.2f} s could be decoded")


@contextlib.contextmanager
def _binary(source: Any, name: str) -> Iterator[tuple]:
    """(a seekable binary file, the path or None) for a path, bytes or a binary file object."""
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if not os.path.exists(path):
            raise InvalidAudio(f"{path}: no such file")
        if os.path.isdir(path):
            raise InvalidAudio(f"{path}: is a directory, not an audio file")
        with open(path, "rb") as f:
            yield f, path
        return
    if isinstance(source, (bytes, bytearray, memoryview)):
        yield io.BytesIO(source), None
        return
    if not hasattr(source, "read"):
        raise InvalidAudio(f"cannot read audio from a {type(source).__name__}: pass a path, bytes, a binary file "
                           "object or a numpy array")
    yield as_seekable(source), None

