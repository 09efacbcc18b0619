"""Cache-aware streaming models through the Python binding, the C ABI and the CLI: the model
describes its contexts, ``Context.stream(att_context=...)`` gives NeMo's cache-aware results
(tests/data/nemo/<model>/cawref_*.gguf, tools/fixtures/make_cacheaware_fixtures.py), offline
transcription NeMo's transcribe(), and each kind of model refuses the other kind's options."""

import os
import subprocess
import sys

import gguf
import numpy as np
import pytest

from data_helpers import CACHE_AWARE_MODELS, MODELS, ROOT, SPEECH
from parakeet_py import Context, ParakeetError, _native, load_audio
from stream_helpers import run_stream

pytestmark = pytest.mark.skipif(not all(p.exists() for p in CACHE_AWARE_MODELS.values()),
                                reason="cache-aware fixture models missing")
MULTI, HYBRID = CACHE_AWARE_MODELS["ca_rnnt_multi"], CACHE_AWARE_MODELS["ca_hybrid"]


def reference(model, clip, head, ctx):
    """(offline text, streamed text) NeMo gave for `clip` under context `ctx`."""
    path = model.with_name(f"cawref_{clip}_{head}_{ctx[0]}-{ctx[1]}.gguf")
    fields = gguf.GGUFReader(path).fields

    def text(key):
        f = fields[key]
        return bytes(f.parts[f.data[0]]).decode("utf-8")

    return text("ref.offline.text"), text("ref.stream.text")


@pytest.fixture(scope="module")
def speech():
    return load_audio(SPEECH)


def test_info_lists_the_streaming_contexts():
    with Context(MULTI) as ctx:
        assert ctx.info["streaming"] == {"mode": "cache_aware", "contexts": [
            {"left": 8, "right": 1, "chunk_ms": 160.0}, {"left": 8, "right": 0, "chunk_ms": 80.0},
            {"left": 8, "right": 3, "chunk_ms": 320.0}]}
        assert ctx.info["attention"] == {"mode": "chunked", "left": 8, "right": 1}
    with Context(MODELS["rnnt"]) as ctx:
        assert ctx.info["streaming"] == {"mode": "buffered"}


@pytest.mark.parametrize("att_context", [None, [8, 1], [8, 0], [8, 3]])
def test_stream_gives_nemos_cache_aware_result(att_context, speech):
    want = reference(MULTI, "speech", "rnnt", att_context or [8, 1])[1]
    with Context(MULTI) as ctx:
        stream = ctx.stream(att_context=att_context)
        assert stream.settings == {"att_context": att_context or [8, 1]}
        text, _, _, updates = run_stream(stream, speech, [1600])
    assert text == want
    assert updates[-1].finalized and updates[-1].chunks > 1


def test_hybrid_streams_with_either_head(speech):
    with Context(HYBRID) as ctx:
        for head, decoder in (("rnnt", None), ("ctc", "ctc")):
            text = run_stream(ctx.stream(decoder=decoder), speech, [16000])[0]
            assert text == reference(HYBRID, "speech", head, [4, 3])[1], head


@pytest.mark.parametrize("model,head,decoder", [(MULTI, "rnnt", None), (HYBRID, "ctc", "ctc")])
def test_offline_transcription_is_nemos_transcribe(model, head, decoder, speech):
    with Context(model) as ctx:
        t = ctx.transcribe(speech, sample_rate=16000, decoder=decoder)
    ctx_pair = [8, 1] if model == MULTI else [4, 3]
    assert t.text == reference(model, "speech", head, ctx_pair)[0]


def test_each_kind_refuses_the_other_kinds_options():
    with Context(MULTI) as ctx:
        with pytest.raises(ParakeetError, match=r"att_context \[8, 2\] is not one of this model's "
                                                r"\(\[8, 1\], \[8, 0\], \[8, 3\]\)"):
            ctx.stream(att_context=[8, 2])
        with pytest.raises(ParakeetError, match="chunk_sec, left_sec and right_sec apply to offline models"):
            ctx.stream(chunk=2.0)
        with pytest.raises(ParakeetError, match="attention applies to offline models"):
            ctx.attention = "full"
            ctx.transcribe(np.zeros(16000, np.float32), sample_rate=16000)
    with Context(MODELS["rnnt"]) as ctx:
        with pytest.raises(ParakeetError, match="att_context applies to cache-aware streaming models"):
            ctx.stream(att_context=[8, 1])


def test_c_stream_begin_uses_the_default_context(speech):
    ffi, lib = _native.load()
    with Context(MULTI) as ctx, ctx._using() as ptr:
        s = lib.parakeet_capi_stream_begin(ptr)
        assert s != ffi.NULL, _native.last_error()
        try:
            block = np.ascontiguousarray(speech)
            parts = [_native.take_string(lib.parakeet_capi_stream_feed(s, ffi.from_buffer("float[]", block),
                                                                      block.size, ffi.NULL))]
            parts.append(_native.take_string(lib.parakeet_capi_stream_finalize(s)))
        finally:
            lib.parakeet_capi_stream_free(s)
    assert "".join(parts) == reference(MULTI, "speech", "rnnt", [8, 1])[1]


def test_cli_streams_a_cache_aware_model():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "cli"), os.environ.get("PYTHONPATH", "")]))
    for extra, ctx in (([], [8, 1]), (["--att-context", "8,3"], [8, 3])):
        p = subprocess.run([sys.executable, "-m", "parakeet_cli.main", "transcribe", "-m", str(MULTI), "--stream",
                            *extra, str(SPEECH)], capture_output=True, env=env, cwd=ROOT, timeout=120)
        assert p.returncode == 0, p.stderr.decode()
        assert p.stdout.decode() == reference(MULTI, "speech", "rnnt", ctx)[1] + "\n"
