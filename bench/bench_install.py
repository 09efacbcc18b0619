"""What a user waits for: the wheel against a source install, each into a fresh venv.

For each way in: the wheel's size, the time to install it (``pip install``; dependencies from
pip's cache when warm, which the report says), and the time from nothing to the first
transcript (install + ``parakeet-cli transcribe`` on a fixture model and clip). The source
install is ``pip install .`` of this tree with a compiler (ccache off, a fresh build folder).
Prints a table and, with --json, the figures.

    python bench/bench_install.py --wheel dist/parakeet-*-manylinux_*_x86_64.whl [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "tests" / "data" / "nemo" / "hybrid_tdt_ctc" / "model.gguf"
CLIP = ROOT / "tests" / "data" / "audio" / "speech_16k.wav"


def run(cmd, env=None, cwd=None) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return time.perf_counter() - start


def one(kind: str, target: str, work: Path) -> dict:
    venv = work / f"venv-{kind}"
    env = {**os.environ, "CCACHE_DISABLE": "1"}
    env.pop("PARAKEET_LIBRARY", None)
    env.pop("PYTHONPATH", None)
    t_venv = run([sys.executable, "-m", "venv", str(venv)], env)
    pip = [str(venv / "bin" / "pip"), "install", "-q"]
    if kind == "wheel":
        pip += ["--only-binary=:all:"]
    t_install = run(pip + [target], env, cwd=work)
    t_first = run([str(venv / "bin" / "parakeet-cli"), "transcribe", "-m", str(MODEL), str(CLIP)], env, cwd=work)
    return {"kind": kind, "venv_s": round(t_venv, 2), "install_s": round(t_install, 2),
            "first_transcript_s": round(t_first, 2),
            "nothing_to_transcript_s": round(t_venv + t_install + t_first, 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wheel", required=True, type=Path)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        src = work / "src"  # a copy without build folders, so the source install really builds
        shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns("build*", ".venv", ".nemo", ".cache", "dist",
                                                                 ".git", "tests", "bench"))
        rows = [one("wheel", str(args.wheel.resolve()), work), one("source", str(src), work)]
    rows[0]["size_mb"] = round(args.wheel.stat().st_size / 1e6, 2)
    report = {"cpu": platform.processor() or platform.machine(), "nproc": os.cpu_count(),
              "load_avg": os.getloadavg(), "rows": rows,
              "note": "dependencies come from pip's cache when it is warm (the same for both rows)"}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{'':8} {'size MB':>8} {'venv s':>7} {'install s':>10} {'1st transcript s':>17} {'total s':>8}")
    for r in rows:
        print(f"{r['kind']:8} {r.get('size_mb', ''):>8} {r['venv_s']:>7} {r['install_s']:>10} "
              f"{r['first_transcript_s']:>17} {r['nothing_to_transcript_s']:>8}")
    print(f"load average {report['load_avg']}, {report['nproc']} CPUs; {report['note']}")


if __name__ == "__main__":
    main()
