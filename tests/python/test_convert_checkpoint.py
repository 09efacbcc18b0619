"""The torch-free checkpoint reader rebuilds exactly what torch saved, and runs nothing else."""

import io
import os
import pickle
import subprocess

import numpy as np
import pytest

from convert_helpers import TorchZipWriter, _str, checkpoint_bytes, zip_with_pickle
from parakeet_py.convert.errors import CheckpointError, UnsafePickleError
from parakeet_py.convert.torch_checkpoint import TorchCheckpoint

from data_helpers import DATA as _DATA

DATA = _DATA / "convert"


def load(data: bytes) -> dict:
    ck = TorchCheckpoint(io.BytesIO(data))
    return {name: ref.numpy() for name, ref in ck.tensors.items()}


# --- files written by real torch.save (tools/fixtures/make_torch_fixtures.py) ---------------
@pytest.mark.parametrize("fixture", ["views.ckpt", "wrapped.ckpt"])
def test_torch_saved_tensors_are_rebuilt_exactly_with_dtype_shape_stride_and_offset(fixture):
    expected = np.load(DATA / "views_expected.npz")
    with open(DATA / fixture, "rb") as f:
        ck = TorchCheckpoint(f)
        names = list(ck.tensors)
        got = {n: ck.tensors[n].numpy() for n in names}
    assert names == [k for k in expected.files if not k.endswith(".dtype")]  # state_dict order kept
    for name in names:
        want = expected[name]
        assert got[name].shape == want.shape, name
        assert got[name].dtype == want.dtype, name
        assert got[name].tobytes() == want.tobytes(), name  # bitwise
        assert got[name].flags["C_CONTIGUOUS"]
        assert ck.tensors[name].dtype == str(expected[f"{name}.dtype"]) or name == "bf16"


def test_bfloat16_storage_is_widened_to_float32():
    with open(DATA / "views.ckpt", "rb") as f:
        ref = TorchCheckpoint(f).tensors["bf16"]
        assert ref.dtype == "bfloat16" and ref.is_floating
        assert ref.numpy().dtype == np.float32


def test_legacy_non_zip_checkpoint_is_refused_with_a_clear_message():
    with open(DATA / "legacy.ckpt", "rb") as f, pytest.raises(CheckpointError, match="legacy .*not supported"):
        TorchCheckpoint(f)


# --- files written by the torch-free test writer -----------------------------------------------
def test_written_state_dict_round_trips_and_keeps_order():
    rng = np.random.default_rng(5)
    sd = {"b.weight": rng.standard_normal((3, 7)).astype(np.float32), "a": np.arange(5, dtype=np.int64),
          "h": rng.standard_normal(4).astype(np.float16), "one": np.ones((1,), np.float32)}
    got = load(checkpoint_bytes(sd))
    assert list(got) == list(sd)
    for k in sd:
        assert got[k].dtype == sd[k].dtype and got[k].tobytes() == sd[k].tobytes()


def test_checkpoint_wrapping_the_state_dict_under_state_dict_key_is_accepted():
    sd = {"w": np.arange(6, dtype=np.float32).reshape(2, 3)}
    got = load(checkpoint_bytes(sd, wrap_in_state_dict=True))
    assert list(got) == ["w"] and np.array_equal(got["w"], sd["w"])


def test_views_share_a_storage_with_offsets_and_strides():
    w = TorchZipWriter()
    key = w.add_storage(np.arange(24, dtype=np.float32))
    w.add_view("full", key, 0, (4, 6), (6, 1))
    w.add_view("transposed", key, 0, (6, 4), (1, 6))
    w.add_view("tail", key, 13, (2, 3), (6, 2))
    w.add_view("broadcast", key, 5, (3, 2), (0, 1))
    got = load(w.to_bytes())
    base = np.arange(24, dtype=np.float32)
    assert np.array_equal(got["full"], base.reshape(4, 6))
    assert np.array_equal(got["transposed"], base.reshape(4, 6).T)
    assert np.array_equal(got["tail"], np.array([[13, 15, 17], [19, 21, 23]], np.float32))
    assert np.array_equal(got["broadcast"], np.array([[5, 6]] * 3, np.float32))


