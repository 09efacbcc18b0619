"""The Python batch paths through the library's batched pass (parakeet_py.batch_call):
``Context.transcribe_many``, the local batch job and ``parakeet-cli transcribe`` of several files
give every item bitwise what ``Context.transcribe`` gives it alone (text, tokens, timestamps,
confidences) on every fixture architecture, for collections of 1, 6 and 41 clips of mixed
lengths, on 1 and 2 backends; items that fail (a bad file, NaN audio, a wrong rate) get the
errors they get alone; and the clips that can batch do go through the batch call."""

import json

import numpy as np
import pytest
import soundfile

from cli_helpers import run_cli
from clip_helpers import RATE, cut_speech, fixture_speech
from data_helpers import LONG, MODELS
from parakeet_py import Context, InvalidAudio, ParakeetError, Transcript, Unsupported, batch_call, load_audio
from parakeet_py.batch import BatchOptions, read_inputs, read_rows, run_batch
from parakeet_py.batch.prefetch import decode
from parakeet_py.batch.rows import decoder_label, error_message, make_row, model_id


@pytest.fixture(scope="module")
def collections():
    """Clips cut from the fixture speech at seeded places and lengths: 1 clip; 6 short ones
    with an empty one; 41 of 2-5 s with a 31 s one (which the library runs alone), an empty
    one and a 12 s one (several windows at 1 and 2 backends, the last one partial)."""
    speech = fixture_speech()
    rng = np.random.default_rng(32)

    def cut(count, lo, hi):
        return cut_speech(rng, count, lo, hi)

    empty = np.zeros(0, np.float32)
    mixed = cut(38, 2.0, 5.0)
    mixed[5:5] = [np.concatenate([load_audio(LONG), speech[:RATE]]), empty, speech[:12 * RATE].copy()]
    return [cut(1, 1.0, 3.0), cut(5, 0.05, 1.0) + [empty], mixed]


def outcome(call):
    """What ``call()`` gives: its transcript as a dict, or its exception's type and message."""
    try:
        return call().to_dict()
    except ParakeetError as e:
        return type(e), str(e)


def outcomes(results):
    return [(type(r), str(r)) if isinstance(r, ParakeetError) else r.to_dict() for r in results]


@pytest.mark.parametrize("arch", sorted(MODELS))
def test_transcribe_many_equals_each_clip_alone(arch, collections):
    with Context(MODELS[arch], threads=1) as single:
        alone = [[single.transcribe(c, sample_rate=RATE).to_dict() for c in clips] for clips in collections]
        text_only = [single.transcribe(c, sample_rate=RATE, timestamps=False).to_dict() for c in collections[2]]
    assert sum(len(t["text"]) for ts in alone for t in ts) > 100, "the clips say little"
    for backends in (1, 2):
        with Context(MODELS[arch], concurrency=backends, threads=1) as ctx:
            for clips, want in zip(collections, alone):
                got = ctx.transcribe_many(clips, sample_rate=RATE)
                assert [t.to_dict() for t in got] == want, f"{arch}, {len(clips)} clips, {backends} backends"
            got = ctx.transcribe_many(collections[2], sample_rate=RATE, timestamps=False)
            assert [t.to_dict() for t in got] == text_only, f"{arch} without timestamps, {backends} backends"


@pytest.fixture
def spies(monkeypatch):
    """Counts (not replaces) the batch calls, with their sizes, and the clips run alone."""
    calls = {"batches": [], "alone": 0}
    batch, alone = batch_call._batch_documents, Context.transcribe

    def batch_spy(ctx, clips, *args):
        calls["batches"].append(len(clips))
        return batch(ctx, clips, *args)

    def alone_spy(self, *args, **kwargs):
        calls["alone"] += 1
        return alone(self, *args, **kwargs)
    monkeypatch.setattr(batch_call, "_batch_documents", batch_spy)
    monkeypatch.setattr(Context, "transcribe", alone_spy)
    return calls


def test_clips_go_through_the_batch_call_in_windows_of_16_per_backend(collections, spies):
    clips = collections[2]
    with Context(MODELS["tdt"], concurrency=2, threads=1) as ctx:
        ctx.transcribe_many(clips, sample_rate=RATE)
        assert spies == {"batches": [32, 9], "alone": 0}
        bad = [c.copy() for c in clips]
        bad[20][7] = np.nan
        spies["batches"].clear()
        with pytest.raises(InvalidAudio, match="sample 7 is not a finite number") as raised:
            ctx.transcribe_many(bad, sample_rate=RATE)
        assert raised.value.index == 20
        assert spies == {"batches": [31, 9], "alone": 1}  # the NaN clip alone, the others still batched
    with Context(MODELS["tdt"], threads=1) as ctx:
        spies["batches"].clear()
        ctx.transcribe_many(clips, sample_rate=RATE)
        assert spies["batches"] == [16, 16, 9]


