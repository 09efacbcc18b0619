#!/usr/bin/env bash
# Cross-builds libparakeet and a bounded set of its C++ tests for AArch64 (Debian's cross
# toolchain, cmake/toolchains/aarch64-linux-gnu.cmake) and runs them under qemu-user on three
# emulated CPUs, so that every ARM level and every fallback runs:
#   max         neon, dotprod and i8mm: each test runs scalar, neon, dotprod and i8mm in one process
#   cortex-a76  dotprod without i8mm: i8mm detected as missing, refused and skipped
#   cortex-a72  Armv8.0, neon only (a Raspberry Pi 4's core): dotprod and i8mm missing
# (a smaller set on the last two), then NeMo parity at every level on max, and the ISA
# isolation and export checks on the cross-built objects. Emulated speed means nothing: only
# the stages' wall time is printed, as their cost.
# --all builds and runs every C++ test on the three CPUs instead (an hour or more under qemu).
# Usage: bash tools/test_aarch64.sh [--all]      (BUILD=build-aarch64, JOBS=nproc)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-aarch64}
JOBS=${JOBS:-$(nproc)}

# The toolchain, the emulator and GoogleTest's sources (Debian has no arm64 libgtest to link
# on an amd64 host; tests/CMakeLists.txt builds these sources instead).
bash tools/apt_ensure.sh crossbuild-essential-arm64 qemu-user googletest

# The bounded set. On max, where every level runs: the kernel tests of every slot with ARM
# code (and the table, the level order) and the C-ABI load options (PARAKEET_CPU and the isa
# option, both architectures' names), then NeMo parity end to end (per-stage bounds, and f32
# token ids, text and times equal to NeMo's, at each level). On the two smaller CPUs, what
# depends on the detected level: the table and the refusal of the missing levels, the load
# options, the Q8_0 layout and the K-quant units' order chosen per level (the i8mm level packs
# and decodes for SMMLA, the ones below do not), and the neon kernels on a CPU without the dot
# product (the dotprod and i8mm files are compiled for their own -march, so the compiler has
# already kept their instructions out of the rest). Left to --all: the parity test's
# thread-count check (the kernel tests check that per level) and every other test.
SUBSET=(test_kernel_table test_kernel_ops_softmax test_kernel_ops_layer_norm test_kernel_ops_activation
        test_kernel_ops_dot test_kernel_matmul_f32 test_kernel_matmul_f16 test_kernel_matmul_q8_0
        test_kernel_matmul_kquant test_capi_load_options)
FALLBACK_SUBSET=(test_kernel_table test_capi_load_options test_kernel_matmul_q8_0 test_kernel_matmul_kquant
                 test_kernel_matmul_f32 test_kernel_ops_softmax test_kernel_ops_layer_norm test_kernel_ops_activation
                 test_kernel_ops_dot)
PARITY=test_nemo_parity
PARITY_FILTER=NemoParity.EveryModelClipAndHeadMatchesNeMo

cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake \
      -DPARAKEET_BUILD_TESTS=ON -DPARAKEET_BUILD_BENCH=OFF >/dev/null
ALL=false
[ "${1:-}" = "--all" ] && ALL=true
if $ALL; then
  ninja -C "$BUILD" -j "$JOBS"
else
  ninja -C "$BUILD" -j "$JOBS" parakeet "${SUBSET[@]}" "$PARITY"
fi
NM=aarch64-linux-gnu-nm bash tools/check_isa_isolation.sh "$BUILD"
NM=aarch64-linux-gnu-nm bash tools/check_exports.sh "$BUILD"

# ctest runs each test through the toolchain's emulator (qemu-aarch64 -L <sysroot>), which
# takes its CPU model from QEMU_CPU. run_on CPU REGEX: the ctest names REGEX selects ("." all).
run_on() {
  local cpu=$1 select=$2 start
  echo "=== qemu-aarch64 -cpu $cpu"
  start=$(date +%s)
  (cd "$BUILD" && QEMU_CPU=$cpu ctest --output-on-failure -j "$JOBS" -R "$select")
  echo "=== -cpu $cpu: $(( $(date +%s) - start )) s"
}
names() { echo "^($(IFS='|'; echo "$*"))\$"; }

if $ALL; then
  for cpu in max cortex-a76 cortex-a72; do run_on "$cpu" .; done
  exit 0
fi
run_on max "$(names "${SUBSET[@]}")"
for cpu in cortex-a76 cortex-a72; do run_on "$cpu" "$(names "${FALLBACK_SUBSET[@]}")"; done
echo "=== qemu-aarch64 -cpu max: $PARITY --gtest_filter=$PARITY_FILTER"
start=$(date +%s)
PARAKEET_TEST_DATA=$PWD/tests/data QEMU_CPU=max qemu-aarch64 -L /usr/aarch64-linux-gnu \
  "$BUILD/tests/$PARITY" --gtest_filter="$PARITY_FILTER"
echo "=== parity: $(( $(date +%s) - start )) s"
