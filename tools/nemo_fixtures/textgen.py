"""Deterministic English-like text used to train the fixture tokenizers.

The words only need to give SentencePiece a realistic character/merge distribution; the
models are random, so what they "say" does not matter.
"""
import random

_NOUNS = (
    "time person year way day thing man world life hand part child eye woman place work week "
    "case point number group problem fact voice speech model sound word signal engine river "
    "city house table window garden music paper story water light night morning question answer"
).split()
_VERBS = (
    "makes takes sees knows gets gives finds tells asks works seems feels tries leaves calls "
    "turns moves plays runs brings writes reads hears speaks learns keeps holds shows"
).split()
_ADJS = (
    "good new first last long great little own other old right big high different small large "
    "next early young important few public bad same able quick brown lazy quiet loud bright"
).split()
_ADVS = "quickly slowly often never always really almost together again soon".split()
_DETS = "the a this that every some one no".split()
_PREPS = "in on at with from over under near after before into".split()


def _noun_phrase(rng: random.Random) -> str:
    parts = [rng.choice(_DETS)]
    if rng.random() < 0.5:
        parts.append(rng.choice(_ADJS))
    parts.append(rng.choice(_NOUNS))
    return " ".join(parts)


def sentence(rng: random.Random, cased: bool) -> str:
    words = [_noun_phrase(rng), rng.choice(_VERBS), _noun_phrase(rng)]
    if rng.random() < 0.4:
        words += [rng.choice(_PREPS), _noun_phrase(rng)]
    if rng.random() < 0.3:
        words.append(rng.choice(_ADVS))
    text = " ".join(words)
    if cased:
        end = rng.choice([".", ".", ".", "?", ","])
        text = text[0].upper() + text[1:] + end
    return text


def corpus(seed: int, n_sentences: int, cased: bool) -> list:
    rng = random.Random(seed)
    return [sentence(rng, cased) for _ in range(n_sentences)]


def _pseudo_word(rng: random.Random) -> str:
    onsets = "b c d f g h j k l m n p r s t v w z br cl dr fl gr pl st tr sh ch th".split()
    vowels = "a e i o u ai ea ou oo ie".split()
    codas = ["", "", "n", "r", "s", "t", "l", "nd", "st", "ng", "ck"]
    return "".join(rng.choice(onsets) + rng.choice(vowels) + rng.choice(codas) for _ in range(rng.randint(1, 3)))


def rich_corpus(seed: int, n_sentences: int) -> list:
    """Cased sentences with invented words mixed in: enough distinct words for a 1024-piece BPE."""
    rng = random.Random(seed)
    lexicon = sorted({_pseudo_word(rng) for _ in range(6000)})
    out = []
    for _ in range(n_sentences):
        words = sentence(rng, cased=True).split(" ")
        for _ in range(rng.randint(1, 4)):
            words.insert(rng.randrange(1, len(words)), rng.choice(lexicon))
        out.append(" ".join(words))
    return out
