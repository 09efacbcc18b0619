"""Write one reference capture as a GGUF file (gguf-py), the format the engine's reader already knows.

numpy [rows, cols] arrays are stored row-major, so GGUF reports them as ne = [cols, rows]:
`mel` [n_frames, n_mels] is time-major (one mel frame per row).
"""
import gguf
import numpy as np
from gguf import GGUFValueType

ARCH = "parakeet-ref"


class _Writer(gguf.GGUFWriter):
    """gguf-py refuses empty metadata arrays; GGUF itself allows them (type + count 0).

    An empty token list is a real answer (silence), so we write it instead of dropping the key.
    Every key is always written, empty or not.
    """

    def _pack_val(self, val, vtype, add_vtype, sub_type=None):
        if vtype == GGUFValueType.ARRAY and len(val) == 0:
            out = self._pack("I", vtype) if add_vtype else b""
            return out + self._pack("I", sub_type) + self._pack("Q", 0)
        return super()._pack_val(val, vtype, add_vtype, sub_type)


class RefWriter:
    def __init__(self, path: str):
        self.path = path
        self.w = _Writer(path, ARCH)

    def i32(self, key: str, v: int):
        self.w.add_int32(key, int(v))

    def f32(self, key: str, v: float):
        self.w.add_float32(key, float(v))

    def boolean(self, key: str, v: bool):
        self.w.add_bool(key, bool(v))

    def string(self, key: str, v: str):
        # add_string() silently drops "", and an empty transcript is a real answer
        self.w.add_key_value(key, v, GGUFValueType.STRING)

    def i32s(self, key: str, v):
        self.w.add_key_value(key, [int(x) for x in v], GGUFValueType.ARRAY, sub_type=GGUFValueType.INT32)

    def f32s(self, key: str, v):
        self.w.add_key_value(key, [float(x) for x in v], GGUFValueType.ARRAY, sub_type=GGUFValueType.FLOAT32)

    def strings(self, key: str, v):
        self.w.add_key_value(key, [str(x) for x in v], GGUFValueType.ARRAY, sub_type=GGUFValueType.STRING)

    def tensor(self, name: str, a: np.ndarray):
        a = np.ascontiguousarray(a, dtype=np.float32)
        assert a.size > 0, name
        self.w.add_tensor(name, a)

    def close(self):
        self.w.write_header_to_file()
        self.w.write_kv_data_to_file()
        self.w.write_tensors_to_file()
        self.w.close()
