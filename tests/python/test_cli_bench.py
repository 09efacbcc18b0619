"""parakeet-cli bench: manifest parsing, WER, the JSON report, the table, concurrency, and the
generated random-weight default model (tested on a tiny parameterisation of the architecture;
the real 110M default runs only with PARAKEET_TEST_BENCH_110M=1, since generating it takes a
while and ~180 MB)."""

import functools
import json
import os
import random
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from parakeet_cli.bench import DEFAULT_MANIFEST, read_manifest
from parakeet_cli.main import cli
from parakeet_cli.wer import edit_distance, normalize, wer, word_errors
from parakeet_py import Context, InvalidArgument, _native
from parakeet_py.batch.manifest import ManifestError, parse_list as parse_manifest
from parakeet_py.synthetic_model import ARCH_TINY, ensure_synthetic_model, synthetic_model_path, write_synthetic_model

from convert_helpers import read_gguf
from data_helpers import AUDIO, MODEL

FIXTURE = MODEL.parent


def run(*args, env=None):
    try:
        r = CliRunner(mix_stderr=False)
    except TypeError:
        r = CliRunner()
    result = r.invoke(cli, [str(a) for a in args], catch_exceptions=False, env=env)
    _native.set_threads(0)
    return result


# ---- manifest -----------------------------------------------------------------------------
def test_manifest_comments_blank_lines_tabs_and_relative_paths(tmp_path):
    text = ("# a comment\n"
            "\n"
            "a.wav\n"
            "   # an indented comment\n"
            "sub/b.flac\tthe reference, with punctuation\r\n"
            "/abs/c.wav\t  spaced  reference \n"
            "d#1.wav\n"
            "e.wav\t\n")
    entries = parse_manifest(text, tmp_path)
    assert [(e.path, e.reference, e.line) for e in entries] == [
        (str(tmp_path / "a.wav"), None, 3),
        (str(tmp_path / "sub/b.flac"), "the reference, with punctuation", 5),
        ("/abs/c.wav", "spaced  reference", 6),
        (str(tmp_path / "d#1.wav"), None, 7),  # '#' only starts a comment at the start of a line
        (str(tmp_path / "e.wav"), "", 8),
    ]


def test_manifest_relative_paths_fall_back_to_the_current_directory(tmp_path, monkeypatch):
    (tmp_path / "here.wav").write_bytes(b"")
    (tmp_path / "lists").mkdir()
    monkeypatch.chdir(tmp_path)
    entries = parse_manifest("here.wav\nnowhere.wav\n", tmp_path / "lists")
    assert [e.path for e in entries] == [str(tmp_path / "here.wav"), str(tmp_path / "lists" / "nowhere.wav")]


def test_manifest_errors(tmp_path):
    with pytest.raises(ManifestError, match="line 2: no audio path"):
        parse_manifest("a.wav\n\treference only\n", tmp_path)
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n\n")
    with pytest.raises(ManifestError, match="lists no audio files"):
        read_manifest(empty)
    binary = tmp_path / "bin.txt"
    binary.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(ManifestError, match="cannot read"):
        read_manifest(binary)
    # One error class for the batch job's inputs and the bench manifest: a caller's mistake.
    assert issubclass(ManifestError, InvalidArgument) and issubclass(ManifestError, ValueError)


def test_a_jsonl_manifest_gives_its_text_column_as_the_reference(tmp_path):
    clip = AUDIO / "short_1s_16k.wav"
    (tmp_path / "m.jsonl").write_text(json.dumps({"audio_filepath": str(clip), "text": "a reference"}) + "\n"
                                      + json.dumps({"path": str(clip)}) + "\n")
    entries = read_manifest(tmp_path / "m.jsonl")
    assert [(e.path, e.reference, e.line) for e in entries] == [(str(clip), "a reference", 1), (str(clip), None, 2)]


def test_the_shipped_manifest_lists_the_shipped_clips():
    entries = read_manifest(DEFAULT_MANIFEST)
    assert len(entries) == 3 and all(Path(e.path).exists() and e.reference for e in entries)
    assert sum(Path(e.path).stat().st_size for e in entries) < 500_000


