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

from data_helpers import CACHE_AWARE_MODELS, MODELS, ROOT, SPEECH, cawref_texts
from gguf_rewrite import rewrite_gguf
from parakeet_py import Context, ParakeetError, _native, load_audio
from stream_helpers import run_stream

pytestmark = pytest.mark.skipif(not all(p.exists() for p in CACHE_AWARE_MODELS.values()),
                                reason="cache-aware fixture models missing")
MULTI, HYBRID, EOU = (CACHE_AWARE_MODELS[n] for n in ("ca_rnnt_multi", "ca_hybrid", "ca_eou"))


def reference(model, clip, head, ctx):
    """(offline text, streamed text) NeMo gave for `clip` under context `ctx`."""
    return cawref_texts(model.with_name(f"cawref_{clip}_{head}_{ctx[0]}-{ctx[1]}.gguf"))


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


def _pcpp_layout(src, dst, drop=(), u32_arrays=(), changes=None):
    """``src`` rewritten the ways a parakeet.cpp-schema file may differ from ours (its keys,
    parakeet_cpp_v06.md section 7): keys in ``drop`` left out, the int arrays in ``u32_arrays``
    stored as UINT32 arrays, and ``changes`` (key: (value, type)) set."""
    from gguf import GGUFValueType

    return rewrite_gguf(src, dst, {}, drop=drop, array_types={k: GGUFValueType.UINT32 for k in u32_arrays},
                        added=changes)


def test_parakeet_cpp_layouts_of_the_keys_load(tmp_path, speech):
    want = reference(MULTI, "speech", "rnnt", [8, 1])[1]
    arrays = ("parakeet.encoder.att_context_presets", "parakeet.streaming.chunk_size",
              "parakeet.streaming.shift_size", "parakeet.streaming.pre_encode_cache_size")
    # u32 arrays; and without presets, only the left/right pair (one context)
    for name, kw, contexts in (("u32.gguf", {"u32_arrays": arrays}, 3),
                               ("pair.gguf", {"drop": ("parakeet.encoder.att_context_presets",)}, 1)):
        path = _pcpp_layout(MULTI, tmp_path / name, **kw)
        with Context(path) as ctx:
            assert len(ctx.info["streaming"]["contexts"]) == contexts
            assert run_stream(ctx.stream(), speech, [16000])[0] == want


def test_inconsistent_streaming_keys_are_refused(tmp_path):
    from gguf import GGUFValueType
    bad = _pcpp_layout(MULTI, tmp_path / "bad.gguf", drop=("parakeet.encoder.att_context_right",),
                       changes={"parakeet.encoder.att_context_right": (3, GGUFValueType.UINT32)})
    with pytest.raises(ParakeetError, match="att_context_left/right differ from the first of att_context_presets"):
        Context(bad)
    odd = _pcpp_layout(MULTI, tmp_path / "odd.gguf", drop=("parakeet.encoder.att_context_presets",
                                                            "parakeet.encoder.att_context_right"),
                       changes={"parakeet.encoder.att_context_right": (2, GGUFValueType.UINT32)})
    with pytest.raises(ParakeetError, match="left must be a multiple of right \\+ 1"):
        Context(odd)


def nemo_events(model, clip):
    """[(type, frame)] of the <EOU>/<EOB> tokens in NeMo's streamed result."""
    fields = gguf.GGUFReader(model.with_name(f"cawref_{clip}_rnnt_8-1.gguf")).fields
    ids = [int(x) for x in fields["ref.stream.ids"].contents()]
    frames = [int(x) for x in fields["ref.stream.frames"].contents()]
    return [({1: "eou", 2: "eob"}[i], t) for i, t in zip(ids, frames) if i in (1, 2)]


def test_eou_and_eob_are_events_not_text(speech):
    with Context(MULTI) as other:
        assert other.info["end_of_utterance"] is False  # no <EOU> in its vocabulary
    with Context(EOU) as ctx:
        assert ctx.info["vocab_size"] > 2 and ctx.info["end_of_utterance"] is True
        text, _, tokens, updates = run_stream(ctx.stream(), speech, [1600])
    events = [(e.type, e.frame) for u in updates for e in u.events]
    want = nemo_events(EOU, "speech")
    assert len(want) > 5 and {"eou", "eob"} == {t for t, _ in want}
    assert events == want
    assert all(abs(e.time - e.frame * 0.08) < 1e-6 for u in updates for e in u.events)
    assert "<EOU>" not in text and "<EOB>" not in text and text
    nemo_text = reference(EOU, "speech", "rnnt", [8, 1])[1]
    assert " ".join(text.split()) == " ".join(nemo_text.replace("<EOU>", "").replace("<EOB>", "").split())


