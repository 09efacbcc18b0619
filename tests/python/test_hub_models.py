"""Models by name (parakeet_py.hub): the Hub is a local server of ours on 127.0.0.1
(local_hub.py) that huggingface_hub itself talks to, through HF_ENDPOINT; every run is a
parakeet-cli (or Python) subprocess with its own HF_HOME."""

from __future__ import annotations

import filecmp
import io
import json
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import numpy as np
import pytest

from data_helpers import CONVERSATION, NEMO_DIR, SPEECH
from hub_helpers import RUN_TIMEOUT_SEC, cli_command, hub_env, ok, one_line_error, run, run_cli
from local_hub import LocalHub

TDT_NEMO = NEMO_DIR / "tdt" / "model.nemo"
CTC_NEMO = NEMO_DIR / "ctc" / "model.nemo"
SORTFORMER_NEMO = NEMO_DIR / "sortformer_stream" / "model.nemo"
REPO = "nvidia/tiny-tdt"


@pytest.fixture
def hub():
    server = LocalHub()
    server.add(REPO, {"model.nemo": TDT_NEMO.read_bytes(), "README.md": b"# a tiny TDT model\n"})
    yield server
    server.close()


@pytest.fixture
def env(hub, tmp_path):
    return hub_env(hub.url, tmp_path / "hf")


def local_convert(nemo: Path, out_type: str, directory: Path) -> Path:
    from parakeet_py.convert import convert_nemo

    out = directory / f"local-{nemo.parent.name}-{out_type}.gguf"
    if not out.exists():
        convert_nemo(nemo, out, out_type)
    return out


def transcribe(env, model) -> str:
    text = ok(run_cli(env, "transcribe", "-m", model, SPEECH))
    assert text.strip(), "the fixture model transcribes the speech clip to some text"
    return text


def pull(env, name: str) -> Path:
    return Path(ok(run_cli(env, "pull", name)).strip())


@pytest.mark.parametrize("out_type", ["f32", "q8_0"])
def test_a_nemo_repo_gives_the_local_converts_file_and_text(env, tmp_path, out_type):
    local = local_convert(TDT_NEMO, out_type, tmp_path)
    assert transcribe(env, f"{REPO}:{out_type}") == transcribe(env, local)
    assert filecmp.cmp(pull(env, f"{REPO}:{out_type}"), local, shallow=False)


def test_the_default_type_is_q8_0_and_a_second_run_converts_nothing(env, hub):
    first = run_cli(env, "pull", REPO)
    path = Path(ok(first).strip())
    assert path.name.endswith("-q8_0.gguf") and "converting" in first.stderr
    stamp = path.stat().st_mtime_ns
    again = run_cli(env, "pull", REPO)
    assert Path(ok(again).strip()) == path and "converting" not in again.stderr
    assert path.stat().st_mtime_ns == stamp
    assert [r.range for r in hub.requests() if r.method == "GET" and "/resolve/" in r.path] == [None]  # one download


def test_a_gguf_in_a_repo_is_used_as_published(env, hub, tmp_path):
    f32, q8 = local_convert(TDT_NEMO, "f32", tmp_path), local_convert(TDT_NEMO, "q8_0", tmp_path)
    repo = hub.add("someone/tiny-gguf", {"gguf/tdt-f32.gguf": f32.read_bytes(), "gguf/tdt-q8_0.gguf": q8.read_bytes()})
    name = "someone/tiny-gguf/gguf/tdt-q8_0.gguf"
    path = pull(env, name)
    assert "snapshots" in path.parts and filecmp.cmp(path, q8, shallow=False)
    assert transcribe(env, name) == transcribe(env, q8)
    [listed] = json.loads(ok(run_cli(env, "models", "--json")))
    assert (listed["name"], listed["file"], listed["commit"], listed["type"]) == \
        ("someone/tiny-gguf", "gguf/tdt-q8_0.gguf", repo.refs["main"], "as published")
    # with an explicit type a published file is requantised once, as `parakeet-cli quantize` does
    from parakeet_py.convert import requantize_gguf

    requantize_gguf(f32, tmp_path / "requantized.gguf", "q8_0")
    assert filecmp.cmp(pull(env, "someone/tiny-gguf/gguf/tdt-f32.gguf:q8_0"), tmp_path / "requantized.gguf",
                       shallow=False)


