"""Token agreement of every quantised type with f32, ours next to parakeet.cpp's, on the
fixture models (docs/quantization.md's table comes from this script).

For each fixture family (tests/data/nemo/*/model.gguf: random-weight NeMo models of every
family, 80 and 128 mels) and each type, the f32 file is rewritten with ``parakeet-cli
quantize``'s code (requantize_gguf); both engines then transcribe the fixture clips from that
same file. Agreement is 1 - (token edit distance to the same engine's f32 result) / (f32
length), over all clips. parakeet.cpp runs through its own Python package in the venv that
bench/setup_parakeet_cpp.sh makes (.cache/pcpp), with its library, not ours.

    .venv/bin/python tools/kquant_agreement.py [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Sequence

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from parakeet_py import Context  # noqa: E402
from parakeet_py.convert import requantize_gguf  # noqa: E402
from parakeet_py.convert.quantize import OUT_TYPES  # noqa: E402

FAMILIES = ("ctc", "rnnt", "tdt", "hybrid_rnnt_ctc", "hybrid_tdt_ctc")
CLIPS = ("speech_16k.wav", "long_30s_16k.wav", "speech_44k_stereo.wav")
PCPP_PYTHON = ROOT / ".cache" / "pcpp" / "venv" / "bin" / "python"

_PROBE = r"""
import json, sys, parakeet
out = []
for model in json.loads(sys.argv[1]):
    m = parakeet.Model(model)
    out.append([[t["id"] for t in m.transcribe(c, detail=True)["tokens"]] for c in json.loads(sys.argv[2])])
    m.close()
print(json.dumps(out))
"""


def edit_distance(a: Sequence[int], b: Sequence[int]) -> int:
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, y in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y))
        prev = cur
    return prev[-1]


def agreement(ref: List[List[int]], got: List[List[int]]) -> float:
    total = sum(len(r) for r in ref)
    errors = sum(edit_distance(r, g) for r, g in zip(ref, got))
    return 1.0 - errors / max(total, 1)


def ours(models: List[str], clips: List[str]) -> List[List[List[int]]]:
    runs = []
    for m in models:
        with Context(m) as ctx:
            runs.append([[t.id for t in ctx.transcribe(c).tokens] for c in clips])
    return runs


def parakeet_cpp(models: List[str], clips: List[str]) -> Optional[List[List[List[int]]]]:
    if not PCPP_PYTHON.exists():
        return None
    env = {k: v for k, v in os.environ.items() if k != "PARAKEET_LIBRARY"}
    env["LD_LIBRARY_PATH"] = str(ROOT / ".cache" / "pcpp" / "stub")  # the wheel's CUDA stand-ins
    r = subprocess.run([str(PCPP_PYTHON), "-c", _PROBE, json.dumps(models), json.dumps(clips)],
                       capture_output=True, text=True, env=env, timeout=1800)
    if r.returncode != 0:
        raise RuntimeError(f"parakeet.cpp failed: {r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", action="store_true", help="print the table as JSON")
    args = ap.parse_args()
    clips = [str(ROOT / "tests" / "data" / "audio" / c) for c in CLIPS]
    types = [t for t in OUT_TYPES if t != "f32"]
    table: Dict[str, Dict[str, Dict[str, Optional[float]]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for family in FAMILIES:
            src = ROOT / "tests" / "data" / "nemo" / family / "model.gguf"
            files = [str(src)]
            for t in types:
                out = Path(tmp) / f"{family}-{t}.gguf"
                requantize_gguf(src, out, t)
                files.append(str(out))
            mine, theirs = ours(files, clips), parakeet_cpp(files, clips)
            table[family] = {
                t: {"ours": agreement(mine[0], mine[i + 1]),
                    "parakeet_cpp": agreement(theirs[0], theirs[i + 1]) if theirs else None}
                for i, t in enumerate(types)}
    if args.json:
        print(json.dumps(table, indent=2))
        return 0
    print("| type | " + " | ".join(FAMILIES) + " |")
    print("| --- |" + " ---: |" * len(FAMILIES))
    for t in types:
        cells = []
        for f in FAMILIES:
            c = table[f][t]
            theirs = "n/a" if c["parakeet_cpp"] is None else f"{100 * c['parakeet_cpp']:.1f}"
            cells.append(f"{100 * c['ours']:.1f} / {theirs}")
        print(f"| {t} | " + " | ".join(cells) + " |")
    print("\n(token agreement with the same engine's f32 result, %: ours / parakeet.cpp's)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
