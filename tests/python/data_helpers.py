"""Where the Python tests find the repository's committed data, named once.

``tests/data/nemo/<arch>/`` holds one small random model per architecture, made with NeMo's
own classes by ``tools/fixtures/make_nemo_fixtures.py`` (``model.nemo``, its conversion
``model.gguf``, and NeMo's reference outputs beside them); ``tests/data/audio/`` the clips they
are run on. ``conftest.py`` offers the same paths as fixtures; modules that need them at import
time (``parametrize`` lists, helper modules) import these constants.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, Tuple

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
AUDIO = DATA / "audio"
NEMO_DIR = DATA / "nemo"
HEADER = ROOT / "libparakeet" / "include" / "parakeet_capi.h"

#: Every fixture architecture: TDT, RNN-T and CTC heads, and the two hybrids (transducer + CTC).
ARCHS = ("ctc", "rnnt", "tdt", "hybrid_rnnt_ctc", "hybrid_tdt_ctc")
#: The converted fixture model of each architecture.
MODELS: Dict[str, Path] = {name: NEMO_DIR / name / "model.gguf" for name in ARCHS}
#: The model most tests use: the hybrid TDT + CTC one (every decoder head there is).
MODEL = MODELS["hybrid_tdt_ctc"]
#: A model with a CTC head only (no transducer: beam search and "tdt" are unsupported there).
CTC_ONLY_MODEL = MODELS["ctc"]

#: The cache-aware streaming fixture models (tools/fixtures/make_cacheaware_fixtures.py): a
#: multi-lookahead RNN-T ([8, 1] default, [8, 0], [8, 3]), a hybrid RNN-T + CTC ([4, 3]) and an
#: RNN-T with an EOU vocabulary (<EOU>, <EOB>; [8, 1]).
CACHE_AWARE_MODELS: Dict[str, Path] = {name: NEMO_DIR / name / "model.gguf"
                                       for name in ("ca_rnnt_multi", "ca_hybrid", "ca_eou", "ca_tdt", "ca_prompt")}

CLIPS = sorted(AUDIO.glob("*.wav"))
SPEECH = AUDIO / "speech_16k.wav"  # 9.6 s of espeak-ng speech
LONG = AUDIO / "long_30s_16k.wav"
CONVERSATION = AUDIO / "conversation_16k.wav"  # 14 s of several espeak-ng voices, for diarization


def conversation_pcm():
    """The conversation clip's samples: float32, 16 kHz mono (what the live streams are fed)."""
    import soundfile

    data, rate = soundfile.read(CONVERSATION, dtype="float32")
    assert rate == 16000 and data.ndim == 1
    return data


def cawref_texts(path: Path) -> Tuple[str, str]:
    """(offline text, streamed text) of a cache-aware reference file (cawref_*.gguf), as NeMo
    gave them (tools/fixtures/make_cacheaware_fixtures.py)."""
    import gguf

    fields = gguf.GGUFReader(path).fields

    def text(key: str) -> str:
        f = fields[key]
        return bytes(f.parts[f.data[0]]).decode("utf-8")

    return text("ref.offline.text"), text("ref.stream.text")