def test_a_new_revision_converts_again_and_an_old_one_stays_pinned(env, hub, tmp_path):
    first = pull(env, f"{REPO}:f32")
    old_commit = hub.repos[REPO].refs["main"]
    hub.repos[REPO].commit({"model.nemo": CTC_NEMO.read_bytes()})
    second = pull(env, f"{REPO}:f32")
    assert second != first and first.exists()
    assert filecmp.cmp(second, local_convert(CTC_NEMO, "f32", tmp_path), shallow=False)
    pinned = run_cli(env, "pull", f"{REPO}@{old_commit}:f32")
    assert Path(ok(pinned).strip()) == first and "converting" not in pinned.stderr


def padded_nemo(nemo: Path, extra_bytes: int) -> bytes:
    """``nemo`` with one more tar member of ``extra_bytes`` random bytes, which the converter
    ignores: a file big enough for huggingface_hub to write part of it (it writes 10 MiB chunks)."""
    out = io.BytesIO()
    with tarfile.open(nemo) as src, tarfile.open(fileobj=out, mode="w") as dst:
        for member in src.getmembers():
            dst.addfile(member, src.extractfile(member) if member.isfile() else None)
        padding = tarfile.TarInfo("padding.bin")
        padding.size = extra_bytes
        dst.addfile(padding, io.BytesIO(np.random.default_rng(0).bytes(extra_bytes)))
    return out.getvalue()


def test_a_download_cut_midway_resumes(env, hub, tmp_path):
    big = padded_nemo(TDT_NEMO, 24 << 20)
    hub.repos[REPO].commit({"model.nemo": big})
    hub.cut_after = cut = len(big) * 3 // 4
    result = run_cli(env, "pull", f"{REPO}:f32")
    if result.returncode != 0:  # huggingface_hub 0.x gives up on a broken connection (2.x retries at once)...
        assert "run the same command again to resume it" in one_line_error(result)
        result = run_cli(env, "pull", f"{REPO}:f32")  # ...and its next run resumes the partial file
    path = Path(ok(result).strip())
    first, resumed = [r.range for r in hub.requests() if r.method == "GET" and "/resolve/" in r.path]
    start = int(resumed[len("bytes="):-1])
    assert first is None and resumed == f"bytes={start}-" and 0 < start <= cut
    assert filecmp.cmp(path, local_convert(TDT_NEMO, "f32", tmp_path), shallow=False)