def test_c_feed_reports_event_bits_and_drains_them(speech):
    ffi, lib = _native.load()
    bits, drained = 0, []
    with Context(EOU) as ctx, ctx._using() as ptr:
        s = lib.parakeet_capi_stream_begin(ptr)
        try:
            eou = ffi.new("int*")
            for at in range(0, speech.size, 16000):
                block = np.ascontiguousarray(speech[at:at + 16000])
                _native.take_string(lib.parakeet_capi_stream_feed(s, ffi.from_buffer("float[]", block), block.size, eou))
                bits |= eou[0]
            _native.take_string(lib.parakeet_capi_stream_finalize(s))
            out = ffi.new("parakeet_stream_event**")
            n = lib.parakeet_capi_stream_drain_events(s, out)
            drained = [("eob" if out[0][i].is_eob else "eou", out[0][i].encoder_frame) for i in range(n)]
            lib.parakeet_capi_free_events(out[0])
        finally:
            lib.parakeet_capi_stream_free(s)
    assert bits == 3  # PARAKEET_EVENT_EOU | PARAKEET_EVENT_EOB
    assert drained == nemo_events(EOU, "speech")


def test_cli_events_prints_markers():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "cli"), os.environ.get("PYTHONPATH", "")]))
    p = subprocess.run([sys.executable, "-m", "parakeet_cli.main", "transcribe", "-m", str(EOU), "--stream", "--events",
                        str(SPEECH)], capture_output=True, env=env, cwd=ROOT, timeout=120)
    assert p.returncode == 0, p.stderr.decode()
    out = p.stdout.decode()
    assert out.count("[EOU]") + out.count("[EOB]") == len(nemo_events(EOU, "speech"))


def test_server_streams_a_cache_aware_model_and_lists_its_contexts(tmp_path):
    import httpx
    import openai
    from server_helpers import ServerProcess

    with ServerProcess(["--threads", "1"], tmp_path, model=MULTI) as srv:
        card = httpx.get(srv.url + "/v1/models").json()["data"][0]
        assert card["streaming"]["mode"] == "cache_aware" and len(card["streaming"]["contexts"]) == 3
        client = openai.OpenAI(base_url=srv.url + "/v1", api_key="unused", max_retries=0, timeout=60)
        with open(SPEECH, "rb") as f:
            events = list(client.audio.transcriptions.create(model="parakeet", file=f, stream=True))
    assert events[-1].type == "transcript.text.done"
    assert events[-1].text == reference(MULTI, "speech", "rnnt", [8, 1])[1]


def test_realtime_session_streams_a_cache_aware_model(tmp_path, speech):
    """/v1/realtime on a cache-aware model: the committed item's transcript is the cache-aware
    Python stream's on the same 24 kHz audio (whose 16 kHz result is NeMo's, tested above)."""
    import base64
    import json

    import soxr
    from websockets.sync.client import connect
    from server_helpers import ServerProcess

    up = soxr.resample(speech, 16000, 24000, "HQ")
    pcm = np.clip(np.round(up * 32767), -32768, 32767).astype("<i2")
    with Context(MULTI) as ctx:
        want = run_stream(ctx.stream(sample_rate=24000), pcm, [len(pcm)])[0]
    with ServerProcess(["--threads", "1"], tmp_path, model=MULTI) as srv:
        with connect(srv.url.replace("http://", "ws://") + "/v1/realtime?intent=transcription", open_timeout=60) as ws:
            assert json.loads(ws.recv(timeout=60))["type"] == "session.created"
            raw = pcm.tobytes()
            for i in range(0, len(raw), 4800):
                ws.send(json.dumps({"type": "input_audio_buffer.append",
                                    "audio": base64.b64encode(raw[i:i + 4800]).decode()}))
            ws.send(json.dumps({"type": "input_audio_buffer.commit"}))
            while True:
                event = json.loads(ws.recv(timeout=60))
                assert event["type"] != "error", event
                if event["type"] == "conversation.item.input_audio_transcription.completed":
                    break
    assert event["transcript"] == want and want
