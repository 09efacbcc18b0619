#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/fuzz_*.cpp) with clang and runs each for a bounded time.
# Usage: bash tools/fuzz.sh [seconds-per-target, default 60]
# Targets: fuzz_gguf (model files), fuzz_wav (WAV files for the *_path entry points); seeds
# come from fuzz/make_gguf_seeds.py and fuzz/make_wav_seeds.py.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-60}
BUILD=build-fuzz

CC=clang CXX=clang++ cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DPARAKEET_BUILD_FUZZ=ON -DPARAKEET_BUILD_TESTS=OFF -DPARAKEET_BUILD_BENCH=OFF >/dev/null
ninja -C "$BUILD" -j "$(nproc)"

for target in "$BUILD"/fuzz/fuzz_*; do
  [ -x "$target" ] || continue
  name=$(basename "$target")
  work=$(mktemp -d)
  # Seeds are read from fuzz/corpus/<name>; new inputs go to a scratch dir, not the tree.
  echo "fuzzing $name for ${SECONDS_EACH}s"
  "$target" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    "$work" "fuzz/corpus/$name" 2>&1 | tail -n 15
  rm -rf "$work"
done
