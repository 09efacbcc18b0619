"""``.nemo`` → GGUF: the steps, in order.

1. open the tar (:mod:`.nemo_archive`), read ``model_config.yaml``;
2. index ``model_weights.ckpt`` with the tensor-only unpickler (:mod:`.torch_checkpoint`);
3. read the SentencePiece pieces and their scores (:mod:`.tokenizer`);
4. validate the config against the engine and the tensor shapes, derive the metadata
   (:mod:`.nemo_config`);
5. plan each tensor's stored type (:mod:`.quantize`) and stream them into the GGUF
   (:mod:`.gguf_writer`).

Tensor names are the state_dict keys verbatim and numpy shapes are written as they are
(gguf reverses them into ggml's ``ne``, so a torch ``[N, K]`` weight gets ``ne0 = K``).
0-d entries (``num_batches_tracked``) and the preprocessor's buffers other than
``featurizer.fb`` and ``featurizer.window`` are skipped.
"""

import time
from pathlib import Path
from typing import List, Optional, Tuple

import numpy as np

from . import gguf_schema as schema
from . import quantize
from .errors import ConversionError, TokenizerError, UnsupportedModelError
from .gguf_writer import FILE_TYPES, GGML_TYPES, TensorPlan, write_gguf
from .meta_value import MetaValue
from .nemo_archive import NemoArchive
from .nemo_config import NemoConfig, build_model_spec
from .report import ConversionReport
from .sortformer_config import build_diarization_spec, gguf_tensor_name, is_sortformer
from .tokenizer import Piece, pieces_from_model_proto, pieces_from_vocab_text
from .torch_checkpoint import TensorRef, TorchCheckpoint

KEPT_PREPROCESSOR_TENSORS = (schema.MEL_FILTERBANK, schema.MEL_WINDOW)


def convert_nemo(in_path, out_path, out_type: str = "f32", name: Optional[str] = None) -> ConversionReport:
    """Convert the ``.nemo`` file ``in_path`` into a GGUF file at ``out_path``.

    ``out_type``: ``f32`` (every tensor F32), or one of ``f16``, ``q8_0``, ``q6_k``, ``q5_k``,
    ``q5_1``, ``q5_0``, ``q4_k``, ``q4_1``, ``q4_0`` (the allowlisted matmul weights that fit the
    type's blocks halved / quantised, everything else F32; the report's ``kept`` says which
    allowlisted weights did not fit). ``name`` sets ``general.name``
    (default: the input file's stem). Raises :class:`ConversionError` (or a subclass) with a
    readable message on any problem; ``out_path`` is then left untouched.
    """
    if out_type not in quantize.OUT_TYPES:
        raise ConversionError(f"unknown output type {out_type!r} (choose from {', '.join(quantize.OUT_TYPES)})")
    start = time.perf_counter()
    in_path, out_path = Path(in_path), Path(out_path)
    with NemoArchive(in_path) as archive:
        cfg = NemoConfig.from_yaml(archive.read_bytes(archive.require("model_config.yaml")))
        with archive.open(archive.require("model_weights.ckpt")) as ckpt_stream:
            ckpt = TorchCheckpoint(ckpt_stream)
            selected, skipped, skip_warnings = select_tensors(ckpt.tensors)
            shapes = {n: t.shape for n, t in selected}
            if is_sortformer(cfg):  # a diarizer: no tokenizer; one tensor renamed (gguf_tensor_name)
                pieces, warnings = [], []
                spec = build_diarization_spec(cfg, shapes)
                selected = [(gguf_tensor_name(n), t) for n, t in selected]
            else:
                pieces, warnings = read_tokenizer_pieces(archive, cfg)
                spec = build_model_spec(cfg, shapes, [p.text for p in pieces])
            gguf_name = name or in_path.stem
            metadata = [
                MetaValue(schema.GENERAL_NAME, "str", gguf_name),
                MetaValue(schema.GENERAL_FILE_TYPE, "u32", int(FILE_TYPES[out_type])),
            ] + spec.metadata + ([tokenizer_scores(pieces)] if pieces else [])
            plans = [plan_tensor(n, t, out_type) for n, t in selected]
            size = write_gguf(out_path, metadata, plans)
            ckpt.close()

    counts: dict = {}
    for p in plans:
        counts[p.ggml_type.name] = counts.get(p.ggml_type.name, 0) + 1
    return ConversionReport(
        input=str(in_path), output=str(out_path), out_type=out_type, arch=spec.arch, name=gguf_name,
        n_tensors=len(plans), type_counts=counts, skipped=skipped, bytes_written=size,
        seconds=time.perf_counter() - start, metadata=summarise_metadata(metadata),
        warnings=warnings + skip_warnings + spec.warnings,
        kept=[why for n, t in selected if (why := quantize.storage_decision(n, t.shape, out_type)[1])],
    )


