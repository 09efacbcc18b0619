"""The real client: parakeet.cpp's own Python package (PyPI ``parakeet-cpp-cuda`` 0.2.2, import
name ``parakeet``) with ``PARAKEET_LIBRARY`` pointing at our library runs its public API on the
fixture models, and every result equals our own binding's.

The package silently falls back to its bundled library when ours fails to load, so the first
check is that the library it loaded is ours. Each test runs the package in a fresh interpreter
(it reads PARAKEET_LIBRARY at import and registers an atexit shutdown), which prints JSON for
the comparison here.
"""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from parakeet_py import Context, _native

from data_helpers import MODELS as _ALL_MODELS, SPEECH

MODELS = {name: _ALL_MODELS[name] for name in ("hybrid_tdt_ctc", "rnnt", "ctc")}

def run_package(script: str) -> dict:
    """Runs `script` with the package imported against our library; returns what it prints."""
    prelude = textwrap.dedent("""
        import json, sys
        import numpy as np
        import soundfile
        import parakeet
        from parakeet import _ffi
        out = {"lib": _ffi.lib._name, "abi": parakeet.abi_version()}
    """)
    env = dict(os.environ, PARAKEET_LIBRARY=str(_native.library_path()))
    proc = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(script) + "\nprint(json.dumps(out))"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_the_package_loads_our_library():
    out = run_package("")
    assert out["lib"] == str(_native.library_path())
    assert out["abi"] == _native.EXPECTED_ABI_VERSION


@pytest.mark.parametrize("name", sorted(MODELS))
def test_transcribe_every_decoder_and_detail_equal_our_binding(name):
    model = MODELS[name]
    out = run_package(f"""
        m = parakeet.Model({str(model)!r})
        wav = {str(SPEECH)!r}
        pcm, rate = soundfile.read(wav, dtype="float32")
        for d in (0, 1, 2):
            try:
                out[f"path{{d}}"] = m.transcribe(wav, decoder=d)
                out[f"lang{{d}}"] = m.transcribe(wav, decoder=d, language="en")
                out[f"detail{{d}}"] = m.transcribe(wav, decoder=d, detail=True)
                out[f"pcm{{d}}"] = m.transcribe_pcm(pcm, rate, decoder=d)
                out[f"pcm_detail{{d}}"] = m.transcribe_pcm(pcm, rate, decoder=d, detail=True)
            except parakeet.ParakeetError as e:
                out[f"error{{d}}"] = str(e)
        m.close()
    """)
    with Context(model) as ctx:
        for d, ours_name in ((0, None), (1, "ctc"), (2, "transducer")):
            try:
                ours = ctx.transcribe(SPEECH, decoder=ours_name)
            except Exception as e:  # the head is absent: both must refuse
                assert f"error{d}" in out and str(e).split(":")[-1].strip() in out[f"error{d}"]
                continue
            for key in ("path", "lang", "pcm"):
                assert out[f"{key}{d}"] == ours.text, (key, d)
            for key in ("detail", "pcm_detail"):
                doc = out[f"{key}{d}"]
                assert doc["text"] == ours.text
                assert [w["w"] for w in doc["words"]] == [w.text for w in ours.words]
                assert [t["id"] for t in doc["tokens"]] == [t.id for t in ours.tokens]
                assert [w["start"] for w in doc["words"]] == [w.start for w in ours.words]


def test_ctc_logits_equal_the_c_call():
    model = MODELS["hybrid_tdt_ctc"]
    out = run_package(f"""
        m = parakeet.Model({str(model)!r})
        pcm, rate = soundfile.read({str(SPEECH)!r}, dtype="float32")
        lp = m.ctc_logits(pcm, rate)
        out["shape"] = list(lp.shape)
        out["sum"] = float(np.float64(lp).sum())
        out["first"] = lp[0].tolist()
        try:
            parakeet.Model({str(MODELS["rnnt"])!r}).ctc_logits(pcm, rate)
        except parakeet.ParakeetError as e:
            out["rnnt_error"] = str(e)
    """)
    import soundfile
    pcm, rate = soundfile.read(SPEECH, dtype="float32")
    # Our Python API has no logits call: the C function itself, as the binding declares it.
    ffi, lib = _native.load()
    ctx = lib.parakeet_capi_load(str(model).encode())
    p, t, v = ffi.new("float**"), ffi.new("int*"), ffi.new("int*")
    assert lib.parakeet_capi_transcribe_pcm_logits(ctx, ffi.from_buffer("float[]", pcm), pcm.size, rate, p, t, v) == 0
    ours = np.frombuffer(ffi.buffer(p[0], t[0] * v[0] * 4), dtype=np.float32).reshape(t[0], v[0]).copy()
    lib.parakeet_capi_free_logits(p[0])
    lib.parakeet_capi_free(ctx)
    assert out["shape"] == list(ours.shape)
    assert out["first"] == ours[0].tolist()
    assert out["sum"] == float(np.float64(ours).sum())
    assert "CTC" in out["rnnt_error"]


def test_stream_equals_our_stream():
    model = MODELS["hybrid_tdt_ctc"]
    out = run_package(f"""
        m = parakeet.Model({str(model)!r})
        pcm, rate = soundfile.read({str(SPEECH)!r}, dtype="float32")
        s = m.stream()
        text = ""
        for i in range(0, len(pcm), 1600):
            chunk = s.feed(pcm[i:i + 1600])
            text += chunk.text
            assert not chunk.eou
        text += s.finalize().text
        s.close()
        out["text"] = text
    """)
    import soundfile
    pcm, _ = soundfile.read(SPEECH, dtype="float32")
    with Context(model) as ctx, ctx.stream() as s:
        ours = s.feed(pcm).text + s.finalize().text
    assert out["text"] == ours
    assert ours  # the random model says something on speech


def test_hotwords_through_the_package():
    """compile_hotwords and hotword transcription (TDT and CTC): score 0 changes nothing, a high
    score makes the phrase appear, info() reports the trie."""
    model = MODELS["hybrid_tdt_ctc"]
    out = run_package(f"""
        m = parakeet.Model({str(model)!r})
        wav = {str(SPEECH)!r}
        out["plain"] = m.transcribe(wav)
        h = m.compile_hotwords(["garden gate", "garden"], score=0.0)
        out["info"] = h.info
        out["zero"] = m.transcribe(wav, hotwords=h)
        h.close()
        boosted = m.transcribe(wav, hotwords=["garden gate"], score=8.0, detail=True)
        out["boosted"] = boosted["text"]
        out["context"] = boosted.get("context")
        try:
            m.compile_hotwords([""], score=1.0)
        except parakeet.ParakeetError as e:
            out["empty_error"] = str(e)
    """)
    assert out["zero"] == out["plain"]
    assert out["info"]["phrases"] == 2
    assert "garden" in out["boosted"] and "garden" not in out["plain"]
    assert isinstance(out["context"], dict)
    assert "empty" in out["empty_error"]
