#!/usr/bin/env bash
# Installs a built wheel the way a user without a compiler would, and runs the main job on it:
# a fresh venv, PATH holding no compiler or build tool, binary packages only (pip may not build
# anything from source), no PARAKEET_LIBRARY, run outside the source tree so only the installed
# package can be imported. Then `parakeet-cli bench` on its generated model must end with a
# figure, and the x86 kernel levels below the CPU's must run when asked for.
#   bash tools/check_wheel_install.sh dist/parakeet-*-manylinux_*_x86_64.whl
set -euo pipefail
wheel=$(realpath "$1")
python=$(command -v "${PYTHON:-python3}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A bin folder with every program on PATH except compilers, linkers and build systems.
mkdir "$work/bin"
IFS=: read -r -a dirs <<<"$PATH"
for dir in "${dirs[@]}"; do
  [ -d "$dir" ] || continue
  for prog in "$dir"/*; do
    name=$(basename "$prog")
    case $name in
      *gcc*|*g++*|cc|c++|*-cc|*-c++|cpp|*clang*|ld|ld.*|*-ld|as|*-as|cmake|ctest|ninja|make|gmake|meson|*cython*)
        continue ;;
    esac
    [ -x "$prog" ] && [ ! -e "$work/bin/$name" ] && ln -s "$prog" "$work/bin/$name"
  done
done
export PATH="$work/bin"
for tool in cc gcc g++ c++ clang cmake ninja make ld; do
  if command -v "$tool" >/dev/null; then echo "check_wheel_install: $tool is still on PATH" >&2; exit 1; fi
done
unset PARAKEET_LIBRARY PYTHONPATH
export PARAKEET_CACHE="$work/cache"

"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install -q --only-binary=:all: "$wheel"
cd "$work"
"$work/venv/bin/python" - <<'PY'
import parakeet_py, pathlib
lib = pathlib.Path(parakeet_py.__file__).with_name("libparakeet.so")
assert lib.is_file(), f"the wheel has no {lib}"
print(f"library from the wheel: {lib}")
# The server's web page: every file the page and its scripts load is in the installed package.
import re
from parakeet_cli.server.page import STATIC
wanted, seen = ["index.html"], set()
while wanted:
    name = wanted.pop()
    seen.add(name)
    text = (STATIC / name).read_text()  # (missing: FileNotFoundError names it)
    wanted += [n for n in re.findall(r'"(?:/static/|\./)([\w.-]+)"', text) if n not in seen]
print(f"the web page's files from the wheel: {sorted(seen)}")
PY
"$work/venv/bin/parakeet-cli" bench --json > "$work/bench.json"
"$work/venv/bin/python" - "$work/bench.json" <<'PY'
import json, sys
from parakeet_py import Context
from parakeet_py.audio import load_audio
report = json.load(open(sys.argv[1]))
assert report["rtfx"] > 0 and report["files"], report
print(f"bench from the installed wheel: kernel level {report['isa']}, RTFx {report['rtfx']:.1f}")
# Every lower kernel level is in the wheel too, and runs when asked for (the x86 chain up to
# the level this CPU chose: an AVX2-only machine checks scalar).
audio = load_audio(report["files"][0]["path"])
chain = ("scalar", "avx2", "avx512")
for level in chain[:chain.index(report["isa"].split("+")[0])]:
    with Context(report["model"], isa=level) as ctx:
        assert ctx.info["isa"] == level, ctx.info
        print(f"  {level}: {ctx.transcribe(audio, sample_rate=16000).text[:40]!r}")
PY
