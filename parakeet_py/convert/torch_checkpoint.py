"""Read a PyTorch zip checkpoint (``torch.save`` format) without PyTorch, safely.

A checkpoint is a zip archive ``<prefix>/data.pkl`` (a pickle of the object),
``<prefix>/data/<key>`` (one raw little-endian storage per key), ``<prefix>/byteorder``
and a few version records. The pickle rebuilds tensors by calling
``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, ...)`` on storages it names
through persistent ids ``('storage', torch.FloatStorage, key, location, numel)``.

Unpickling runs whatever callables the pickle names, so ``torch.load`` on an untrusted file
can execute code. :class:`_TensorOnlyUnpickler` resolves only the handful of names that
rebuild tensors and containers, mapped to our own harmless functions; any other name is
refused before anything is called. Tensors come back as lazy :class:`TensorRef` objects:
the storage bytes are read only when :meth:`TensorRef.numpy` is called, so a multi-GB
checkpoint is streamed tensor by tensor.

The pickle's BUILD opcode sets attributes on whatever object it is given, so every object
the unpickler hands out is made fresh for that one name in that one file (a BUILD can never
reach an object another checkpoint will use) and refuses state; the only BUILD accepted is
the one torch writes, the ``_metadata`` of the state_dict. Sizes are capped before anything
is read or allocated: data.pkl, and a tensor view that shows a small storage as a huge one.
"""

import collections
import io
import math
import pickle
import zipfile
from typing import Any, BinaryIO, Dict, Optional, Tuple

import numpy as np

from .errors import CheckpointError, UnsafePickleError

WHAT = "model_weights.ckpt"

# data.pkl holds names, shapes and storage keys only (a few hundred KB for the largest
# Parakeet models); it is read whole, so it is capped.
MAX_PICKLE_BYTES = 64 << 20
# A view may show a storage's elements more than once (torch saves expanded tensors with
# stride 0), but one that would make more elements than its storage holds is refused above
# this many: a one-element storage must not become terabytes.
MAX_BROADCAST_ELEMENTS = 1 << 24


def _refuse_state(obj: Any, state: Any) -> None:
    raise UnsafePickleError(f"refusing to set state on {obj!r} in {WHAT}: only tensors are allowed")


class _StorageType:
    """Stands for one ``torch.<X>Storage`` class named in the pickle (made per name)."""

    __slots__ = ("torch_name", "dtype")

    def __init__(self, torch_name: str, dtype: str):
        self.torch_name = torch_name
        self.dtype = dtype  # numpy dtype name; "bfloat16" is handled specially

    def __repr__(self) -> str:
        return f"torch.{self.torch_name}"

    __setstate__ = _refuse_state


# Storage classes torch writes (typed storages are what torch 1.x and 2.x both pickle for
# tensors; UntypedStorage holds raw bytes), by name → numpy dtype name.
_STORAGE_DTYPES = {
    name: dt
    for name, dt in (
        ("DoubleStorage", "float64"),
        ("FloatStorage", "float32"),
        ("HalfStorage", "float16"),
        ("BFloat16Storage", "bfloat16"),
        ("LongStorage", "int64"),
        ("IntStorage", "int32"),
        ("ShortStorage", "int16"),
        ("CharStorage", "int8"),
        ("ByteStorage", "uint8"),
        ("BoolStorage", "bool"),
        ("UntypedStorage", "uint8"),
    )
}

# torch dtypes pickle as the global ``torch.<name>`` (used by _rebuild_tensor_v3).
_TORCH_DTYPES = {
    "float64": "float64", "double": "float64",
    "float32": "float32", "float": "float32",
    "float16": "float16", "half": "float16",
    "bfloat16": "bfloat16",
    "int64": "int64", "long": "int64",
    "int32": "int32", "int": "int32",
    "int16": "int16", "short": "int16",
    "int8": "int8", "uint8": "uint8", "bool": "bool",
}


class _TorchDType:
    __slots__ = ("dtype",)

    def __init__(self, dtype: str):
        self.dtype = dtype

    def __repr__(self) -> str:
        return f"torch.{self.dtype}"

    __setstate__ = _refuse_state


