"""Read members of a ``.nemo`` archive in memory, never extracting anything to disk.

A ``.nemo`` file is a tar: uncompressed since NeMo 1.7, gzip-compressed before that. It
holds ``model_config.yaml``, ``model_weights.ckpt`` and the tokenizer files, usually
named ``./model_config.yaml`` and ``./<uuid>_tokenizer.model``.

Because nothing is written to disk, a hostile member name cannot overwrite a file; names
that try to leave the archive (absolute, or with ``..``) are refused anyway, since no
honest ``.nemo`` contains one. Links and other special members are ignored.
"""

import io
import posixpath
import tarfile
from pathlib import Path
from typing import BinaryIO, Dict, List, Optional

from .errors import ArchiveError

_GZIP_MAGIC = b"\x1f\x8b"
# Members read whole into memory are capped by the size their tar header declares, checked
# before reading: the config and tokenizer files (kilobytes in real archives), and in a gzip
# archive every member, the checkpoint included (legacy archives hold small models; a
# hostile one can declare terabytes that compress to almost nothing).
MAX_READ_WHOLE_BYTES = 64 << 20
MAX_GZIP_MEMBER_BYTES = 4 << 30


def normalize_member_name(raw: str) -> str:
    """``./a/b`` → ``a/b``; refuses absolute names and names with a ``..`` component."""
    name = raw.replace("\\", "/")
    if name.startswith("/"):
        raise ArchiveError(f"unsafe member name {raw!r}: absolute paths are not allowed in a .nemo archive")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ArchiveError(f"unsafe member name {raw!r}: '..' is not allowed in a .nemo archive")
    return "/".join(parts)


class NemoArchive:
    """Random access to the regular files of a ``.nemo`` tar (plain or gzip).

    Use as a context manager. :meth:`open` returns a seekable binary stream; for a plain tar
    it reads straight from the file (so a multi-GB checkpoint is never held in memory), for
    a gzip tar the member is decompressed into memory first, because seeking backwards in a
    gzip stream means decompressing it again from the start.
    """

    def __init__(self, path):
        self.path = Path(path)
        try:
            self._file = open(self.path, "rb")
        except OSError as e:
            raise ArchiveError(f"cannot open {self.path}: {e.strerror or e}") from e
        try:
            self.compressed = self._file.read(2) == _GZIP_MAGIC
            self._file.seek(0)
            mode = "r:gz" if self.compressed else "r:"
            self._tar = tarfile.open(fileobj=self._file, mode=mode)
            self._members: Dict[str, tarfile.TarInfo] = {}
            for info in self._tar.getmembers():
                if not info.isreg():
                    continue
                self._members[normalize_member_name(info.name)] = info
        except (tarfile.TarError, EOFError, OSError) as e:
            self._file.close()
            kind = "gzip-compressed tar" if getattr(self, "compressed", False) else "tar"
            raise ArchiveError(f"{self.path} is not a valid .nemo archive ({kind}): {e}") from e
        except ArchiveError:
            self._file.close()
            raise

    # --- context manager -------------------------------------------------------------
    def close(self) -> None:
        self._tar.close()
        self._file.close()

    def __enter__(self) -> "NemoArchive":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- lookup ------------------------------------------------------------------------
    @property
    def names(self) -> List[str]:
        """Normalised names of the regular files, in archive order."""
        return list(self._members)

    def find(self, basename: str) -> Optional[str]:
        """The member called ``basename`` (at any depth, top level preferred), or None."""
        if basename in self._members:
            return basename
        hits = [n for n in self._members if posixpath.basename(n) == basename]
        return hits[0] if len(hits) == 1 else None

    def find_suffix(self, suffix: str) -> Optional[str]:
        """The only member whose name ends with ``suffix``, or None (none or ambiguous)."""
        hits = [n for n in self._members if n.endswith(suffix)]
        return hits[0] if len(hits) == 1 else None

    def require(self, basename: str) -> str:
        name = self.find(basename)
        if name is None:
            listing = ", ".join(self.names) or "(no files)"
            raise ArchiveError(f"{self.path} has no member '{basename}' (members: {listing})")
        return name

    # --- reading -----------------------------------------------------------------------
    def read_bytes(self, name: str) -> bytes:
        self._check_size(name, MAX_READ_WHOLE_BYTES, "")
        with self.open(name) as f:
            return f.read()

    def open(self, name: str) -> BinaryIO:
        if self.compressed:
            self._check_size(name, MAX_GZIP_MEMBER_BYTES, " uncompressed")
        info = self._members.get(name)
        if info is None:
            raise ArchiveError(f"{self.path} has no member '{name}'")
        try:
            stream = self._tar.extractfile(info)
            if stream is None:
                raise ArchiveError(f"member '{name}' of {self.path} is not a regular file")
            if self.compressed:
                with stream:
                    return io.BytesIO(stream.read())
            return stream
        except (tarfile.TarError, EOFError, OSError) as e:
            raise ArchiveError(f"cannot read member '{name}' of {self.path}: {e}") from e

    def _check_size(self, name: str, limit: int, how: str) -> None:
        info = self._members.get(name)
        if info is not None and info.size > limit:
            raise ArchiveError(f"member '{name}' of {self.path} is {info.size} bytes{how}, more than the {limit} "
                               "it may have to be read into memory")