def test_big_endian_checkpoint_is_byte_swapped():
    w = TorchZipWriter(byteorder="big")
    w.add_tensor("x", np.array([1.5, -2.25, 3e-8], np.float32))
    w.add_tensor("i", np.array([1, -2, 1 << 40], np.int64))
    got = load(w.to_bytes())
    assert got["x"].tolist() == [1.5, -2.25, np.float32(3e-8)]
    assert got["i"].tolist() == [1, -2, 1 << 40]


def test_view_reaching_past_its_storage_is_refused():
    w = TorchZipWriter()
    key = w.add_storage(np.arange(10, dtype=np.float32))
    w.add_view("bad", key, 4, (2, 4), (4, 1))  # touches element 11 of 10
    ck = TorchCheckpoint(io.BytesIO(w.to_bytes()))
    with pytest.raises(CheckpointError, match="reaches past"):
        ck.tensors["bad"].numpy()


def test_storage_shorter_than_declared_is_refused():
    w = TorchZipWriter()
    w.add_tensor("x", np.arange(8, dtype=np.float32))
    lying = w.pickle_bytes().replace(b"J\x08\x00\x00\x00tQ", b"J\x09\x00\x00\x00tQ")  # numel 8 → 9
    ck = TorchCheckpoint(io.BytesIO(w.to_bytes(pickle_override=lying)))
    with pytest.raises(CheckpointError, match="need 36"):
        ck.tensors["x"].numpy()


def test_not_a_zip_is_refused():
    with pytest.raises(CheckpointError, match="not a PyTorch zip checkpoint"):
        TorchCheckpoint(io.BytesIO(b"hello, this is not a checkpoint" * 10))


def test_truncated_pickle_is_a_checkpoint_error():
    w = TorchZipWriter()
    w.add_tensor("x", np.zeros(3, np.float32))
    with pytest.raises(CheckpointError, match="cannot unpickle"):
        TorchCheckpoint(io.BytesIO(zip_with_pickle(w.pickle_bytes()[:-5])))


def test_non_tensor_state_dict_value_is_refused():
    data = b"\x80\x02ccollections\nOrderedDict\n)R(X\x01\x00\x00\x00aJ\x05\x00\x00\x00u."
    with pytest.raises(CheckpointError, match="not a tensor"):
        TorchCheckpoint(io.BytesIO(zip_with_pickle(data)))


# --- hostile pickles: refused before anything runs -----------------------------------------------
class _System:
    def __init__(self, cmd):
        self.cmd = cmd

    def __reduce__(self):
        return (os.system, (self.cmd,))


class _Eval:
    def __init__(self, code):
        self.code = code

    def __reduce__(self):
        return (eval, (self.code,))


class _Popen:
    def __init__(self, argv):
        self.argv = argv

    def __reduce__(self):
        return (subprocess.Popen, (self.argv,))


@pytest.mark.parametrize("protocol", [2, 4])  # GLOBAL and STACK_GLOBAL opcodes
def test_pickle_calling_os_system_is_refused_and_nothing_runs(tmp_path, protocol):
    marker = tmp_path / "pwned"
    data = pickle.dumps(_System(f"touch {marker}"), protocol=protocol)
    with pytest.raises(UnsafePickleError, match=r"refusing to load '(os|posix|nt)\.system' from model_weights\.ckpt: "
                                                r"only tensors are allowed"):
        TorchCheckpoint(io.BytesIO(zip_with_pickle(data)))
    assert not marker.exists()


def test_pickle_calling_builtins_eval_is_refused_and_nothing_runs(tmp_path):
    marker = tmp_path / "pwned"
    data = pickle.dumps(_Eval(f"open({str(marker)!r}, 'w').write('x')"), protocol=2, fix_imports=False)
    with pytest.raises(UnsafePickleError, match=r"refusing to load 'builtins\.eval'"):
        TorchCheckpoint(io.BytesIO(zip_with_pickle(data)))
    assert not marker.exists()


