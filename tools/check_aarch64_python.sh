#!/usr/bin/env bash
# Installs the aarch64 wheel the way a user on 64-bit ARM Linux would, with an ARM Python and
# its own pip, and transcribes with it: Debian 12's arm64 python3.11 runs under qemu-user, pip
# installs the wheel and the aarch64 binary wheels of every dependency (no index, binary only,
# PATH empty, no compiler in the ARM userland), then, outside the source tree and without
# PARAKEET_LIBRARY, `python -m parakeet_cli.main transcribe` on a fixture model must give the
# x86-64 wheel's text and NeMo's (f32 token ids are equal across architectures) at every ARM
# level, and `parakeet-cli bench` must end with a figure. Emulated speed means nothing.
#   bash tools/check_aarch64_python.sh AARCH64_WHEEL X86_64_WHEEL
# The ARM userland is cached in $AARCH64_SYSROOT (default ~/.cache/parakeet-aarch64-sysroot);
# without it the script makes it with debootstrap from $DEBIAN_MIRROR (root or fakeroot).
# There is no binfmt_misc here, so an ARM process cannot exec() another ARM program: every ARM
# process is started explicitly as `qemu-aarch64 -L SYSROOT PROGRAM`.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
arm_wheel=$(realpath "$1")
x86_wheel=$(realpath "$2")
host_python=${PYTHON:-$repo/.venv/bin/python}
sysroot=${AARCH64_SYSROOT:-$HOME/.cache/parakeet-aarch64-sysroot}/bookworm
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
model=$repo/tests/data/nemo/tdt/model.gguf
clip=$repo/tests/data/audio/speech_16k.wav
nemo_ref=$repo/tests/data/nemo/tdt/ref_speech.gguf
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

bash tools/apt_ensure.sh qemu-user debootstrap fakeroot
qemu=$(command -v qemu-aarch64)

# The ARM userland. debootstrap's first stage (--foreign) only downloads and unpacks, running
# nothing of arm64; it unpacks just the essential packages and leaves the --include'd ones
# (Python) as .debs in var/cache/apt/archives, so each is unpacked with dpkg -x. Built beside
# the cache and moved in when complete, so an interrupted run is not reused.
if [ ! -x "$sysroot/usr/bin/python3.11" ]; then
  as_root=(); [ "$(id -u)" -ne 0 ] && as_root=(fakeroot)
  rm -rf "$sysroot.part"
  mkdir -p "$(dirname "$sysroot")"
  "${as_root[@]}" debootstrap --foreign --arch=arm64 --variant=minbase \
    --include=python3,python3-venv,python3-pip bookworm "$sysroot.part" "$mirror" >"$work/debootstrap.log" \
    || { tail -20 "$work/debootstrap.log"; exit 1; }
  for deb in "$sysroot.part"/var/cache/apt/archives/*.deb; do dpkg -x "$deb" "$sysroot.part"; done
  rm -f "$sysroot.part"/var/cache/apt/archives/*.deb
  mv "$sysroot.part" "$sysroot"
fi

# The dependencies' aarch64 wheels, resolved on the host for Python 3.11. pip download matches
# only the platform tags it is given (pip on an ARM machine accepts every older manylinux tag
# by itself), so the whole ladder up to the wheel's manylinux_2_35 is named; without it
# soundfile resolves to its wheel without libsndfile.
platforms=(--platform manylinux2014_aarch64)
for minor in $(seq 17 35); do platforms+=(--platform "manylinux_2_${minor}_aarch64"); done
"$host_python" -m pip download -q --only-binary=:all: "${platforms[@]}" --python-version 3.11 \
  --implementation cp -d "$work/wheelhouse" "$arm_wheel"

# Every ARM process: a clean environment (no PARAKEET_LIBRARY, no PYTHONPATH, an empty PATH, no
# pip configuration: qemu -L falls back to the host's /etc, and its pip.conf names local
# indexes), the working directory outside the source tree.
mkdir "$work/empty" "$work/run"
cd "$work/run"
arm() {  # seconds program [arguments...]
  local seconds=$1; shift
  timeout "$seconds" env -i HOME="$work" PATH="$work/empty" PIP_CONFIG_FILE=/dev/null \
    PARAKEET_CACHE="$work/cache" ${QEMU_CPU:+QEMU_CPU=$QEMU_CPU} "$qemu" -L "$sysroot" "$@"
}
# --without-pip: ensurepip runs pip in a child ARM process, which cannot exec here. pip then
# runs from Debian's own pip wheel (a wheel is importable as a zip) inside the venv.
arm 60 "$sysroot/usr/bin/python3.11" -m venv --without-pip "$work/venv"
python=$work/venv/bin/python3.11
pip_wheel=$(ls "$sysroot"/usr/share/python-wheels/pip-*.whl)
arm 900 "$python" "$pip_wheel/pip" install -q --no-index --only-binary=:all: --no-cache-dir \
  --disable-pip-version-check --find-links "$work/wheelhouse" "$arm_wheel"

# The references: NeMo's text for this clip (the fixture's provenance) and the x86-64 wheel's.
nemo_text=$("$host_python" -c 'import gguf, sys; print(gguf.GGUFReader(sys.argv[1]).fields["ref.tdt.text"].contents())' "$nemo_ref")
python3 -m zipfile -e "$x86_wheel" "$work/x86"
x86_text=$(env -u PARAKEET_LIBRARY PYTHONPATH="$work/x86" "$host_python" -m parakeet_cli.main transcribe -m "$model" "$clip")
[ "$x86_text" = "$nemo_text" ] || { echo "x86-64 wheel: text differs from NeMo's" >&2; exit 1; }

for cpu in ${CPUS:-max cortex-a76 cortex-a72}; do
  export QEMU_CPU=$cpu
  # Only the ARM userland and the venv are loaded: the wheel's libparakeet, nothing of the host.
  arm 120 "$python" - "$model" "$sysroot" "$work/venv" <<'PY'
import sys
from parakeet_py import Context
model, *allowed = sys.argv[1:]
with Context(model) as ctx:
    mapped = {line.split()[-1] for line in open("/proc/self/maps") if "/" in line}
    isa = ctx.info["isa"]
stray = sorted(p for p in mapped | set(filter(None, sys.path)) if p != model and not p.startswith(tuple(allowed)))
assert not stray, f"loaded from outside the ARM userland and the venv: {stray}"
lib = [p for p in mapped if p.endswith("/libparakeet.so")]
assert lib == [f"{allowed[1]}/lib/python3.11/site-packages/parakeet_py/libparakeet.so"], lib
print(f"kernel level {isa}, library {lib[0]}")
PY
  text=$(arm 120 "$python" -m parakeet_cli.main transcribe -m "$model" "$clip")
  [ "$text" = "$x86_text" ] || { printf 'aarch64 -cpu %s: text differs from x86-64:\n%s\n%s\n' "$cpu" "$text" "$x86_text" >&2; exit 1; }
  echo "aarch64 Python, -cpu $cpu: transcript equals the x86-64 wheel's and NeMo's"
done

# Once, at the top level: the default manifest's three clips, decoded by the FLAC path.
export QEMU_CPU=max
arm 300 "$python" -m parakeet_cli.main bench -m "$model" --json --no-progress >"$work/bench.json"
"$host_python" - "$work/bench.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
assert report["rtfx"] > 0 and len(report["files"]) == 3, report
print(f"aarch64 Python, bench on -cpu max: kernel level {report['isa']}, {len(report['files'])} clips transcribed")
PY
