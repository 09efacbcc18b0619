"""Build small ``.nemo`` archives for the converter tests, without PyTorch or NeMo.

* :class:`TorchZipWriter` writes the ``torch.save`` zip format: a protocol-2 pickle (emitted
  opcode by opcode, the way torch's pickler lays out ``_rebuild_tensor_v2`` calls and
  ``('storage', torch.FloatStorage, key, 'cpu', numel)`` persistent ids) plus raw storages.
* :func:`spm_model_bytes` writes a SentencePiece ``ModelProto`` holding only pieces.
* :func:`tiny_model` returns a config and a state_dict with NeMo's names and shapes for a
  small FastConformer of any arch, and :func:`write_nemo` packs them into a tar.
"""

import collections
import copy
import gzip
import io
import struct
import tarfile
import zipfile
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import yaml

_STORAGE_NAMES = {
    "float32": "FloatStorage", "float16": "HalfStorage", "float64": "DoubleStorage", "bfloat16": "BFloat16Storage",
    "int64": "LongStorage", "int32": "IntStorage", "int16": "ShortStorage", "int8": "CharStorage",
    "uint8": "ByteStorage", "bool": "BoolStorage",
}


# --- pickle opcodes (protocol 2) --------------------------------------------------------------
def _global(module: str, name: str) -> bytes:
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def _str(s: str) -> bytes:
    b = s.encode("utf-8")
    return b"X" + struct.pack("<I", len(b)) + b


def _int(i: int) -> bytes:
    return b"J" + struct.pack("<i", i)


def _tuple(items: Sequence[bytes]) -> bytes:
    return b"(" + b"".join(items) + b"t"


class TorchZipWriter:
    """Accumulates storages and tensor views, then writes a torch-format zip checkpoint."""

    def __init__(self, prefix: str = "archive", byteorder: str = "little"):
        self.prefix = prefix
        self.byteorder = byteorder
        self.storages: List[Tuple[str, np.ndarray]] = []  # (dtype name, flat array)
        self.entries: List[Tuple[str, int, int, Tuple[int, ...], Tuple[int, ...]]] = []

    def add_storage(self, flat: np.ndarray, dtype: Optional[str] = None) -> int:
        """``dtype`` overrides the storage type (``'bfloat16'`` with uint16 bit patterns)."""
        self.storages.append((dtype or flat.dtype.name, np.ascontiguousarray(flat).reshape(-1)))
        return len(self.storages) - 1

    def add_view(self, name: str, storage: int, offset: int, shape: Sequence[int], stride: Sequence[int]) -> None:
        self.entries.append((name, storage, offset, tuple(shape), tuple(stride)))

    def add_tensor(self, name: str, array: np.ndarray, dtype: Optional[str] = None) -> None:
        array = np.asarray(array)
        key = self.add_storage(array, dtype)
        strides = []
        acc = 1
        for n in reversed(array.shape):
            strides.insert(0, acc)
            acc *= n
        self.add_view(name, key, 0, array.shape, strides)

    def pickle_bytes(self, wrap_in_state_dict: bool = False) -> bytes:
        out = [b"\x80\x02"]
        if wrap_in_state_dict:
            out += [b"}", _str("epoch"), _int(3), b"s", _str("state_dict")]
        out += [_global("collections", "OrderedDict"), b")R", b"("]
        for name, key, offset, shape, stride in self.entries:
            dtype, flat = self.storages[key]
            pid = _tuple([_str("storage"), _global("torch", _STORAGE_NAMES[dtype]), _str(str(key)), _str("cpu"),
                          _int(flat.size)]) + b"Q"
            args = _tuple([pid, _int(offset), _tuple([_int(n) for n in shape]), _tuple([_int(s) for s in stride]),
                           b"\x89", _global("collections", "OrderedDict") + b")R"])
            out += [_str(name), _global("torch._utils", "_rebuild_tensor_v2"), args, b"R"]
        out.append(b"u")
        if wrap_in_state_dict:
            out.append(b"s")
        out.append(b".")
        return b"".join(out)

    def to_bytes(self, wrap_in_state_dict: bool = False, pickle_override: Optional[bytes] = None) -> bytes:
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
            z.writestr(f"{self.prefix}/data.pkl", pickle_override or self.pickle_bytes(wrap_in_state_dict))
            z.writestr(f"{self.prefix}/byteorder", self.byteorder)
            order = "<" if self.byteorder == "little" else ">"
            for key, (_, flat) in enumerate(self.storages):
                z.writestr(f"{self.prefix}/data/{key}", flat.astype(flat.dtype.newbyteorder(order)).tobytes())
            z.writestr(f"{self.prefix}/version", "3\n")
        return buf.getvalue()


