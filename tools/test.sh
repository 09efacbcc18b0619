#!/usr/bin/env bash
# Runs every test: builds the C++ library and tests (build/), runs ctest, then pytest against
# this working tree (the freshly built library and the Python sources, not an installed copy).
# Tests marked `long` (a simulated multi-node Ray cluster: minutes on a 2-core machine) run
# only with --long, which builds and then runs just them (no ctest); .ci/run runs both.
# Usage: bash tools/test.sh [--long]        (after tools/setup.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${PARAKEET_BUILD_DIR:-$ROOT/build}
JOBS=${JOBS:-$(nproc)}

TIER="not long"
[ "${1:-}" = "--long" ] && TIER="long"

cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPARAKEET_BUILD_TESTS=ON >/dev/null
ninja -C "$BUILD" -j "$JOBS"
if [ "$TIER" != "long" ]; then  # the long tier is Python only; the C++ tests ran already
  bash tools/check_isa_isolation.sh "$BUILD"
  bash tools/check_exports.sh "$BUILD"
  bash tools/check_noop_build.sh "$BUILD"
  (cd "$BUILD" && ctest --output-on-failure -j "$JOBS")
fi

PY=${PY:-$ROOT/.venv/bin/python}
PARAKEET_LIBRARY="$BUILD/libparakeet/libparakeet.so" PYTHONPATH="$ROOT:$ROOT/cli" \
  "$PY" -m pytest -q tests/python -m "$TIER"
