"""Expected SentencePiece BPE segmentations for the C++ test of pk::BpeEncoder (test_bpe_encoder).

Writes tests/data/text/bpe_cases_<name>.txt, one file per tokenizer:
  - ``fixture``: the SentencePiece model inside tests/data/nemo/hybrid_tdt_ctc/model.nemo (all
    five fixture models share it; the test takes its pieces and scores from model.gguf, i.e.
    through the converter and the model config);
  - ``bytefallback``: a BPE model trained here with byte_fallback on generated text (its pieces
    and scores are written into the file, lines ``P <score> <hex piece>``).
Each case is a line ``C <hex of the UTF-8 text> <ids...>``: ``sentencepiece``'s encode() of
random strings (repeated, leading and trailing spaces, punctuation, characters the vocabulary
lacks, malformed UTF-8 is not generated: SentencePiece's Python API takes str).

Needs the ``sentencepiece`` package (the NeMo venv has it):
    /work/.nemo/bin/python tools/make_bpe_encoder_cases.py       # or any python with sentencepiece
The output is deterministic (seeded).
"""

import io
import random
import tarfile
from pathlib import Path

import sentencepiece as spm

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "text"
WORDS = ("the very quick brown fox jumps over lazy dog speech recognition turns spoken words into written "
         "text This clip tests a transducer model garden sun weather Thor over").split()
# Characters in and outside the fixture vocabulary (j, B, digits, accents, CJK, emoji, tab).
ALPHABET = list("etaoinshrdlucmfwygpbvkqxzTAENOS.,?") + list("jBZ019!-';:") + ["é", "北", "京", "😀", "\t", "ß"]


def random_text(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.45:  # words, with runs of spaces
        parts = []
        for _ in range(rng.randint(1, 5)):
            w = rng.choice(WORDS)
            if rng.random() < 0.3:
                w = w.capitalize()
            if rng.random() < 0.2:
                w += rng.choice(".,?!")
            parts.append(w)
            parts.append(" " * rng.choice((1, 1, 1, 2, 3)))
        text = "".join(parts)
    else:  # characters
        text = "".join(rng.choice(ALPHABET + [" ", " ", " "]) for _ in range(rng.randint(0, 24)))
    if rng.random() < 0.2:
        text = " " * rng.randint(1, 3) + text
    if rng.random() < 0.3:
        text = text.rstrip(" ")
    return text


def cases(sp: spm.SentencePieceProcessor, rng: random.Random, n: int):
    fixed = ["", " ", "   ", "the", " the ", "the  quick", "garden  sun", "jjj", "a jb jj", "Thor", "weather", "very"]
    texts = fixed + [random_text(rng) for _ in range(n)]
    return [(t, sp.encode(t)) for t in texts]


def write(name: str, rows, pieces=None) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT / f"bpe_cases_{name}.txt", "w", encoding="ascii") as f:
        f.write(f"# made by tools/make_bpe_encoder_cases.py (sentencepiece {spm.__version__}); see that script\n")
        for score, piece in pieces or []:
            f.write(f"P {score!r} {piece.encode('utf-8').hex()}\n")
        for text, ids in rows:
            f.write(" ".join(["C", text.encode("utf-8").hex() or "-"] + [str(i) for i in ids]) + "\n")


def fixture_model() -> bytes:
    with tarfile.open(ROOT / "tests" / "data" / "nemo" / "hybrid_tdt_ctc" / "model.nemo") as t:
        member = next(m for m in t.getmembers() if m.name.endswith("tokenizer.model"))
        return t.extractfile(member).read()


def trained_byte_fallback_model(rng: random.Random) -> bytes:
    sentences = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12))) for _ in range(2000)]
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(sentences), model_writer=model, model_type="bpe",
                                   vocab_size=400, byte_fallback=True, normalization_rule_name="identity",
                                   character_coverage=1.0, minloglevel=2)
    return model.getvalue()


def main() -> None:
    rng = random.Random(11)
    fixture = spm.SentencePieceProcessor(model_proto=fixture_model())
    write("fixture", cases(fixture, rng, 500))
    proto = trained_byte_fallback_model(rng)
    trained = spm.SentencePieceProcessor(model_proto=proto)
    pieces = [(trained.get_score(i), trained.id_to_piece(i)) for i in range(trained.get_piece_size())]
    write("bytefallback", cases(trained, rng, 500), pieces)


if __name__ == "__main__":
    main()
