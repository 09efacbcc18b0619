"""What the batch tests share: the model, a manifest mixing good, bad and missing files, and
the reference transcripts from ``Context.transcribe`` file by file."""

import json
from pathlib import Path
from typing import Dict, List

from parakeet_py import Context

from data_helpers import AUDIO, CLIPS, MODEL, ROOT  # noqa: F401 (the batch tests take them from here)


def write_corpus(folder: Path, copies: int = 1) -> Path:
    """A JSONL manifest in ``folder``: every test clip ``copies`` times (ids c000...), a file that
    is not audio and a missing one; each row carries a NeMo-style ``text`` and a ``speaker``."""
    bad = folder / "not_audio.wav"
    bad.write_bytes(b"this is not a WAV file")
    rows = [{"id": f"c{i:03d}", "path": str(CLIPS[i % len(CLIPS)]), "text": f"ref {i}", "speaker": i % 3}
            for i in range(copies * len(CLIPS))]
    rows.append({"id": "bad", "path": "not_audio.wav", "text": "", "speaker": 9})  # relative to the manifest
    rows.append({"id": "missing", "path": str(folder / "nowhere.wav"), "text": "", "speaker": 9})
    manifest = folder / "manifest.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return manifest


def reference(paths: List[str], timestamps: bool) -> Dict[str, dict]:
    """``Context.transcribe(path)`` of each path: {path: {"text", "duration"[, "words", "tokens"]}}."""
    out = {}
    with Context(MODEL) as ctx:
        for p in sorted(set(paths)):
            d = ctx.transcribe(p, timestamps=timestamps).to_dict()
            keys = ("text", "duration", "words", "tokens") if timestamps else ("text", "duration")
            out[p] = {k: d[k] for k in keys}
    return out


def check_rows(rows: List[dict], manifest: Path, timestamps: bool) -> None:
    """Every manifest id exactly once; good files equal Context.transcribe, bad ones are errors."""
    wanted = [json.loads(line) for line in manifest.read_text().splitlines()]
    assert sorted(r["id"] for r in rows) == sorted(w["id"] for w in wanted)
    expected = reference([w["path"] for w in wanted if w["id"].startswith("c")], timestamps)
    by_id = {r["id"]: r for r in rows}
    for w in wanted:
        row = by_id[w["id"]]
        assert row["input_text"] == w["text"] and row["speaker"] == w["speaker"]
        assert row["decoder"] == "tdt" and row["model"].startswith("model.gguf@")
        if w["id"].startswith("c"):
            assert row["error"] is None, row["error"]
            assert {k: row[k] for k in expected[w["path"]]} == expected[w["path"]]
        else:
            assert row["error"] and row["text"] is None and row["duration"] is None