def test_a_pull_killed_midway_leaves_nothing_taken_for_a_model(env, hub, tmp_path):
    """huggingface_hub 2.x downloads into a file of its own process, so the next run starts the
    file again (0.x resumes it with a Range request); either way the killed run's partial file
    is never taken for the model."""
    big = padded_nemo(TDT_NEMO, 24 << 20)
    hub.repos[REPO].commit({"model.nemo": big})
    hub.stall_after = len(big) * 3 // 4
    proc = subprocess.Popen(cli_command("pull", f"{REPO}:f32"), env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + RUN_TIMEOUT_SEC
        partial = []
        while time.monotonic() < deadline and not partial:
            partial = [p for p in (tmp_path / "hf").rglob("*.incomplete") if p.stat().st_size > 0]
            time.sleep(0.05)
        assert partial, "the first download wrote nothing"
    finally:
        proc.kill()  # killed midway: the server holds the rest back
        proc.wait(timeout=RUN_TIMEOUT_SEC)
        hub.release.set()
    assert 0 < partial[0].stat().st_size < len(big)
    path = pull(env, f"{REPO}:f32")
    assert filecmp.cmp(path, local_convert(TDT_NEMO, "f32", tmp_path), shallow=False)


def test_offline_the_cache_serves_without_a_request(env, hub, tmp_path):
    online = transcribe(env, REPO)
    before = len(hub.requests())
    offline = dict(env, HF_HUB_OFFLINE="1")
    assert transcribe(offline, REPO) == online
    assert REPO in ok(run_cli(offline, "models"))
    assert len(hub.requests()) == before, hub.requests()[before:]
    hub.close()  # unreachable rather than offline: the cache serves too
    assert transcribe(env, REPO) == online


def test_a_gated_repo_needs_a_token(hub, tmp_path):
    hub.add("nvidia/gated-tdt", {"model.nemo": TDT_NEMO.read_bytes()}, gated=True)
    name = "nvidia/gated-tdt:f32"
    line = one_line_error(run_cli(hub_env(hub.url, tmp_path / "a"), "pull", name))
    assert name in line and "gated" in line and "no token is set" in line and "HF_TOKEN" in line
    line = one_line_error(run_cli(hub_env(hub.url, tmp_path / "b", token="hf_wrong"), "pull", name))
    assert "has no access" in line
    pull(hub_env(hub.url, tmp_path / "c", token=hub.token), name)
    assert {r.token for r in hub.requests() if "/resolve/" in r.path} == {None, "hf_wrong", hub.token}


@pytest.mark.parametrize("name, expected", [
    ("nobody/nothing", "no model repo nobody/nothing"),
    ("someone/docs-only", "has no .nemo or .gguf file (its files: README.md)"),
    ("someone/two-models", "has 2 model files (a.nemo, b.nemo); name one, e.g. someone/two-models/a.nemo"),
    (f"{REPO}@v9", "has no revision 'v9'"),
    (f"{REPO}/missing.nemo", "has no file missing.nemo"),
    (f"{REPO}:q9", "unknown type 'q9'"),
])
def test_each_error_is_one_line_naming_the_model(env, hub, name, expected):
    hub.add("someone/docs-only", {"README.md": b"no model here\n"})
    hub.add("someone/two-models", {"a.nemo": b"a", "b.nemo": b"b"})
    line = one_line_error(run_cli(env, "transcribe", "-m", name, SPEECH))
    assert name in line and expected in line


def test_an_unreachable_hub_with_nothing_cached_is_one_line(env, hub):
    hub.close()
    line = one_line_error(run_cli(env, "pull", REPO))
    assert f"cannot reach the Hub at {hub.url}" in line and "not in the cache" in line
    line = one_line_error(run_cli(dict(env, HF_HUB_OFFLINE="1"), "pull", REPO))
    assert "not in the cache" in line and "HF_HUB_OFFLINE is set" in line


@pytest.mark.parametrize("size, step", [("400k", "downloading"), ("1800k", "converting to f32")])
def test_a_full_disk_is_one_line(env, tmp_path, size, step):
    """HF_HOME on a small tmpfs (a user + mount namespace, so no root is needed): too small
    for the download, then big enough for it but not for the conversion."""
    probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True, text=True) if shutil.which("unshare") \
        else None
    if probe is None or probe.returncode != 0:
        pytest.skip(f"no user and mount namespaces here ({probe.stderr.strip() if probe else 'no unshare'})")
    (tmp_path / "hf").mkdir()
    mount = 'mount -t tmpfs -o size="$0" tmpfs "$HF_HOME" && exec "$@"'
    result = run(["unshare", "-rm", "sh", "-c", mount, size, *cli_command("pull", f"{REPO}:f32")], env)
    line = one_line_error(result)
    assert f"{REPO}:f32: no space left" in line and step in line and "HF_HOME" in line


