"""SentencePiece vocabulary (piece strings by id) from a ``.model`` or ``.vocab`` file.

The GGUF stores the piece strings (``parakeet.tokenizer.pieces``, index = token id,
``▁`` = space) and their scores (``parakeet.tokenizer.scores``, what the engine segments
hotword text with), so we need no SentencePiece runtime: the ``.model`` file is a protobuf
``ModelProto`` whose repeated field 1 holds the pieces, each a message with
``piece`` (field 1, string), ``score`` (field 2, float) and ``type`` (field 3, enum).
A minimal wire-format reader is enough. The ``<uuid>_tokenizer.vocab`` text file
(``piece<TAB>score`` per line) is the fallback.
"""

import struct
from dataclasses import dataclass
from typing import List, Tuple

from .errors import TokenizerError

# SentencePiece ModelProto.SentencePiece.Type values.
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6

_VARINT, _FIXED64, _LEN, _FIXED32 = 0, 1, 2, 5


@dataclass(frozen=True)
class Piece:
    text: str
    score: float = 0.0
    type: int = NORMAL


def _varint(buf: bytes, pos: int, end: int) -> Tuple[int, int]:
    value = 0
    shift = 0
    while True:
        if pos >= end:
            raise TokenizerError("truncated varint in the SentencePiece model")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise TokenizerError("over-long varint in the SentencePiece model")


def _fields(buf: bytes, pos: int, end: int):
    """Yields (field number, wire type, value) where value is an int or (start, stop) bytes."""
    while pos < end:
        key, pos = _varint(buf, pos, end)
        field, wire = key >> 3, key & 7
        if wire == _VARINT:
            value, pos = _varint(buf, pos, end)
        elif wire == _FIXED64:
            value, pos = (pos, pos + 8), pos + 8
        elif wire == _LEN:
            n, pos = _varint(buf, pos, end)
            value, pos = (pos, pos + n), pos + n
        elif wire == _FIXED32:
            value, pos = (pos, pos + 4), pos + 4
        else:
            raise TokenizerError(f"unsupported protobuf wire type {wire} in the SentencePiece model")
        if pos > end:
            raise TokenizerError("truncated field in the SentencePiece model")
        yield field, wire, value


def pieces_from_model_proto(data: bytes) -> List[Piece]:
    """Parse ``ModelProto.pieces`` from the bytes of a SentencePiece ``.model`` file."""
    pieces: List[Piece] = []
    for field, wire, value in _fields(data, 0, len(data)):
        if field != 1:
            continue  # trainer_spec, normalizer_spec, ...: not needed
        if wire != _LEN:
            raise TokenizerError("ModelProto.pieces is not a message: not a SentencePiece model")
        text, score, ptype = None, 0.0, NORMAL
        for f, w, v in _fields(data, value[0], value[1]):
            if f == 1 and w == _LEN:
                try:
                    text = data[v[0]:v[1]].decode("utf-8")
                except UnicodeDecodeError as e:
                    raise TokenizerError(f"piece {len(pieces)} is not valid UTF-8") from e
            elif f == 2 and w == _FIXED32:
                score = struct.unpack("<f", data[v[0]:v[1]])[0]
            elif f == 3 and w == _VARINT:
                ptype = v
        if text is None:
            raise TokenizerError(f"piece {len(pieces)} of the SentencePiece model has no text")
        pieces.append(Piece(text, score, ptype))
    if not pieces:
        raise TokenizerError("the SentencePiece model holds no pieces")
    return pieces


def pieces_from_vocab_text(data: bytes) -> List[Piece]:
    """Parse a SentencePiece ``.vocab`` file: ``piece<TAB>score`` per line, id = line number."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise TokenizerError("the tokenizer .vocab file is not valid UTF-8") from e
    pieces: List[Piece] = []
    for lineno, line in enumerate(text.split("\n"), 1):
        if line == "":
            continue
        piece, sep, score = line.rpartition("\t")
        if not sep or piece == "":
            raise TokenizerError(f"line {lineno} of the tokenizer .vocab file is not 'piece<TAB>score'")
        try:
            pieces.append(Piece(piece, float(score)))
        except ValueError as e:
            raise TokenizerError(f"line {lineno} of the tokenizer .vocab file has a bad score {score!r}") from e
    if not pieces:
        raise TokenizerError("the tokenizer .vocab file is empty")
    return pieces