# ---- WER ----------------------------------------------------------------------------------
def test_normalize():
    assert normalize("Hello, World! It's 3 o'clock.") == ["hello", "world", "it's", "3", "o'clock"]
    assert normalize("  ") == []


def _reference_distance(a, b):
    @functools.lru_cache(maxsize=None)
    def d(i, j):
        if i == 0 or j == 0:
            return i + j
        return min(d(i - 1, j) + 1, d(i, j - 1) + 1, d(i - 1, j - 1) + (a[i - 1] != b[j - 1]))
    return d(len(a), len(b))


def test_edit_distance_against_a_recursive_reference():
    assert edit_distance(list("kitten"), list("sitting")) == 3
    assert edit_distance([], ["a", "b"]) == 2 and edit_distance(["a"], []) == 1 and edit_distance([], []) == 0
    rng = random.Random(7)
    for _ in range(300):
        a = [rng.choice("abc") for _ in range(rng.randint(0, 8))]
        b = [rng.choice("abc") for _ in range(rng.randint(0, 8))]
        assert edit_distance(a, b) == _reference_distance(tuple(a), tuple(b))


def test_wer_values():
    assert wer("a b c d", "a x c") == 0.5  # one substitution, one deletion
    assert wer("a b", "a b c d") == 1.0  # two insertions
    assert wer("The cat.", "the CAT") == 0.0
    assert wer("", "anything") is None
    assert word_errors("", "two words") == (2, 0)


# ---- bench on real fixture models ---------------------------------------------------------
needs_fixture = pytest.mark.skipif(not MODEL.exists(), reason=f"{MODEL} has not been generated")


@pytest.fixture(scope="module")
def manifest(tmp_path_factory):
    """Three fixture clips (one per line style), references = the model's own transcripts for
    two of them (WER 0) and a wrong one for the third."""
    d = tmp_path_factory.mktemp("manifest")
    with Context(MODEL) as ctx:
        short = ctx.transcribe(AUDIO / "short_1s_16k.wav").text
        speech = ctx.transcribe(AUDIO / "speech_16k.wav").text
    path = d / "clips.tsv"
    path.write_text(f"# fixture clips\n{AUDIO / 'short_1s_16k.wav'}\t{short}\n\n"
                    f"{AUDIO / 'speech_44k_stereo.wav'}\n"
                    f"{AUDIO / 'speech_16k.wav'}\t{speech} extra words\n")
    return path


FILE_KEYS = {"path", "audio_sec", "proc_ms", "rtfx", "text"}


