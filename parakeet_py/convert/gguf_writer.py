"""Write a GGUF v3 file with the ``gguf`` package, one tensor in memory at a time.

The header (metadata and tensor descriptions) is written first from the plans, then each
tensor is produced, encoded, written and dropped, so converting a multi-GB model never
holds more than one tensor. The file appears under its final name only when complete
(written to a temporary file in the same folder, then renamed).
"""

import inspect
import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, List, Sequence, Tuple

import gguf
import numpy as np

from . import gguf_schema as schema
from .errors import ConversionError
from .meta_value import MetaValue

ARCHITECTURE = schema.ARCHITECTURE

_T = gguf.GGMLQuantizationType
GGML_TYPES = {"f32": _T.F32, "f16": _T.F16, "q8_0": _T.Q8_0, "q6_k": _T.Q6_K, "q5_k": _T.Q5_K,
              "q5_1": _T.Q5_1, "q5_0": _T.Q5_0, "q4_k": _T.Q4_K, "q4_1": _T.Q4_1, "q4_0": _T.Q4_0}
TYPE_NAMES = {v: k for k, v in GGML_TYPES.items()}  # ggml type → our lower-case name
_F = gguf.LlamaFileType
FILE_TYPES = {  # general.file_type, as llama.cpp's tools read it (a K-quant file is "_S": one type)
    "f32": _F.ALL_F32, "f16": _F.MOSTLY_F16, "q8_0": _F.MOSTLY_Q8_0, "q6_k": _F.MOSTLY_Q6_K,
    "q5_k": _F.MOSTLY_Q5_K_S, "q5_1": _F.MOSTLY_Q5_1, "q5_0": _F.MOSTLY_Q5_0,
    "q4_k": _F.MOSTLY_Q4_K_S, "q4_1": _F.MOSTLY_Q4_1, "q4_0": _F.MOSTLY_Q4_0,
}

_SCALAR_KINDS = {
    "u32": gguf.GGUFValueType.UINT32,
    "i32": gguf.GGUFValueType.INT32,
    "f32": gguf.GGUFValueType.FLOAT32,
    "bool": gguf.GGUFValueType.BOOL,
    "str": gguf.GGUFValueType.STRING,
}
_ARRAY_KINDS = {
    "i32[]": gguf.GGUFValueType.INT32,
    "f32[]": gguf.GGUFValueType.FLOAT32,
    "str[]": gguf.GGUFValueType.STRING,
}


@dataclass
class TensorPlan:
    """One tensor to write: its name, element shape (numpy order), ggml type and bytes.

    ``produce`` returns the encoded data: a float32/float16 array of ``shape``, or for a
    block-quantised type the raw bytes as a uint8 array of shape (rows, bytes per row).
    """

    name: str
    shape: Tuple[int, ...]
    ggml_type: "gguf.GGMLQuantizationType"
    nbytes: int
    produce: Callable[[], np.ndarray]


# gguf < 0.11 cannot be told an array's element type; it infers it from the first element
# (int → INT32, float → FLOAT32, str → STRING), which is right for every array this schema holds.
_HAS_SUB_TYPE = "sub_type" in inspect.signature(gguf.GGUFWriter.add_key_value).parameters


def _add_array(writer: "gguf.GGUFWriter", key: str, values: list, sub_type) -> None:
    if not values:
        raise ConversionError(f"metadata array '{key}' is empty; GGUF cannot store an empty array")
    if _HAS_SUB_TYPE:
        writer.add_key_value(key, values, gguf.GGUFValueType.ARRAY, sub_type=sub_type)
        return
    if gguf.GGUFValueType.get_type(values[0]) != sub_type:
        raise ConversionError(f"metadata array '{key}' holds {sub_type.name} values, which this version of the "
                              "gguf package cannot write; upgrade gguf")
    writer.add_key_value(key, values, gguf.GGUFValueType.ARRAY)


def _add_metadata(writer: "gguf.GGUFWriter", meta: MetaValue) -> None:
    if meta.kind in _SCALAR_KINDS:
        writer.add_key_value(meta.key, meta.value, _SCALAR_KINDS[meta.kind])
    elif meta.kind in _ARRAY_KINDS:
        _add_array(writer, meta.key, list(meta.value), _ARRAY_KINDS[meta.kind])
    elif meta.kind == "raw":  # (value, GGUFValueType, sub_type) copied from another GGUF file
        value, vtype, sub_type = meta.value
        if vtype == gguf.GGUFValueType.ARRAY:
            _add_array(writer, meta.key, value, sub_type)
        else:
            writer.add_key_value(meta.key, value, vtype)
    else:
        raise ValueError(f"unknown metadata kind {meta.kind!r} for {meta.key}")


def _byte_shape(plan: TensorPlan) -> Tuple[Tuple[int, ...], np.dtype]:
    """The (shape, dtype) ``gguf.GGUFWriter.add_tensor_info`` expects for ``plan``."""
    if plan.ggml_type == gguf.GGMLQuantizationType.F32:
        return plan.shape, np.dtype(np.float32)
    if plan.ggml_type == gguf.GGMLQuantizationType.F16:
        return plan.shape, np.dtype(np.float16)
    block, type_size = gguf.GGML_QUANT_SIZES[plan.ggml_type]
    row = plan.shape[-1] // block * type_size
    return (*plan.shape[:-1], row), np.dtype(np.uint8)


def write_gguf(path, metadata: Sequence[MetaValue], tensors: Iterable[TensorPlan],
               architecture: str = ARCHITECTURE) -> int:
    """Write ``metadata`` and ``tensors`` (in order) to ``path``; returns the file size.

    ``architecture`` is general.architecture (another model kind's, e.g. "silero_vad")."""
    path = Path(path)
    plans: List[TensorPlan] = list(tensors)
    # A unique sibling name, opened by the writer itself so the file gets the usual umask mode.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.part")
    writer = None
    try:
        writer = gguf.GGUFWriter(tmp, architecture)
        for meta in metadata:
            _add_metadata(writer, meta)
        for plan in plans:
            shape, dtype = _byte_shape(plan)
            writer.add_tensor_info(plan.name, shape, dtype, plan.nbytes, raw_dtype=plan.ggml_type)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_ti_data_to_file()
        for plan in plans:
            data = plan.produce()
            if data.nbytes != plan.nbytes:
                raise AssertionError(f"{plan.name}: produced {data.nbytes} bytes, planned {plan.nbytes}")
            writer.write_tensor_data(data)
            del data
        writer.close()
        os.replace(tmp, path)
    except OSError as e:
        _discard(writer, tmp)
        raise ConversionError(f"cannot write {path}: {e.strerror or e}") from e
    except BaseException:
        _discard(writer, tmp)
        raise
    return path.stat().st_size


def _discard(writer, tmp: Path) -> None:
    if writer is not None:
        writer.close()
    if tmp.exists():
        tmp.unlink()
