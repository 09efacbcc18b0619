"""The converter and the engine cite one GGUF schema.

The engine's table is ``libparakeet/src/model/gguf_schema.h``; the converter's names are in
``parakeet_py/convert/gguf_schema.py``. Every name the converter uses must be the engine's,
under the same name (``kEncoderDModel`` is ``ENCODER_D_MODEL``) and with the same spelling;
every key the engine reads must be one the converter writes; and what the converter writes
for a model must be keys of the table.
"""

import re
from pathlib import Path

import pytest

from parakeet_py.convert import gguf_schema
from parakeet_py.convert.convert import tokenizer_scores
from parakeet_py.convert.nemo_config import NemoConfig, build_model_spec
from parakeet_py.convert.tokenizer import Piece
from parakeet_py.synthetic_model import ARCH_TINY, nemo_config, pieces, state_dict_layout

HEADER = Path(__file__).resolve().parents[2] / "libparakeet" / "src" / "model" / "gguf_schema.h"

# `inline constexpr char kName[] = <one or more adjacent string literals>;`
_CONSTANT = re.compile(r"inline\s+constexpr\s+char\s+(k\w+)\[\]\s*=\s*((?:\s*(?:R\"\((?:.|\n)*?\)\"|\"(?:[^\"\\\n]|\\.)*\"))+)\s*;")
_LITERAL = re.compile(r"R\"\(((?:.|\n)*?)\)\"|\"((?:[^\"\\\n]|\\.)*)\"")


def _cpp_constants() -> dict:
    text = HEADER.read_text(encoding="utf-8")
    out = {}
    for name, literals in _CONSTANT.findall(text):
        value = ""
        for raw, plain in _LITERAL.findall(literals):
            if plain:
                assert "\\" not in plain, f"{name}: escapes in a plain literal are not parsed here; use R\"(...)\""
            value += raw or plain
        out[name] = value
    return out


def _python_name(cpp_name: str) -> str:
    """kEncoderDModel -> ENCODER_D_MODEL, kPreprocessorNFft -> PREPROCESSOR_N_FFT."""
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", cpp_name[1:])
    return words.upper()


def _python_constants() -> dict:
    return {k: v for k, v in vars(gguf_schema).items() if k.isupper() and isinstance(v, str)}


def _is_key(value: str) -> bool:
    return value.startswith(("parakeet.", "general.")) and value not in ("parakeet.",)


CPP = _cpp_constants()
PY = _python_constants()


def test_the_header_parses_into_a_table():
    assert len(CPP) > 60
    assert CPP["kEncoderDModel"] == "parakeet.encoder.d_model"
    assert CPP["kQuantisableWeights"].startswith(r"encoder\.layers\.\d+\.feed_forward")


@pytest.mark.parametrize("py_name", sorted(PY))
def test_every_converter_name_is_the_engines(py_name):
    by_python_name = {_python_name(k): (k, v) for k, v in CPP.items()}
    assert py_name in by_python_name, f"{py_name} has no counterpart in {HEADER.name}"
    cpp_name, value = by_python_name[py_name]
    assert PY[py_name] == value, f"{py_name} = {PY[py_name]!r} but {cpp_name} = {value!r}"


def test_every_key_the_engine_reads_is_a_converter_name():
    missing = sorted(k for k, v in CPP.items() if _is_key(v) and _python_name(k) not in PY)
    assert not missing, f"keys of {HEADER.name} the converter does not name: {missing}"


# The keys only cache-aware streaming models carry (gguf_schema.h, "Cache-aware streaming encoders").
STREAMING_KEYS = {v for k, v in CPP.items() if k.startswith(("kEncoderAttContext", "kEncoderCausal",
                                                               "kEncoderConvCausal", "kStreaming"))}


# The keys only Sortformer diarization models carry (gguf_schema.h, "Sortformer diarization").
DIARIZATION_KEYS = {v for k, v in CPP.items() if k.startswith("kDiar") and _is_key(v)}
# ... and the ASR keys they do not.
ASR_ONLY_KEYS = {v for k, v in CPP.items() if k.startswith(("kVocab", "kBlank", "kTokenizer", "kDecoder", "kJoint",
                                                              "kDecoding", "kTdt")) and _is_key(v)}


def test_the_converter_writes_exactly_the_table_keys():
    """A hybrid TDT/CTC model (the synthetic one) carries every key of the table but the
    cache-aware streaming and the diarization ones."""
    layout = state_dict_layout(ARCH_TINY)
    vocab = pieces(ARCH_TINY.vocab)
    spec = build_model_spec(NemoConfig(nemo_config(ARCH_TINY)), {n: s for n, s, _ in layout}, vocab)
    written = [m.key for m in spec.metadata]
    written += [tokenizer_scores([Piece(p, 0.0) for p in vocab]).key]
    written += [gguf_schema.GENERAL_NAME, gguf_schema.GENERAL_FILE_TYPE]  # convert_nemo's own
    written += [gguf_schema.GENERAL_ARCHITECTURE]  # the GGUF writer's, from ARCHITECTURE
    assert spec.arch == "hybrid_tdt_ctc"
    table = {v for v in CPP.values() if _is_key(v)}
    assert sorted(set(written) - table) == []
    assert sorted(table - set(written)) == sorted(STREAMING_KEYS | DIARIZATION_KEYS)
    assert len(written) == len(set(written))


def test_a_diarization_model_carries_the_diarization_keys():
    """The converted Sortformer fixtures (tools/fixtures/make_sortformer_fixtures.py) write every
    diarization key, the encoder and preprocessor keys, and no ASR-only or streaming-encoder key."""
    import convert_helpers as F
    from data_helpers import DATA

    table = {v for v in CPP.values() if _is_key(v)}
    for name in ("sortformer_offline", "sortformer_stream"):
        fields, _ = F.read_gguf(DATA / "nemo" / name / "model.gguf")
        written = {k for k in fields if _is_key(k)}
        assert len(DIARIZATION_KEYS) == 23
        assert DIARIZATION_KEYS <= written
        assert sorted(written - table) == []
        assert sorted(table - written) == sorted(STREAMING_KEYS | ASR_ONLY_KEYS)


def test_a_cache_aware_model_carries_the_streaming_keys():
    """The converted cache-aware fixture (tools/fixtures/make_cacheaware_fixtures.py) writes every
    streaming key, and only table keys."""
    import convert_helpers as F
    from data_helpers import CACHE_AWARE_MODELS

    fields, _ = F.read_gguf(CACHE_AWARE_MODELS["ca_hybrid"])
    table = {v for v in CPP.values() if _is_key(v)}
    written = {k for k in fields if _is_key(k)}
    assert len(STREAMING_KEYS) == 13
    assert STREAMING_KEYS <= written
    assert sorted(written - table) == []


def test_synthetic_tensors_are_named_by_the_table():
    """Every tensor of the synthetic model starts with one of the table's tensor prefixes
    (its names are NeMo's, and the converter's shape checks accept them)."""
    prefixes = tuple(
        CPP[k] for k in ("kSubsamplingPrefix", "kLayerPrefix", "kCtcHead", "kHybridCtcHead", "kPredictionEmbed",
                         "kPredictionLstm", "kJointEnc", "kJointPred", "kJointOut", "kMelWindow", "kMelFilterbank")
    )
    names = [n for n, _, _ in state_dict_layout(ARCH_TINY)]
    assert [n for n in names if not n.startswith(prefixes)] == []
    quantisable = re.compile(CPP["kQuantisableWeights"])
    assert any(quantisable.fullmatch(n) for n in names)
    assert not quantisable.fullmatch(CPP["kJointOut"] + ".weight")