def test_failing_items_get_the_errors_they_get_alone(collections, tmp_path):
    good = collections[2][:20]
    nan_16k, nan_8k = good[3].copy(), good[4][::2].copy()
    nan_16k[100] = np.inf
    nan_8k[10] = np.nan
    not_audio = tmp_path / "not_audio.wav"
    not_audio.write_bytes(b"this is not a WAV file")
    items = (good[:5] + [str(tmp_path / "missing.wav"), (good[5], 0), nan_16k, (good[6][::2].copy(), 8000)]
             + good[7:12] + [str(not_audio), (nan_8k, 8000), (good[12], -16000), np.zeros((RATE, 2), np.float32)]
             + good[12:])
    with Context(MODELS["hybrid_tdt_ctc"], concurrency=2, threads=1) as ctx:
        def alone(item):
            audio, rate = item if isinstance(item, tuple) else (item, RATE if isinstance(item, np.ndarray) else None)
            return outcome(lambda: ctx.transcribe(audio, sample_rate=rate))
        want = [alone(item) for item in items]
        failing = [i for i, w in enumerate(want) if isinstance(w, tuple)]
        assert failing == [5, 6, 7, 14, 15, 16], want  # each kind of failure is in the set
        assert outcomes(ctx.transcribe_many(items, sample_rate=RATE, return_exceptions=True)) == want
        with pytest.raises(ParakeetError) as raised:
            ctx.transcribe_many(items, sample_rate=RATE)
        assert (raised.value.index, type(raised.value), str(raised.value)) == (5, *want[5])
    with Context(MODELS["ctc"]) as ctc:  # a head the model lacks fails the batch call: every clip alone
        want = [outcome(lambda: ctc.transcribe(c, sample_rate=RATE, decoder="transducer")) for c in good[:3]]
        assert all(w[0] is Unsupported for w in want)
        got = ctc.transcribe_many(good[:3], sample_rate=RATE, decoder="transducer", return_exceptions=True)
        assert outcomes(got) == want


def test_transcribe_many_refuses_bad_arguments_before_reading_anything():
    def never():
        raise AssertionError("an item was read")
        yield
    with Context(MODELS["tdt"]) as ctx:
        with pytest.raises(ParakeetError, match="unknown decoder 'beam'"):
            ctx.transcribe_many(never(), decoder="beam")
        with pytest.raises(ParakeetError, match="workers must be a positive integer"):
            ctx.transcribe_many(never(), workers=0)


def test_windows_close_at_their_size_or_their_bytes(monkeypatch):
    monkeypatch.setattr(batch_call, "WINDOW_BYTES", 100)
    sizes = [10, 10, 10, 90, 5, 200, 1, 1, 1, 1, 1]
    got = [[s for s in w] for w in batch_call.windows(sizes, 4, lambda s: s)]
    assert got == [[10, 10, 10, 90], [5, 200], [1, 1, 1, 1], [1]]
    assert list(batch_call.windows([], 4, lambda s: s)) == []


def test_transcribe_sources_reads_at_most_two_windows_ahead(collections):
    read = []

    def sources():
        for i in range(200):
            read.append(i)
            yield collections[0][0], RATE
    with Context(MODELS["ctc"], threads=1) as ctx:
        results = batch_call.transcribe_sources(ctx, sources(), workers=2)
        first = next(results)
        assert isinstance(first, Transcript) and len(read) <= 2 * 16 + 1
        results.close()


def test_transcribe_sources_reads_ahead_at_most_a_window_of_bytes(collections, monkeypatch):
    # Long recordings: what is prepared ahead is bounded by bytes too, not only by count.
    clip = collections[0][0]
    monkeypatch.setattr(batch_call, "WINDOW_BYTES", 3 * clip.nbytes)
    read = []

    def sources():
        for i in range(200):
            read.append(i)
            yield clip, RATE
    with Context(MODELS["ctc"], threads=1) as ctx:
        results = batch_call.transcribe_sources(ctx, sources(), workers=2)
        first = next(results)
        # the window (3 clips), 3 clips' bytes prepared behind it, one clip held by each of the
        # two preparing threads, and the next one
        assert isinstance(first, Transcript) and len(read) <= 3 + 3 + 2 + 1
        results.close()


