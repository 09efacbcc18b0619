"""Beam search from Python: Context.transcribe(beam=N) and Context.transcribe_nbest against
NeMo's N-best lists (tests/data/nemo/<model>/beamref_<clip>.gguf, tools/fixtures/nemo_fixtures/beam.py),
against the C N-best document, ordering under score_norm, threads, and errors."""

import json
import threading

import gguf
import pytest

from parakeet_py import Cancelled, Context, ParakeetError, _native

from data_helpers import AUDIO, MODEL, MODELS, NEMO_DIR as NEMO, SPEECH

SHORT = AUDIO / "short_1s_16k.wav"

pytestmark = pytest.mark.skipif(not (MODELS["tdt"]).exists(), reason="fixture models not converted")


def nemo_nbest(model: str, clip: str, beam: int):
    """NeMo's N-best list (score_norm order): [(ids, score)]."""
    f = gguf.GGUFReader(str(NEMO / model / f"beamref_{clip}.gguf")).fields
    n = int(f[f"ref.beam{beam}.n_hyps"].contents())
    return [([int(x) for x in f[f"ref.beam{beam}.hyp{i}.ids"].contents()],
             float(f[f"ref.beam{beam}.hyp{i}.score"].contents())) for i in range(n)]


@pytest.fixture(scope="module")
def tdt():
    with Context(MODELS["tdt"]) as c:
        yield c


@pytest.mark.parametrize("model", ["tdt", "hybrid_tdt_ctc", "rnnt", "hybrid_rnnt_ctc"])
@pytest.mark.parametrize("beam", [1, 2, 4])
def test_nbest_equals_nemo(model, beam):
    if not (NEMO / model / "beamref_short_1s.gguf").exists():
        pytest.skip(f"no beam reference for {model}")
    want = nemo_nbest(model, "short_1s", beam)
    with Context(MODELS[model]) as c:
        got = c.transcribe_nbest(SHORT, beam=beam)
        assert len(got) == min(beam, len(want))
        for h, (ids, score) in zip(got, want):
            assert [t.id for t in h.transcript.tokens] == ids
            assert h.score == pytest.approx(score, abs=1e-3)
            assert h.normalized_score == pytest.approx(score / (len(ids) + 1), abs=1e-3)
        best = c.transcribe(SHORT, beam=beam)
        assert best == got[0].transcript
        assert c.transcribe(SHORT, beam=beam, timestamps=False).text == best.text


def test_matches_the_c_document_and_orders(tdt):
    hyps = tdt.transcribe_nbest(SHORT, beam=4)
    ffi, lib = _native.load()
    ptr = lib.parakeet_capi_transcribe_path_nbest_json(tdt._ptr, str(SHORT).encode(), 4, 4, 1, ffi.NULL)
    assert ptr != ffi.NULL, _native.last_error()
    doc = json.loads(_native.take_string(ptr))
    assert doc["beam_size"] == 4 and doc["score_norm"] is True
    assert [h["text"] for h in doc["hypotheses"]] == [h.transcript.text for h in hyps]
    assert [h["id"] for h in doc["hypotheses"][0]["tokens"]] == [t.id for t in hyps[0].transcript.tokens]
    norm = [h.normalized_score for h in hyps]
    assert norm == sorted(norm, reverse=True)
    raw = tdt.transcribe_nbest(SHORT, beam=4, score_norm=False)
    scores = [h.score for h in raw]
    assert scores == sorted(scores, reverse=True)
    assert len(tdt.transcribe_nbest(SHORT, beam=4, nbest=2)) == 2


def test_same_result_from_threads_on_a_pool():
    with Context(MODEL, concurrency=2) as c:
        alone = c.transcribe_nbest(SPEECH, beam=2)
        out = [None] * 4

        def run(i):
            out[i] = c.transcribe_nbest(SPEECH, beam=2)

        threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert all(o == alone for o in out)


def test_errors(tdt):
    for kwargs in ({"beam": 0}, {"beam": 2, "nbest": 3}, {"beam": True}):
        with pytest.raises(ParakeetError, match="beam|nbest"):
            tdt.transcribe_nbest(SHORT, **kwargs)
    with pytest.raises(ParakeetError, match="transducer"):
        tdt.transcribe(SHORT, beam=2, decoder="ctc")
    with Context(MODELS["ctc"]) as c:
        with pytest.raises(ParakeetError, match="requires a TDT or RNN-T head"):
            c.transcribe_nbest(SHORT, beam=2)


def test_beam_search_reports_progress_and_a_stop_cancels_it(tdt):
    seen = []
    best = tdt.transcribe(SHORT, beam=2, progress=lambda f: seen.append(f) or True)
    assert best.text == tdt.transcribe(SHORT, beam=2).text and seen[0] == 0.0 and seen[-1] == 1.0
    assert any(0.94 < f < 1.0 for f in seen)  # reports from the search, past the encoder's share
    with pytest.raises(Cancelled):  # a stop asked during the search stops it
        tdt.transcribe_nbest(SHORT, beam=2, progress=lambda f: f <= 0.95)


def test_cli_beam(tdt):
    from click.testing import CliRunner
    from parakeet_cli.main import cli
    model = str(MODELS["tdt"])
    out = CliRunner().invoke(cli, ["transcribe", "-m", model, "--beam", "4", "-f", "json", str(SHORT)])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["text"] == tdt.transcribe(SHORT, beam=4).text
    assert CliRunner().invoke(cli, ["transcribe", "-m", model, "--beam", "0", str(SHORT)]).exit_code == 2
    assert CliRunner().invoke(cli, ["transcribe", "-m", model, "--beam", "2", "--stream", str(SHORT)]).exit_code == 2


def test_server_beam_size(tdt, tmp_path):
    import httpx
    from server_helpers import ServerProcess
    model = MODELS["tdt"]
    with ServerProcess([], tmp_path, model=model) as srv:
        def post(**data):
            return httpx.post(srv.url + "/v1/audio/transcriptions", timeout=60, data=data,
                              files={"file": (SHORT.name, SHORT.read_bytes(), "audio/wav")})
        r = post(beam_size="4")
        assert r.status_code == 200, r.text
        assert r.json()["text"] == tdt.transcribe(SHORT, beam=4).text
        assert post().json()["text"] == tdt.transcribe(SHORT).text  # greedy without the field
        for bad in ("0", "17", "two", "1.5"):
            r = post(beam_size=bad)
            assert r.status_code == 400 and r.json()["error"]["param"] == "beam_size", r.text
        r = post(beam_size="2", stream="true")
        assert r.status_code == 400 and r.json()["error"]["param"] == "beam_size", r.text