def test_hostile_call_hidden_inside_a_valid_state_dict_is_refused(tmp_path):
    marker = tmp_path / "pwned"
    w = TorchZipWriter()
    w.add_tensor("ok", np.zeros(3, np.float32))
    popen = pickle.dumps(_Popen(["touch", str(marker)]), protocol=2, fix_imports=False)[2:-1]  # strip PROTO and STOP
    data = w.pickle_bytes()
    data = data[:-2] + b"X\x04\x00\x00\x00evil" + popen + data[-2:]  # one more SETITEMS entry
    with pytest.raises(UnsafePickleError, match=r"refusing to load 'subprocess\.Popen'"):
        TorchCheckpoint(io.BytesIO(zip_with_pickle(data)))
    assert not marker.exists()


@pytest.mark.parametrize("module,name", [("torch", "load"), ("collections", "defaultdict"),
                                         ("torch._utils", "_rebuild_qtensor"), ("numpy", "frombuffer"),
                                         ("torch", "FloatStorage.__init__")])
def test_names_near_the_allowlist_are_refused(module, name):
    data = b"\x80\x02c" + module.encode() + b"\n" + name.encode() + b"\n)R."
    with pytest.raises(UnsafePickleError, match=f"refusing to load '{module}.{name}'"):
        TorchCheckpoint(io.BytesIO(zip_with_pickle(data)))


def test_persistent_id_other_than_a_storage_is_refused():
    pid = b"(X\x04\x00\x00\x00fileX\x0b\x00\x00\x00/etc/passwdtQ"
    data = b"\x80\x02ccollections\nOrderedDict\n)R(X\x01\x00\x00\x00a" + pid + b"u."
    with pytest.raises(UnsafePickleError, match="refusing persistent id"):
        TorchCheckpoint(io.BytesIO(zip_with_pickle(data)))


def test_rebuild_tensor_with_something_other_than_a_storage_is_refused():
    args = b"(X\x03\x00\x00\x00strJ\x00\x00\x00\x00(J\x01\x00\x00\x00t(J\x01\x00\x00\x00t\x89ccollections\nOrderedDict\n)Rt"
    data = (b"\x80\x02ccollections\nOrderedDict\n)R(X\x01\x00\x00\x00a"
            b"ctorch._utils\n_rebuild_tensor_v2\n" + args + b"Ru.")
    with pytest.raises(UnsafePickleError, match="not a storage"):
        TorchCheckpoint(io.BytesIO(zip_with_pickle(data)))


def test_build_opcode_on_a_tensor_is_refused():
    w = TorchZipWriter()
    w.add_tensor("x", np.zeros(2, np.float32))
    data = w.pickle_bytes()
    # Insert "}b" (EMPTY_DICT, BUILD) right after the tensor's REDUCE: sets state on the tensor.
    at = data.rindex(b"R")
    data = data[: at + 1] + b"}b" + data[at + 1:]
    with pytest.raises(UnsafePickleError, match="refusing to set state"):
        TorchCheckpoint(io.BytesIO(zip_with_pickle(data)))


def test_storage_types_are_not_callable_as_constructors():
    data = b"\x80\x02ctorch\nFloatStorage\n(J\x05\x00\x00\x00tR."
    with pytest.raises(CheckpointError):
        TorchCheckpoint(io.BytesIO(zip_with_pickle(data)))



# --- BUILD cannot reach objects shared beyond one file ---------------------------------------
def _build_before_a_state_dict(target: bytes, slot_state: bytes) -> bytes:
    """A checkpoint whose pickle first BUILDs the state (None, ``slot_state``) onto the object
    that ``target`` pushes and drops it, then holds an ordinary one-tensor state_dict."""
    w = TorchZipWriter()
    w.add_tensor("x", np.arange(4, dtype=np.float32))
    ordinary = w.pickle_bytes()
    prelude = target + b"(N" + slot_state + b"tb0"  # (None, slot_state), BUILD, POP
    return w.to_bytes(pickle_override=ordinary[:2] + prelude + ordinary[2:])