def checkpoint_bytes(state_dict: Dict[str, np.ndarray], wrap_in_state_dict: bool = False) -> bytes:
    w = TorchZipWriter()
    for name, arr in state_dict.items():
        w.add_tensor(name, arr)
    return w.to_bytes(wrap_in_state_dict)


def zip_with_pickle(pickle_data: bytes) -> bytes:
    """A checkpoint zip whose data.pkl is ``pickle_data`` (for hostile-pickle tests)."""
    return TorchZipWriter().to_bytes(pickle_override=pickle_data)


# --- SentencePiece ModelProto ------------------------------------------------------------------
def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _len_field(field: int, payload: bytes) -> bytes:
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def spm_model_bytes(pieces: Sequence[Tuple[str, float, int]]) -> bytes:
    """ModelProto with ``pieces`` (text, score, type), plus a trainer_spec and normalizer_spec
    stand-in (fields 2 and 3) that the reader must skip."""
    body = _len_field(2, _len_field(1, b"ignored.txt") + _varint(3 << 3 | 0) + _varint(64))
    for text, score, ptype in pieces:
        p = _len_field(1, text.encode("utf-8")) + _varint(2 << 3 | 5) + struct.pack("<f", score)
        if ptype != 1:
            p += _varint(3 << 3 | 0) + _varint(ptype)
        body += _len_field(1, p)
    body += _len_field(3, _len_field(1, b"nmt_nfkc"))
    return body


def default_pieces(n: int = 40) -> List[Tuple[str, float, int]]:
    pieces = [("<unk>", 0.0, 2)]
    words = ["▁the", "▁a", "s", "▁é", "t", "▁quick", "ing", "▁北", "er", "▁x"]
    for i in range(1, n):
        text = words[i - 1] if i - 1 < len(words) else f"▁w{i}"
        pieces.append((text, -float(i), 1))
    return pieces


def spm_vocab_bytes(pieces: Sequence[Tuple[str, float, int]]) -> bytes:
    return "".join(f"{t}\t{s:g}\n" for t, s, _ in pieces).encode("utf-8")


# --- tiny NeMo-shaped models ------------------------------------------------------------------
DIMS = dict(feat_in=16, d_model=64, n_heads=2, n_layers=2, ff=256, kernel=9, channels=32, pred=48, joint=40,
            vocab=40, win=400, n_fft=512)
DURATIONS = [0, 1, 2, 3, 4]

_CLASSES = {
    "ctc": "nemo.collections.asr.models.ctc_bpe_models.EncDecCTCModelBPE",
    "rnnt": "nemo.collections.asr.models.rnnt_bpe_models.EncDecRNNTBPEModel",
    "tdt": "nemo.collections.asr.models.rnnt_bpe_models.EncDecRNNTBPEModel",
    "hybrid_rnnt_ctc": "nemo.collections.asr.models.hybrid_rnnt_ctc_bpe_models.EncDecHybridRNNTCTCBPEModel",
    "hybrid_tdt_ctc": "nemo.collections.asr.models.hybrid_rnnt_ctc_bpe_models.EncDecHybridRNNTCTCBPEModel",
}