def tokenizer_scores(pieces: List[Piece]) -> MetaValue:
    """``parakeet.tokenizer.scores`` (index = token id), as parakeet.cpp's converter writes it:
    the SentencePiece scores that phrase text (hotwords) is segmented with, so the engine
    tokenises text exactly as SentencePiece's BPE ``encode()`` does."""
    return MetaValue(schema.TOKENIZER_SCORES, "f32[]", [float(p.score) for p in pieces])


def summarise_metadata(metadata: List[MetaValue]) -> dict:
    out = {}
    for m in metadata:
        if m.key == schema.TOKENIZER_PIECES:
            out[m.key] = f"[{len(m.value)} pieces]"
        elif m.key == schema.TOKENIZER_SCORES:
            out[m.key] = f"[{len(m.value)} scores]"
        else:
            out[m.key] = m.value
    return out


def select_tensors(tensors: "dict[str, TensorRef]") -> Tuple[List[Tuple[str, TensorRef]], List[str], List[str]]:
    """Split the state_dict into (written, skipped names, warnings), keeping its order."""
    selected, skipped, warnings = [], [], []
    for name, ref in tensors.items():
        if ref.ndim == 0 or (name.startswith("preprocessor.") and name not in KEPT_PREPROCESSOR_TENSORS):
            skipped.append(name)
        elif not ref.is_floating:
            skipped.append(name)
            warnings.append(f"skipped non-float tensor '{name}' ({ref.dtype})")
        elif ref.ndim > 4:
            raise UnsupportedModelError(f"tensor '{name}' has {ref.ndim} dimensions; GGUF allows at most 4")
        else:
            selected.append((name, ref))
    return selected, skipped, warnings


def plan_tensor(name: str, ref: TensorRef, out_type: str) -> TensorPlan:
    kind = quantize.storage_type(name, ref.shape, out_type)

    def produce() -> np.ndarray:
        x = ref.numpy().astype(np.float32, copy=False)
        if not np.isfinite(x).all():
            raise ConversionError(f"tensor '{name}' contains NaN or infinite values; refusing to convert it")
        return quantize.encode(x, kind, name)

    return TensorPlan(name, tuple(ref.shape), GGML_TYPES[kind], quantize.encoded_nbytes(ref.shape, kind), produce)


def _tokenizer_member(archive: NemoArchive, ref, suffix: str) -> Optional[str]:
    """The member a config path like ``nemo:<uuid>_tokenizer.model`` names, else the only ``*<suffix>``."""
    if isinstance(ref, str) and ref:
        found = archive.find(ref.split(":", 1)[-1].replace("\\", "/").rsplit("/", 1)[-1])
        if found:
            return found
    return archive.find_suffix(suffix)


def read_tokenizer_pieces(archive: NemoArchive, cfg: NemoConfig) -> Tuple[List[Piece], List[str]]:
    """SentencePiece pieces from the ``.model`` member, falling back to the ``.vocab`` text."""
    tok = cfg.get("tokenizer", None)
    if not isinstance(tok, dict):
        raise UnsupportedModelError("the config has no 'tokenizer' section: character-based models are not supported")
    ttype = cfg.get("tokenizer.type", "bpe")
    if ttype != "bpe":
        raise UnsupportedModelError(f"tokenizer type {ttype!r} is not supported (only SentencePiece, type 'bpe')")
    warnings: List[str] = []
    model = _tokenizer_member(archive, cfg.get("tokenizer.model_path", None), "tokenizer.model")
    if model is not None:
        try:
            return pieces_from_model_proto(archive.read_bytes(model)), warnings
        except TokenizerError as e:
            warnings.append(f"could not read {model} ({e}); using the .vocab file")
    vocab = _tokenizer_member(archive, cfg.get("tokenizer.spe_tokenizer_vocab", None), "tokenizer.vocab")
    if vocab is not None:
        return pieces_from_vocab_text(archive.read_bytes(vocab)), warnings
    reason = warnings[0] if warnings else "no '*tokenizer.model' or '*tokenizer.vocab' member"
    raise TokenizerError(f"{archive.path}: no usable SentencePiece tokenizer ({reason})")