class _Storage:
    """A storage the pickle referred to: which zip entry, which element type, how many."""

    __slots__ = ("checkpoint", "key", "dtype", "numel")

    def __init__(self, checkpoint: "TorchCheckpoint", key: str, dtype: str, numel: int):
        self.checkpoint = checkpoint
        self.key = key
        self.dtype = dtype
        self.numel = numel

    def __repr__(self) -> str:
        return f"storage '{self.key}'"

    __setstate__ = _refuse_state


def _itemsize(dtype: str) -> int:
    return 2 if dtype == "bfloat16" else np.dtype(dtype).itemsize


class TensorRef:
    """A tensor in the checkpoint, not yet read: dtype, shape, and where its bytes are."""

    __slots__ = ("storage", "offset", "shape", "stride", "dtype")

    def __init__(self, storage: _Storage, offset: int, shape: Tuple[int, ...], stride: Tuple[int, ...], dtype: str):
        self.storage = storage
        self.offset = offset
        self.shape = shape
        self.stride = stride
        self.dtype = dtype  # numpy dtype name, or "bfloat16"

    def __setstate__(self, state):  # a pickle BUILD on a tensor is not something torch writes
        raise UnsafePickleError(f"refusing to set state on a tensor in {WHAT}: only tensors are allowed")

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def is_floating(self) -> bool:
        return self.dtype in ("float16", "bfloat16", "float32", "float64")

    def numpy(self) -> np.ndarray:
        """Read the bytes and return a C-contiguous array (bfloat16 widened to float32)."""
        raw = self.storage.checkpoint._read_storage(self.storage)
        if self.dtype == "bfloat16":
            flat = (raw.view("<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            flat = raw
        numel = math.prod(self.shape)  # exact: np.prod would wrap around for a hostile shape
        if numel == 0:
            return np.zeros(self.shape, dtype=flat.dtype.newbyteorder("="))
        if numel > flat.size and numel > MAX_BROADCAST_ELEMENTS:
            raise CheckpointError(
                f"tensor view of {numel} elements (size {list(self.shape)}, stride {list(self.stride)}) "
                f"from a storage of {flat.size} elements in {WHAT}: refusing to allocate it"
            )
        # Bounds: the furthest element this view touches must lie inside the storage,
        # otherwise as_strided would read memory that is not ours.
        last = self.offset + sum((n - 1) * s for n, s in zip(self.shape, self.stride))
        if self.offset < 0 or last >= flat.size:
            raise CheckpointError(
                f"tensor view (offset {self.offset}, size {list(self.shape)}, stride {list(self.stride)}) "
                f"reaches past its storage '{self.storage.key}' of {flat.size} elements in {WHAT}"
            )
        native = flat.dtype.newbyteorder("=")
        if not self.shape:  # 0-d: as_strided would give a 1-element vector
            return flat[self.offset:self.offset + 1].astype(native).reshape(())
        item = flat.dtype.itemsize
        view = np.lib.stride_tricks.as_strided(
            flat[self.offset:],
            shape=self.shape,
            strides=tuple(s * item for s in self.stride),
            writeable=False,
        )
        return np.ascontiguousarray(view, dtype=native)


def _check_ints(what: str, values, allow_negative: bool = False) -> Tuple[int, ...]:
    if not isinstance(values, (tuple, list)) or not all(type(v) is int for v in values):
        raise UnsafePickleError(f"malformed tensor {what} {values!r} in {WHAT}")
    if not allow_negative and any(v < 0 for v in values):
        raise CheckpointError(f"negative tensor {what} {values!r} in {WHAT}")
    return tuple(values)


def _make_tensor(storage, storage_offset, size, stride, dtype: Optional[str] = None) -> TensorRef:
    if not isinstance(storage, _Storage):
        raise UnsafePickleError(f"a tensor in {WHAT} is built from {type(storage).__name__}, not a storage")
    if type(storage_offset) is not int or storage_offset < 0:
        raise UnsafePickleError(f"malformed storage offset {storage_offset!r} in {WHAT}")
    size = _check_ints("size", size)
    stride = _check_ints("stride", stride)
    if len(size) != len(stride):
        raise CheckpointError(f"tensor size {list(size)} and stride {list(stride)} differ in rank in {WHAT}")
    return TensorRef(storage, storage_offset, size, stride, dtype or storage.dtype)


# --- the only callables a checkpoint may invoke ---------------------------------------------
def _rebuild_tensor(storage, storage_offset, size, stride):
    return _make_tensor(storage, storage_offset, size, stride)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None, metadata=None):
    return _make_tensor(storage, storage_offset, size, stride)


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None):
    if not isinstance(dtype, _TorchDType):
        raise UnsafePickleError(f"malformed tensor dtype {dtype!r} in {WHAT}")
    # v3 pairs an untyped (byte) storage with an explicit dtype.
    t = _make_tensor(storage, storage_offset, size, stride, dtype.dtype)
    if storage.dtype == "uint8" and dtype.dtype != "uint8":
        t.storage = _Storage(storage.checkpoint, storage.key, dtype.dtype, storage.numel // _itemsize(dtype.dtype))
    return t


def _rebuild_parameter(data, requires_grad=False, backward_hooks=None):
    if not isinstance(data, TensorRef):
        raise UnsafePickleError(f"a parameter in {WHAT} wraps {type(data).__name__}, not a tensor")
    return data


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _rebuild_parameter(data)


class _StateDict(collections.OrderedDict):
    """The OrderedDict a state_dict unpickles to. torch.save writes its ``_metadata``
    attribute (per-module versions) with a BUILD; that is the one state accepted."""

    def __setstate__(self, state: Any) -> None:
        if not isinstance(state, dict) or set(state) - {"_metadata"}:
            raise UnsafePickleError(f"refusing to set state {sorted(state) if isinstance(state, dict) else state!r} "
                                    f"on a dict in {WHAT}: only tensors are allowed")


class _Callable:
    """One allowed callable as the pickle sees it, made per name: a BUILD on it is refused,
    and could not reach the module's function anyway."""

    __slots__ = ("_fn", "_name")

    def __init__(self, fn, name: str):
        self._fn = fn
        self._name = name

    def __call__(self, *args):
        return self._fn(*args)

    def __repr__(self) -> str:
        return self._name

    __setstate__ = _refuse_state


_ALLOWED_CALLABLES = {
    ("torch._utils", "_rebuild_tensor"): _rebuild_tensor,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
    ("torch._utils", "_rebuild_tensor_v3"): _rebuild_tensor_v3,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter_with_state,
    ("collections", "OrderedDict"): _StateDict,
}


class _TensorOnlyUnpickler(pickle.Unpickler):
    """Resolves only tensor-rebuilding names; everything else is refused unexecuted.

    ``find_class`` is the single door through which a pickle reaches any callable or class
    (GLOBAL, STACK_GLOBAL, INST, OBJ and EXT opcodes all go through it), and
    ``persistent_load`` the one through which it reaches external data.
    """

    def __init__(self, file: BinaryIO, checkpoint: "TorchCheckpoint"):
        super().__init__(file)
        self._checkpoint = checkpoint

    def find_class(self, module: str, name: str) -> Any:
        found = _ALLOWED_CALLABLES.get((module, name))
        if found is not None:
            return _Callable(found, f"{module}.{name}")
        if module == "torch" and name in _STORAGE_DTYPES:
            return _StorageType(name, _STORAGE_DTYPES[name])
        if module == "torch" and name in _TORCH_DTYPES:
            return _TorchDType(_TORCH_DTYPES[name])
        raise UnsafePickleError(f"refusing to load '{module}.{name}' from {WHAT}: only tensors are allowed")

    def persistent_load(self, pid: Any) -> Any:
        if (
            not isinstance(pid, tuple)
            or len(pid) != 5
            or pid[0] != "storage"
            or not isinstance(pid[1], _StorageType)
            or not isinstance(pid[2], str)
            or not isinstance(pid[3], str)
            or type(pid[4]) is not int
            or pid[4] < 0
        ):
            raise UnsafePickleError(f"refusing persistent id {pid!r} in {WHAT}: only tensor storages are allowed")
        _, stype, key, _location, numel = pid
        return self._checkpoint._storage(key, stype.dtype, numel)


class TorchCheckpoint:
    """The tensors of a ``torch.save`` zip checkpoint, as name → :class:`TensorRef`.

    The stream must stay open (and seekable) while tensors are read. Accepts a checkpoint
    that is the state_dict itself or a dict holding it under ``'state_dict'``.
    """

    def __init__(self, stream: BinaryIO):
        try:
            self._zip = zipfile.ZipFile(stream)
        except zipfile.BadZipFile as e:
            head = _peek(stream, 2)
            if head[:1] == b"\x80":
                raise CheckpointError(
                    f"{WHAT} uses the legacy (pre-1.6) PyTorch serialization, which is not supported; "
                    "re-save it with a current PyTorch"
                ) from e
            raise CheckpointError(f"{WHAT} is not a PyTorch zip checkpoint: {e}") from e
        pkl = [n for n in self._zip.namelist() if n.endswith("data.pkl") and n.count("/") == 1]
        if len(pkl) != 1:
            raise CheckpointError(f"{WHAT} has {len(pkl)} '<prefix>/data.pkl' records, expected exactly one")
        self._prefix = pkl[0][: -len("data.pkl")]
        self._byteorder = self._read_byteorder()
        self._storages: Dict[str, _Storage] = {}
        size = self._zip.getinfo(pkl[0]).file_size
        if size > MAX_PICKLE_BYTES:
            raise CheckpointError(f"{WHAT}: data.pkl is {size} bytes, more than the {MAX_PICKLE_BYTES} "
                                  "a state_dict's pickle needs")
        try:
            obj = _TensorOnlyUnpickler(io.BytesIO(self._zip.read(pkl[0])), self).load()
        except UnsafePickleError:
            raise
        except CheckpointError:
            raise
        except Exception as e:  # malformed pickle data: truncated stream, bad opcode, wrong arity
            raise CheckpointError(f"cannot unpickle {WHAT}: {type(e).__name__}: {e}") from e
        self.tensors: Dict[str, TensorRef] = _find_state_dict(obj)

    def _read_byteorder(self) -> str:
        name = self._prefix + "byteorder"
        if name not in self._zip.namelist():
            return "little"  # written since torch 1.10; older files are little-endian
        order = self._zip.read(name).decode("ascii", "replace").strip()
        if order not in ("little", "big"):
            raise CheckpointError(f"{WHAT} declares an unknown byte order {order!r}")
        return order

    def _storage(self, key: str, dtype: str, numel: int) -> _Storage:
        st = self._storages.get(key)
        if st is None:
            st = _Storage(self, key, dtype, numel)
            self._storages[key] = st
        return st

    def _read_storage(self, st: _Storage) -> np.ndarray:
        name = f"{self._prefix}data/{st.key}"
        try:
            info = self._zip.getinfo(name)
        except KeyError:
            raise CheckpointError(f"{WHAT} lacks storage record '{name}'") from None
        nbytes = st.numel * _itemsize(st.dtype)
        if info.file_size < nbytes:
            raise CheckpointError(
                f"storage '{st.key}' in {WHAT} holds {info.file_size} bytes, "
                f"but {st.numel} elements of {st.dtype} need {nbytes}"
            )
        try:
            with self._zip.open(info) as f:
                raw = f.read(nbytes)
        except Exception as e:  # truncated tar member, CRC error, I/O error
            raise CheckpointError(f"cannot read storage '{st.key}' of {WHAT}: {e}") from e
        if len(raw) != nbytes:
            raise CheckpointError(f"storage '{st.key}' of {WHAT} is truncated")
        np_dtype = "uint16" if st.dtype == "bfloat16" else st.dtype
        order = "<" if self._byteorder == "little" else ">"
        return np.frombuffer(raw, dtype=np.dtype(np_dtype).newbyteorder(order))

    def close(self) -> None:
        self._zip.close()


def _peek(stream: BinaryIO, n: int) -> bytes:
    try:
        stream.seek(0)
        return stream.read(n)
    except Exception:
        return b""


def _find_state_dict(obj: Any) -> Dict[str, TensorRef]:
    if isinstance(obj, dict) and "state_dict" in obj and isinstance(obj["state_dict"], dict):
        obj = obj["state_dict"]
    if not isinstance(obj, dict):
        raise CheckpointError(f"{WHAT} holds a {type(obj).__name__}, not a state_dict")
    out: Dict[str, TensorRef] = {}
    for k, v in obj.items():
        if not isinstance(k, str):
            raise CheckpointError(f"{WHAT} has a non-string state_dict key {k!r}")
        if not isinstance(v, TensorRef):
            raise CheckpointError(f"state_dict entry '{k}' in {WHAT} is a {type(v).__name__}, not a tensor")
        out[k] = v
    return out