def tiny_config(arch: str, dims: Optional[dict] = None) -> dict:
    d = dict(DIMS, **(dims or {}))
    tdt = "tdt" in arch
    cfg = {
        "sample_rate": 16000,
        "model_defaults": {"enc_hidden": d["d_model"], "tdt_durations": DURATIONS, "num_tdt_durations": 5},
        "tokenizer": {"dir": None, "type": "bpe", "model_path": "nemo:0a1b_tokenizer.model",
                      "vocab_path": "nemo:0a1b_vocab.txt", "spe_tokenizer_vocab": "nemo:0a1b_tokenizer.vocab"},
        "preprocessor": {
            "_target_": "nemo.collections.asr.modules.AudioToMelSpectrogramPreprocessor",
            "sample_rate": "${model.sample_rate}", "normalize": "per_feature", "window_size": 0.025,
            "window_stride": 0.01, "window": "hann", "features": d["feat_in"], "n_fft": d["n_fft"], "log": True,
            "frame_splicing": 1, "dither": 1.0e-05, "pad_to": 0, "pad_value": 0.0,
        },
        "encoder": {
            "_target_": "nemo.collections.asr.modules.ConformerEncoder", "feat_in": d["feat_in"], "feat_out": -1,
            "n_layers": d["n_layers"], "d_model": d["d_model"], "subsampling": "dw_striding",
            "subsampling_factor": 8, "subsampling_conv_channels": d["channels"], "causal_downsampling": False,
            "ff_expansion_factor": d["ff"] // d["d_model"], "self_attention_model": "rel_pos",
            "n_heads": d["n_heads"], "att_context_size": [-1, -1], "xscaling": True, "untie_biases": True,
            "pos_emb_max_len": 5000, "conv_kernel_size": d["kernel"], "conv_norm_type": "batch_norm",
            "conv_context_size": None, "dropout": 0.1,
        },
        "target": _CLASSES[arch],
        "nemo_version": "3.0.0",
    }
    if arch == "ctc":
        cfg["decoder"] = {"_target_": "nemo.collections.asr.modules.ConvASRDecoder", "feat_in": d["d_model"],
                          "num_classes": d["vocab"], "vocabulary": []}
        return cfg
    cfg["decoder"] = {"_target_": "nemo.collections.asr.modules.RNNTDecoder", "normalization_mode": None,
                      "random_state_sampling": False, "blank_as_pad": True, "vocab_size": d["vocab"],
                      "prednet": {"pred_hidden": d["pred"], "pred_rnn_layers": 1, "t_max": None, "dropout": 0.2}}
    cfg["joint"] = {"_target_": "nemo.collections.asr.modules.RNNTJoint", "log_softmax": None,
                    "num_classes": d["vocab"], "vocabulary": [],
                    "jointnet": {"joint_hidden": d["joint"], "activation": "relu", "dropout": 0.2,
                                 "encoder_hidden": d["d_model"], "pred_hidden": d["pred"]}}
    cfg["decoding"] = {"strategy": "greedy_batch", "greedy": {"max_symbols": 10}}
    cfg["loss"] = {"loss_name": "default"}
    if tdt:
        cfg["joint"]["num_extra_outputs"] = "${model.model_defaults.num_tdt_durations}"
        cfg["decoding"].update(model_type="tdt", durations="${model.model_defaults.tdt_durations}")
        cfg["loss"] = {"loss_name": "tdt", "tdt_kwargs": {"durations": DURATIONS, "sigma": 0.02, "omega": 0.1}}
    if arch.startswith("hybrid"):
        cfg["aux_ctc"] = {"ctc_loss_weight": 0.3, "use_cer": False,
                          "decoder": {"_target_": "nemo.collections.asr.modules.ConvASRDecoder",
                                      "feat_in": d["d_model"], "num_classes": d["vocab"], "vocabulary": []},
                          "decoding": {"strategy": "greedy"}}
    return cfg


