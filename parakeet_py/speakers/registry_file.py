"""The names in a registry file (parakeet.cpp's PKSR format, docs/api.md "Voice registry"),
for listing them: the C ABI gives a registry's size, not its names. The library remains the one
reader that loads a registry; this one reads the header and each name and count, and skips the
vectors."""

import os
import struct
from typing import List, Tuple, Union

from ..errors import InvalidArgument


def registry_names(path: Union[str, "os.PathLike[str]"]) -> List[Tuple[str, int]]:
    """(name, embeddings enrolled) per speaker, in file order."""
    data = open(path, "rb").read()
    at = 0

    def take(n: int) -> bytes:
        nonlocal at
        if at + n > len(data):
            raise InvalidArgument(f"{os.fspath(path)}: not a usable speaker registry file (truncated)")
        at += n
        return data[at - n:at]

    def u32() -> int:
        return struct.unpack("<I", take(4))[0]

    if take(4) != b"PKSR":
        raise InvalidArgument(f"{os.fspath(path)}: not a usable speaker registry file (no PKSR header)")
    version = u32()
    if version not in (1, 2):
        raise InvalidArgument(f"{os.fspath(path)}: not a usable speaker registry file (unknown version {version})")
    dim, n = struct.unpack("<iI", take(8))
    if version == 2:
        take(u32())  # encoder family
        take(u32())  # encoder weights
    out = []
    for _ in range(n):
        name = take(u32()).decode("utf-8", "replace")
        count = struct.unpack("<i", take(4))[0]
        take(4 * dim)
        out.append((name, count))
    return out