def _dict(key: str, value: bytes) -> bytes:
    return b"}" + _str(key) + value + b"s"


def test_build_on_a_storage_type_is_refused_and_later_files_read_right():
    # Before: the FloatStorage object was one per process, so this set float16 for every
    # later checkpoint, which then read its float32 weights as halves without an error.
    hostile = _build_before_a_state_dict(b"ctorch\nFloatStorage\n", _dict("dtype", _str("float16")))
    with pytest.raises(UnsafePickleError, match="refusing to set state"):
        TorchCheckpoint(io.BytesIO(hostile))
    x = load(checkpoint_bytes({"x": np.arange(4, dtype=np.float32)}))["x"]
    assert x.dtype == np.float32 and x.tolist() == [0.0, 1.0, 2.0, 3.0]


@pytest.mark.parametrize("target", [b"ctorch._utils\n_rebuild_tensor_v2\n", b"ctorch._utils\n_rebuild_parameter\n",
                                    b"ccollections\nOrderedDict\n", b"ctorch\nfloat32\n"])
def test_build_on_an_allowed_callable_or_dtype_is_refused(target):
    from parakeet_py.convert import torch_checkpoint as tc
    defaults = tc._rebuild_tensor_v2.__defaults__, tc._rebuild_parameter.__defaults__
    # (True, None, None) as new defaults: requires_grad=True for every later tensor.
    hostile = _build_before_a_state_dict(target, _dict("__defaults__", b"(\x88NNt"))
    with pytest.raises(UnsafePickleError, match="refusing to set state"):
        TorchCheckpoint(io.BytesIO(hostile))
    assert (tc._rebuild_tensor_v2.__defaults__, tc._rebuild_parameter.__defaults__) == defaults


def test_build_on_the_state_dict_takes_only_torchs_metadata():
    w = TorchZipWriter()
    w.add_tensor("x", np.arange(4, dtype=np.float32))
    ordinary = w.pickle_bytes()
    # torch.save writes the state_dict's _metadata attribute with a BUILD after the items.
    with_metadata = ordinary[:-1] + _dict("_metadata", b"}") + b"b."
    assert load(w.to_bytes(pickle_override=with_metadata))["x"].tolist() == [0.0, 1.0, 2.0, 3.0]
    other = ordinary[:-1] + _dict("update", b"N") + b"b."
    with pytest.raises(UnsafePickleError, match="refusing to set state"):
        TorchCheckpoint(io.BytesIO(w.to_bytes(pickle_override=other)))


# --- size caps ---------------------------------------------------------------------------------
def test_a_stride_zero_view_of_a_huge_shape_is_refused_before_allocating():
    w = TorchZipWriter()
    key = w.add_storage(np.zeros(1, np.float32))
    w.add_view("x", key, 0, (1 << 20, 1 << 20), (0, 0))  # 4 TiB as float32, from one element
    ck = TorchCheckpoint(io.BytesIO(w.to_bytes()))
    with pytest.raises(CheckpointError, match="elements .* from a storage of 1 elements"):
        ck.tensors["x"].numpy()


def test_a_small_broadcast_view_still_reads():
    w = TorchZipWriter()
    key = w.add_storage(np.array([7.0], np.float32))
    w.add_view("x", key, 0, (3, 2), (0, 0))
    assert load(w.to_bytes())["x"].tolist() == [[7.0, 7.0], [7.0, 7.0], [7.0, 7.0]]


def test_an_oversized_data_pkl_is_refused_unread(monkeypatch):
    from parakeet_py.convert import torch_checkpoint as tc
    monkeypatch.setattr(tc, "MAX_PICKLE_BYTES", 1000)
    w = TorchZipWriter()
    for i in range(40):
        w.add_tensor(f"tensor_with_a_long_name_{i}", np.zeros(1, np.float32))
    with pytest.raises(CheckpointError, match="data.pkl is .* bytes, more than the 1000"):
        TorchCheckpoint(io.BytesIO(w.to_bytes()))
