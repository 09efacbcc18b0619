#!/usr/bin/env bash
# Sets up a fresh Debian/Ubuntu machine for parakeet: system packages, a virtual environment
# in .venv with the package installed (this builds libparakeet), then runs the main job once
# (parakeet-cli bench on a generated model).
# Usage: bash tools/setup.sh      (root or sudo for apt; idempotent)
set -euo pipefail
cd "$(dirname "$0")/.."

# chromium, chromium-driver: the web page's tests drive a headless browser (tests/python/test_web_page*.py).
APT_PACKAGES=(build-essential cmake ninja-build python3-venv python3-dev libgtest-dev
              clang libclang-rt-14-dev espeak-ng sox libsndfile1 chromium chromium-driver)

bash tools/apt_ensure.sh "${APT_PACKAGES[@]}"

PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/pip install -q --upgrade pip
# The [test] extra pulls in silero-vad, which depends on torch: installed first as 2.13.0, whose
# CPU-only wheel this workplace keeps on disk, or pip takes the newest release with its CUDA
# libraries (gigabytes) that nothing here uses.
.venv/bin/pip install -q "torch==2.13.0"
# A regular (non-editable) install: builds libparakeet and puts it inside the package.
.venv/bin/pip install -q ".[test]"

# parakeet.cpp's wheel with its CUDA libraries stubbed (.cache/pcpp): the differential hotword
# test and the peer benchmarks run its own library on the CPU, and the ggml tests
# (test_ggml_blocks.py, test_ggml_written_models.py) call its libggml-base.so.
bash bench/setup_parakeet_cpp.sh

# First check: the installed library loads and the command-line programs start.
.venv/bin/parakeet-cli --version
# Then the main job, end to end: two requests at once on the benchmark's generated model (the
# 110M architecture with random weights, made once into $PARAKEET_CACHE or ~/.cache/parakeet;
# about 10 s in all) over the three clips the package ships. The JSON ends with aggregate_rtfx.
.venv/bin/parakeet-cli bench --concurrency 2 --json --no-progress
echo "setup done: activate with 'source .venv/bin/activate'; run every test with 'bash tools/test.sh'"
