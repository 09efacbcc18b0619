"""The library's batch JSON call (``parakeet_capi_transcribe_pcm_batch_json_lang``, which runs its
clips in batched encoder passes, docs/api.md "Batch calls") through the binding's cffi
declaration: each clip's document is the transcript ``Context.transcribe`` gives the clip alone,
on every fixture architecture and head, for 1, 5 and 41 clips (nothing to 31 s), at 1 and 2
threads with 1 and 2 backends; a bad clip fails the call with its own error, named by its index,
the first bad clip's."""

import json

import numpy as np
import pytest

from clip_helpers import RATE, cut_speech, fixture_speech
from data_helpers import LONG, MODELS
from parakeet_py import Context, InvalidAudio, Transcript, Unsupported, _native, load_audio

HEADS = {"ctc": ["default"], "rnnt": ["default"], "tdt": ["default"],
         "hybrid_rnnt_ctc": ["default", "ctc"], "hybrid_tdt_ctc": ["default", "ctc"]}


@pytest.fixture(scope="module")
def clip_sets():
    """Sets of 1, 5 and 41 clips cut from the fixture speech at seeded places and lengths."""
    speech = fixture_speech()
    rng = np.random.default_rng(11)

    def cut(count, lo, hi):
        return cut_speech(rng, count, lo, hi)

    long_clip = np.concatenate([load_audio(LONG), speech[:RATE]])  # 31 s: runs alone
    many = cut(39, 2.0, 5.0)
    many[7:7] = [long_clip, np.zeros(0, np.float32)]
    return [cut(1, 1.0, 3.0), [np.zeros(0, np.float32)] + cut(4, 0.05, 1.0), many]


CODES = {"default": _native.DECODER_DEFAULT, "ctc": _native.DECODER_CTC, "transducer": _native.DECODER_TRANSDUCER}


def batch_json(ctx, clips, decoder="default"):
    """The batch call's documents for `clips` (16 kHz) with the head `decoder`, as transcripts."""
    ffi, lib = _native.load()
    concat = np.ascontiguousarray(np.concatenate(clips), dtype=np.float32)
    lengths = ffi.new("int[]", [int(c.size) for c in clips])
    code = CODES[decoder]
    with ctx._using() as ptr:
        document = _native.string_result(lib.parakeet_capi_transcribe_pcm_batch_json_lang(
            ptr, ffi.from_buffer("float[]", concat), lengths, len(clips), RATE, code, ffi.NULL))
    return [Transcript.from_json(json.dumps(d)) for d in json.loads(document)]


@pytest.mark.parametrize("arch", sorted(HEADS))
def test_every_clip_gets_its_transcript_alone(arch, clip_sets):
    with Context(MODELS[arch], threads=1) as single:
        alone = {(decoder, s): [single.transcribe(c, sample_rate=RATE, decoder=decoder).to_dict() for c in clips]
                 for decoder in HEADS[arch] for s, clips in enumerate(clip_sets)}
    assert sum(len(t["text"]) for ts in alone.values() for t in ts) > 100, "the clips say little"
    for threads in (1, 2):
        for backends in (1, 2):
            with Context(MODELS[arch], concurrency=backends, threads=threads) as ctx:
                for (decoder, s), want in alone.items():
                    got = [t.to_dict() for t in batch_json(ctx, clip_sets[s], decoder)]
                    assert got == want, f"{arch} {decoder}, set {s}, {threads} threads x {backends}"


def test_the_first_bad_clip_fails_the_call_with_its_own_error(clip_sets):
    clips = [c.copy() for c in clip_sets[2][:12]]
    clips[3][50] = np.nan
    clips[6][0] = np.inf
    with Context(MODELS["hybrid_tdt_ctc"], concurrency=2, threads=1) as ctx:
        with pytest.raises(InvalidAudio) as alone:
            ctx.transcribe(clips[3], sample_rate=RATE)
        with pytest.raises(InvalidAudio) as batched:
            batch_json(ctx, clips)
        assert str(batched.value) == f"clip 3: {alone.value}"
    with Context(MODELS["ctc"]) as ctc:
        with pytest.raises(Unsupported) as alone:
            ctc.transcribe(clips[0], sample_rate=RATE, decoder="transducer")
        with pytest.raises(Unsupported) as batched:
            batch_json(ctc, clips[:2], "transducer")
        assert str(batched.value) == f"clip 0: {alone.value}"