def tiny_state_dict(arch: str, dims: Optional[dict] = None, seed: int = 0) -> "collections.OrderedDict[str, np.ndarray]":
    d = dict(DIMS, **(dims or {}))
    rng = np.random.default_rng(seed)
    sd: "collections.OrderedDict[str, np.ndarray]" = collections.OrderedDict()

    def t(name: str, *shape: int) -> None:
        sd[name] = rng.standard_normal(shape).astype(np.float32)

    D, C, H, F, K, V = d["d_model"], d["channels"], d["n_heads"], d["ff"], d["kernel"], d["vocab"]
    win, bins = d["win"], d["n_fft"] // 2 + 1
    sd["preprocessor.featurizer.window"] = np.hanning(win).astype(np.float32)
    sd["preprocessor.featurizer.fb"] = np.abs(rng.standard_normal((1, d["feat_in"], bins))).astype(np.float32)
    for i, shape in ((0, (C, 1, 3, 3)), (2, (C, 1, 3, 3)), (3, (C, C, 1, 1)), (5, (C, 1, 3, 3)), (6, (C, C, 1, 1))):
        t(f"encoder.pre_encode.conv.{i}.weight", *shape)
        t(f"encoder.pre_encode.conv.{i}.bias", C)
    f8 = d["feat_in"]
    for _ in range(3):
        f8 = (f8 - 1) // 2 + 1
    t("encoder.pre_encode.out.weight", D, C * f8)
    t("encoder.pre_encode.out.bias", D)
    for i in range(d["n_layers"]):
        L = f"encoder.layers.{i}"
        for norm in ("norm_feed_forward1",):
            t(f"{L}.{norm}.weight", D), t(f"{L}.{norm}.bias", D)
        t(f"{L}.feed_forward1.linear1.weight", F, D), t(f"{L}.feed_forward1.linear1.bias", F)
        t(f"{L}.feed_forward1.linear2.weight", D, F), t(f"{L}.feed_forward1.linear2.bias", D)
        t(f"{L}.norm_conv.weight", D), t(f"{L}.norm_conv.bias", D)
        t(f"{L}.conv.pointwise_conv1.weight", 2 * D, D, 1), t(f"{L}.conv.pointwise_conv1.bias", 2 * D)
        t(f"{L}.conv.depthwise_conv.weight", D, 1, K), t(f"{L}.conv.depthwise_conv.bias", D)
        for s in ("weight", "bias", "running_mean"):
            t(f"{L}.conv.batch_norm.{s}", D)
        sd[f"{L}.conv.batch_norm.running_var"] = rng.uniform(0.5, 1.5, D).astype(np.float32)
        sd[f"{L}.conv.batch_norm.num_batches_tracked"] = np.array(7, dtype=np.int64)
        t(f"{L}.conv.pointwise_conv2.weight", D, D, 1), t(f"{L}.conv.pointwise_conv2.bias", D)
        t(f"{L}.norm_self_att.weight", D), t(f"{L}.norm_self_att.bias", D)
        t(f"{L}.self_attn.pos_bias_u", H, D // H), t(f"{L}.self_attn.pos_bias_v", H, D // H)
        for proj in ("linear_q", "linear_k", "linear_v", "linear_out"):
            t(f"{L}.self_attn.{proj}.weight", D, D), t(f"{L}.self_attn.{proj}.bias", D)
        t(f"{L}.self_attn.linear_pos.weight", D, D)
        t(f"{L}.norm_feed_forward2.weight", D), t(f"{L}.norm_feed_forward2.bias", D)
        t(f"{L}.feed_forward2.linear1.weight", F, D), t(f"{L}.feed_forward2.linear1.bias", F)
        t(f"{L}.feed_forward2.linear2.weight", D, F), t(f"{L}.feed_forward2.linear2.bias", D)
        t(f"{L}.norm_out.weight", D), t(f"{L}.norm_out.bias", D)
    if arch == "ctc":
        t("decoder.decoder_layers.0.weight", V + 1, D, 1), t("decoder.decoder_layers.0.bias", V + 1)
        return sd
    P, J = d["pred"], d["joint"]
    n_dur = len(DURATIONS) if "tdt" in arch else 0
    t("decoder.prediction.embed.weight", V + 1, P)
    sd["decoder.prediction.embed.weight"][V] = 0.0  # blank row = zero SOS / padding row
    t("decoder.prediction.dec_rnn.lstm.weight_ih_l0", 4 * P, P)
    t("decoder.prediction.dec_rnn.lstm.weight_hh_l0", 4 * P, P)
    t("decoder.prediction.dec_rnn.lstm.bias_ih_l0", 4 * P)
    t("decoder.prediction.dec_rnn.lstm.bias_hh_l0", 4 * P)
    t("joint.pred.weight", J, P), t("joint.pred.bias", J)
    t("joint.enc.weight", J, D), t("joint.enc.bias", J)
    t("joint.joint_net.2.weight", V + 1 + n_dur, J), t("joint.joint_net.2.bias", V + 1 + n_dur)
    if arch.startswith("hybrid"):
        t("ctc_decoder.decoder_layers.0.weight", V + 1, D, 1), t("ctc_decoder.decoder_layers.0.bias", V + 1)
    return sd


def write_nemo(path, cfg: Optional[dict], ckpt: Optional[bytes], pieces=None, compress: bool = False,
               tokenizer_model: bool = True, tokenizer_vocab: bool = True, extra: Optional[Dict[str, bytes]] = None,
               prefix: str = "./") -> None:
    """Pack a ``.nemo`` tar the way NeMo does (``./`` names, uuid-prefixed tokenizer files).

    ``cfg=None`` / ``ckpt=None`` leave that member out. ``extra`` adds raw members by name.
    """
    pieces = default_pieces() if pieces is None else pieces
    members: List[Tuple[str, bytes]] = []
    if cfg is not None:
        members.append((f"{prefix}model_config.yaml", yaml.safe_dump(cfg, sort_keys=False).encode("utf-8")))
    if ckpt is not None:
        members.append((f"{prefix}model_weights.ckpt", ckpt))
    if tokenizer_model:
        members.append((f"{prefix}0a1b_tokenizer.model", spm_model_bytes(pieces)))
    if tokenizer_vocab:
        members.append((f"{prefix}0a1b_tokenizer.vocab", spm_vocab_bytes(pieces)))
    members.append((f"{prefix}0a1b_vocab.txt", b"the\n##s\n"))
    for name, data in (extra or {}).items():
        members.append((name, data))
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:") as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    data = buf.getvalue()
    with open(path, "wb") as f:
        f.write(gzip.compress(data) if compress else data)


def write_tiny_nemo(path, arch: str, dims: Optional[dict] = None, **kwargs):
    """A tiny model of ``arch`` at ``path``; returns (config, state_dict)."""
    cfg = tiny_config(arch, dims)
    sd = tiny_state_dict(arch, dims)
    write_nemo(path, cfg, checkpoint_bytes(sd), pieces=default_pieces((dims or {}).get("vocab", DIMS["vocab"])),
               **kwargs)
    return copy.deepcopy(cfg), sd


# --- reading a GGUF back -----------------------------------------------------------------------
def read_gguf(path):
    """(fields, tensors): fields[key] = (type names, value); tensors[name] = (type name, ne, data)."""
    import gguf

    reader = gguf.GGUFReader(path)
    fields = {}
    for key, f in reader.fields.items():
        if key.startswith("GGUF."):
            continue
        types = [t.name for t in f.types]
        if types[0] == "ARRAY":
            if types[1] == "STRING":
                value = [bytes(f.parts[i]).decode("utf-8") for i in f.data]
            else:
                value = [f.parts[i].tolist()[0] for i in f.data]
        elif types[0] == "STRING":
            value = bytes(f.parts[f.data[0]]).decode("utf-8")
        else:
            value = f.parts[f.data[0]].tolist()[0]
        fields[key] = (types, value)
    tensors = {t.name: (t.tensor_type.name, [int(n) for n in t.shape], np.array(t.data)) for t in reader.tensors}
    return fields, tensors