def test_models_lists_the_cache_and_rm_frees_it(env):
    for out_type in ("f32", "q8_0"):
        pull(env, f"{REPO}:{out_type}")
    listed = json.loads(ok(run_cli(env, "models", "--json")))
    assert sorted(m["type"] for m in listed) == ["f32", "q8_0"]
    assert all(m["name"] == REPO and m["file"] == "model.nemo" and m["bytes"] == Path(m["gguf"]).stat().st_size
               for m in listed)
    table = ok(run_cli(env, "models"))
    assert REPO in table and "q8_0" in table and "MB" in table
    ok(run_cli(env, "models", "--rm", f"{REPO}:f32"))
    assert [m["type"] for m in json.loads(ok(run_cli(env, "models", "--json")))] == ["q8_0"]
    ok(run_cli(env, "models", "--rm", REPO))
    assert json.loads(ok(run_cli(env, "models", "--json"))) == []
    assert REPO in one_line_error(run_cli(env, "models", "--rm", REPO))


def test_two_processes_pulling_at_once_convert_once(env):
    procs = [subprocess.Popen(cli_command("pull", f"{REPO}:f32"), env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=RUN_TIMEOUT_SEC) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert outs[0][0] == outs[1][0]
    assert sum("converting" in err for _, err in outs) == 1
    folder = Path(outs[0][0].strip()).parent
    assert not list(folder.glob("*.part")) and not list(folder.parent.glob("blobs/*.incomplete"))


def test_the_python_api_takes_names(env, hub, tmp_path):
    hub.add("nvidia/tiny-sortformer", {"model.nemo": SORTFORMER_NEMO.read_bytes()})
    local, local_sortformer = local_convert(TDT_NEMO, "f32", tmp_path), local_convert(SORTFORMER_NEMO, "f32", tmp_path)
    code = (f"from parakeet_py import Context, Diarizer\n"
            f"with Context({REPO + ':f32'!r}) as a, Context({str(local)!r}) as b:\n"
            f"    assert a.transcribe({str(SPEECH)!r}).text == b.transcribe({str(SPEECH)!r}).text\n"
            f"with Diarizer('nvidia/tiny-sortformer:f32') as d, Diarizer({str(local_sortformer)!r}) as e:\n"
            f"    segments = d.diarize({str(CONVERSATION)!r})\n"
            f"    assert segments and segments == e.diarize({str(CONVERSATION)!r})\n"
            f"with Diarizer('nvidia/tiny-sortformer') as d:\n"
            f"    print(d.model_path)\n")
    out = ok(run([sys.executable, "-c", code], env))
    assert out.strip().endswith("-q8_0.gguf")


def test_a_vad_by_name_is_the_published_onnx_converted(env, hub):
    from parakeet_py.vad import package_onnx

    try:
        onnx = package_onnx()
    except Exception as e:  # the [vad] extra is not installed
        pytest.skip(str(e))
    hub.add("someone/silero", {"silero_vad.onnx": onnx.read_bytes()})
    by_name = json.loads(ok(run_cli(env, "vad", "-m", "someone/silero", SPEECH, "--format", "json")))
    by_alias = json.loads(ok(run_cli(env, "vad", "-m", "silero", SPEECH, "--format", "json")))
    assert by_name["segments"] and by_name["segments"] == by_alias["segments"]


def test_the_server_lists_its_model_by_name(env, tmp_path, monkeypatch):
    import httpx
    from server_helpers import ServerProcess

    for key, value in env.items():
        monkeypatch.setenv(key, value)
    with ServerProcess([], tmp_path, model=f"{REPO}:f32") as server:
        card = httpx.get(server.url + "/v1/models", timeout=10).json()["data"][0]
    assert card["id"] == f"{REPO}:f32"


def test_the_server_refuses_an_unknown_name_in_one_line(env):
    result = run([sys.executable, "-m", "parakeet_cli.server", "-m", "nobody/nothing", "--vad-model", "none"], env)
    assert "no model repo nobody/nothing" in one_line_error(result)
