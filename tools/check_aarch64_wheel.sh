#!/usr/bin/env bash
# Checks the library inside a cross-built aarch64 wheel, as a user on an ARM machine would get
# it: the C-ABI conformance suite (tests/c/test_capi_conformance.c, plain C99 against the public
# header) is cross-compiled against the wheel's own libparakeet.so and header and run under
# qemu-user on the fixture models, once at every ARM level (-cpu max: i8mm; cortex-a76: dotprod;
# cortex-a72: neon only; CPUS="max" for one). The Python side of the wheel is the x86-64
# wheel's, byte for byte.
#   bash tools/check_aarch64_wheel.sh dist/parakeet-*-manylinux_*_aarch64.whl
set -euo pipefail
cd "$(dirname "$0")/.."
wheel=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m zipfile -e "$wheel" "$work/wheel"
lib="$work/wheel/parakeet_py"
aarch64-linux-gnu-gcc -std=c99 -O1 -Wall tests/c/test_capi_conformance.c -I "$lib/include" -L "$lib" -lparakeet -lm \
  -Wl,-rpath,"$lib" -o "$work/conformance"
fixtures=tests/data/nemo
mkdir "$work/scratch"
for cpu in ${CPUS:-max cortex-a76 cortex-a72}; do
  QEMU_CPU=$cpu qemu-aarch64 -L /usr/aarch64-linux-gnu "$work/conformance" "$fixtures/hybrid_tdt_ctc/model.gguf" \
    "$fixtures/rnnt/model.gguf" tests/data/gguf/reference_writer.gguf "$work/scratch" > "$work/out.txt" \
    || { tail -20 "$work/out.txt"; echo "conformance failed on -cpu $cpu" >&2; exit 1; }
  echo "aarch64 wheel, -cpu $cpu: $(tail -1 "$work/out.txt")"
done