@needs_fixture
def test_bench_json_sequential(manifest):
    result = run("bench", "-m", MODEL, "--manifest", manifest, "-t", 1, "--json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert {"model", "threads", "load_ms", "files"} <= set(report)
    assert report["model"] == str(MODEL) and report["threads"] == 1 and report["random_weights"] is False
    assert "concurrency" not in report and "wall_ms" not in report
    files = report["files"]
    assert [Path(f["path"]).name for f in files] == ["short_1s_16k.wav", "speech_44k_stereo.wav", "speech_16k.wav"]
    for f in files:
        assert FILE_KEYS <= set(f) and f["proc_ms"] > 0 and f["audio_sec"] > 0
    assert files[0]["wer"] == 0.0 and "wer" not in files[1] and files[2]["wer"] > 0
    assert abs(files[0]["audio_sec"] - 1.0) < 0.01
    # Counted as the WER counts words (punctuation splits words, see parakeet_cli.wer).
    n_ref = len(normalize(files[0]["reference"])) + len(normalize(files[2]["reference"]))
    assert report["reference_words"] == n_ref and report["wer"] == round(2 / n_ref, 4)
    assert report["total_audio_sec"] == round(sum(f["audio_sec"] for f in files), 3) or abs(
        report["total_audio_sec"] - sum(f["audio_sec"] for f in files)) < 0.005


@needs_fixture
def test_bench_json_concurrent(manifest):
    result = run("bench", "-m", MODEL, "--manifest", manifest, "-c", 2, "-t", 1, "--json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["concurrency"] == 2 and report["threads"] == 1
    assert report["wall_ms"] > 0 and report["aggregate_rtfx"] > 0
    assert report["aggregate_rtfx"] == pytest.approx(report["total_audio_sec"] * 1000 / report["wall_ms"], rel=0.01)
    sequential = json.loads(run("bench", "-m", MODEL, "--manifest", manifest, "--json").stdout)
    assert [f["text"] for f in report["files"]] == [f["text"] for f in sequential["files"]]


@needs_fixture
def test_bench_threads_default_to_the_budget_divided_by_k(manifest):
    budget = _native.set_threads(0)
    report = json.loads(run("bench", "-m", MODEL, "--manifest", manifest, "-c", 2, "--json").stdout)
    assert report["threads"] == max(1, budget // 2)
    report = json.loads(run("bench", "-m", MODEL, "--manifest", manifest, "--json").stdout)
    assert report["threads"] == budget


@needs_fixture
def test_bench_table(manifest):
    result = run("bench", "-m", MODEL, "--manifest", manifest, "-c", 2)
    assert result.exit_code == 0
    out = result.stdout
    for needle in ("RTFx", "proc ms", "short_1s_16k.wav", "total:", "wall:", "aggregate RTFx", "WER:"):
        assert needle in out
    assert "random weights" not in out


@needs_fixture
def test_bench_takes_audio_files_as_arguments_after_the_manifests(manifest, tmp_path):
    clips = [AUDIO / "short_1s_16k.wav", AUDIO / "speech_44k_stereo.wav"]
    result = run("bench", "-m", MODEL, *clips, "-t", 1, "--json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert [f["path"] for f in report["files"]] == [str(c) for c in clips]
    assert "wer" not in report and all("reference" not in f for f in report["files"])
    with Context(MODEL) as ctx:
        assert [f["text"] for f in report["files"]] == [ctx.transcribe(c).text for c in clips]
    # Both: the manifest's files first (with their references), then the arguments.
    both = json.loads(run("bench", "-m", MODEL, "--manifest", manifest, clips[0], "-t", 1, "--json").stdout)
    listed = [f["path"] for f in json.loads(run("bench", "-m", MODEL, "--manifest", manifest, "--json").stdout)["files"]]
    assert [f["path"] for f in both["files"]] == listed + [str(clips[0])]
    assert "wer" in both and "reference" not in both["files"][-1]
    # A missing file is a usage error naming it, before the model loads.
    result = run("bench", "-m", MODEL, tmp_path / "missing.wav")
    assert result.exit_code == 2 and "missing.wav" in result.stderr and "does not exist" in result.stderr


@needs_fixture
def test_bench_bad_audio_in_manifest_is_a_runtime_error(tmp_path):
    m = tmp_path / "m.txt"
    m.write_text(f"{AUDIO / 'short_1s_16k.wav'}\nmissing.wav\n")
    result = run("bench", "-m", MODEL, "--manifest", m)
    assert result.exit_code == 1
    assert f"manifest line 2: {tmp_path / 'missing.wav'}: no such file" in result.stderr
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing here\n")
    result = run("bench", "-m", MODEL, "--manifest", empty)
    assert result.exit_code == 2 and "lists no audio files" in result.stderr


# ---- the generated default model ------------------------------------------------------------
def _read(path):
    """(fields, [(tensor name, type, shape)] in file order), by the converter tests' reader."""
    fields, tensors = read_gguf(path)
    return fields, [(name, kind, shape) for name, (kind, shape, _) in tensors.items()]


@pytest.mark.skipif(not MODEL.exists(), reason="no NeMo fixture model")
@pytest.mark.parametrize("out_type,fixture", [("f32", "model.gguf"), ("q8_0", "model-q8_0.gguf")])
def test_generated_model_has_the_schema_nemo_and_the_converter_produce(tmp_path, out_type, fixture):
    """The tiny parameterisation has the dimensions of the NeMo-made fixture model, so the two
    files must agree on every tensor (name, order, type, shape) and every metadata key and type;
    values differ only for the name, the tokenizer pieces and scores and (random) weights."""
    if not (FIXTURE / fixture).exists():
        pytest.skip(f"no {fixture}")
    ours = tmp_path / "ours.gguf"
    write_synthetic_model(ours, ARCH_TINY, out_type)
    f_ours, t_ours = _read(ours)
    f_ref, t_ref = _read(FIXTURE / fixture)
    assert t_ours == t_ref
    assert {k: v[0] for k, v in f_ours.items()} == {k: v[0] for k, v in f_ref.items()}
    differing = {k for k in f_ref if f_ours[k][1] != f_ref[k][1]}
    assert differing <= {"general.name", "parakeet.tokenizer.pieces", "parakeet.tokenizer.scores"}
    assert f_ours["general.name"][1] == "synthetic-tiny-random-weights"
    pieces = f_ours["parakeet.tokenizer.pieces"][1]
    assert len(pieces) == len(set(pieces)) == f_ref["parakeet.vocab_size"][1]
    # The front end is not random: the Hann window and the Slaney mel filterbank equal NeMo's
    # (torch computes the window in float32: an ulp of difference).
    for name in ("preprocessor.featurizer.window", "preprocessor.featurizer.fb"):
        np.testing.assert_allclose(_tensor(ours, name), _tensor(FIXTURE / fixture, name), atol=1e-6)


def _tensor(path, name):
    return read_gguf(path)[1][name][2]


def test_generated_model_loads_runs_and_is_reproducible(tmp_path):
    path = ensure_synthetic_model(ARCH_TINY, "q8_0", directory=tmp_path)
    assert path == synthetic_model_path(ARCH_TINY, "q8_0", directory=tmp_path) and path.exists()
    again = tmp_path / "again.gguf"
    write_synthetic_model(again, ARCH_TINY, "q8_0")
    assert again.read_bytes() == path.read_bytes()
    calls = []
    assert ensure_synthetic_model(ARCH_TINY, "q8_0", directory=tmp_path, on_generate=calls.append) == path
    assert calls == []  # cached: not generated again
    with Context(path) as ctx:
        assert ctx.info["arch"] == "hybrid_tdt_ctc" and ctx.info["tensor_types"]["q8_0"] > 0
        t = ctx.transcribe(AUDIO / "speech_16k.wav")
        # The biased blank keeps random weights from emitting a token on most frames.
        n_frames = t.duration / t.frame_sec
        assert len(t.tokens) < n_frames / 4
        assert np.isfinite([k.confidence for k in t.tokens]).all()


def test_bench_default_path_with_the_tiny_model(tmp_path):
    env = {"PARAKEET_CACHE": str(tmp_path)}
    result = run("bench", "--synthetic-size", "tiny", "--json", env=env)
    assert result.exit_code == 0, result.stderr
    assert "generating the random-weight tiny benchmark model" in result.stderr
    report = json.loads(result.stdout)
    assert report["random_weights"] is True and report["note"] == "random weights: for speed measurements only"
    assert Path(report["model"]).parent == tmp_path
    assert [Path(f["path"]).name for f in report["files"]] == ["bench_clip1.flac", "bench_clip2.flac",
                                                               "bench_clip3.flac"]
    assert "wer" in report
    table = run("bench", "--synthetic-size", "tiny", env=env)
    assert table.exit_code == 0 and "generating" not in table.stderr
    assert "random weights: for speed measurements only" in table.stdout


@pytest.mark.skipif(not os.environ.get("PARAKEET_TEST_BENCH_110M"),
                    reason="set PARAKEET_TEST_BENCH_110M=1 to generate and bench the 110M default model")
def test_bench_default_110m_model():
    result = run("bench", "--json", "-c", 2)
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["random_weights"] is True and report["concurrency"] == 2
    with Context(report["model"]) as ctx:
        info = ctx.info
    assert (info["d_model"], info["n_layers"], info["n_heads"], info["ff_dim"], info["vocab_size"],
            info["pred_hidden"], info["joint_hidden"], info["durations"]) == (512, 17, 8, 2048, 1024, 640, 640,
                                                                              [0, 1, 2, 3, 4])