def _write(path, samples, rate=RATE):
    soundfile.write(str(path), samples, rate, subtype="FLOAT")  # float WAV: the samples exactly, NaN too
    return str(path)


def job_files(folder, clips):
    """A manifest of 24 float WAVs cut from ``clips`` with a NaN one, an 8 kHz one, a missing
    file and one that is not audio among them."""
    nan = clips[2].copy()
    nan[3] = np.nan
    paths = [_write(folder / f"c{i:02d}.wav", c) for i, c in enumerate(clips[:24])]
    paths[4:4] = [_write(folder / "nan.wav", nan), _write(folder / "8k.wav", clips[30][::2], 8000),
                  str(folder / "missing.wav")]
    (folder / "not_audio.wav").write_bytes(b"RIFF nonsense")
    paths.append(str(folder / "not_audio.wav"))
    manifest = folder / "manifest.jsonl"
    manifest.write_text("".join(json.dumps({"id": f"r{i:02d}", "path": p, "speaker": i % 3}) + "\n"
                                for i, p in enumerate(paths)))
    return manifest


def file_by_file_rows(model, manifest, timestamps):
    """The rows the batch jobs wrote before they batched: each file decoded, then transcribed
    alone, by id."""
    with Context(model, threads=1) as ctx:
        label, name = decoder_label(ctx.info, None), model_id(ctx.model_path)
        rows = {}
        for entry in read_inputs([str(manifest)]):
            entry, samples, error = decode(entry, ctx.sample_rate)
            transcript = None
            if error is None:
                try:
                    transcript = ctx.transcribe(samples, sample_rate=ctx.sample_rate, timestamps=timestamps)
                except ParakeetError as e:
                    error = error_message(entry.path, str(e))
            rows[entry.id] = make_row(entry, transcript, error, decoder=label, model=name, timestamps=timestamps)
    return rows


@pytest.mark.parametrize("backends", [1, 2])
def test_batch_job_rows_equal_the_file_by_file_rows(collections, tmp_path, backends):
    manifest = job_files(tmp_path, collections[2])
    out = tmp_path / "out.jsonl"
    stats = run_batch(str(MODELS["hybrid_rnnt_ctc"]), [str(manifest)], str(out),
                      BatchOptions(concurrency=backends, threads=1, timestamps=True))
    before = file_by_file_rows(MODELS["hybrid_rnnt_ctc"], manifest, timestamps=True)
    assert (stats.done, stats.errors) == (len(before), 3)
    assert {r["id"]: r for r in read_rows(str(out))} == before
    assert "not a finite number" in before["r04"]["error"] and before["r05"]["error"] is None


def test_the_ray_udf_transcribes_a_call_in_one_batch_call(collections, tmp_path, spies):
    pa = pytest.importorskip("pyarrow")
    ray_job = pytest.importorskip("parakeet_py.batch.ray_job")
    manifest = job_files(tmp_path, collections[2])
    table = pa.Table.from_pylist([json.loads(line) for line in manifest.read_text().splitlines()])
    udf = ray_job.ParakeetUDF(str(MODELS["tdt"]), concurrency=2, threads=1)  # called here, without Ray
    try:
        rows = udf(table).to_pylist()
    finally:
        udf.ctx.close()
    assert spies == {"batches": [25], "alone": 1}  # 28 rows: 2 undecodable, the NaN file alone
    assert {r["id"]: r for r in rows} == file_by_file_rows(MODELS["tdt"], manifest, timestamps=False)


def test_cli_transcribe_of_several_files_prints_each_files_own_result(collections, tmp_path):
    paths = [_write(tmp_path / f"c{i}.wav", c) for i, c in enumerate(collections[2][:6])]
    nan = collections[2][10].copy()
    nan[0] = np.nan
    paths[2:2] = [_write(tmp_path / "nan.wav", nan), str(tmp_path / "missing.wav")]
    each = [run_cli("transcribe", "-m", MODELS["tdt"], "-f", "json", "--no-progress", p) for p in paths]
    together = run_cli("transcribe", "-m", MODELS["tdt"], "-f", "json", "--no-progress", "-c", 2, "-t", 1, *paths)
    assert [r.exit_code for r in each] == [0, 0, 1, 1, 0, 0, 0, 0] and together.exit_code == 1
    assert together.stdout == "".join(r.stdout for r in each)
    assert together.stderr == "".join(r.stderr for r in each)
