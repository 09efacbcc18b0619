#!/usr/bin/env bash
# Fails when an up-to-date build folder is built again and ninja still compiles or links
# something: a file that is dirty on every run (a header regenerated at each build or configure,
# a source dated in the future, a dependency that never exists) recompiles everything that
# includes it, every time. Prints ninja's reasons (-d explain) for what it did.
# The CONFIGURE_DEPENDS globs (libparakeet/, tests/, bench/) re-check their folders on every run:
# that step is no work to ninja ("no work to do"), but a dry run (`ninja -n`) cannot perform it,
# so it always answers "Re-running CMake..." instead; this check therefore builds for real.
# Usage: bash tools/check_noop_build.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
ninja -C "$BUILD" >/dev/null
again=$(ninja -C "$BUILD" -d explain 2>&1)
if [ "$(echo "$again" | tail -n 1)" != "ninja: no work to do." ]; then
  echo "building the up-to-date $BUILD again did work; ninja's first reasons and steps:"
  echo "$again" | grep -v -e 'VerifyGlobs.cmake_force is dirty' -e 'Re-checking globbed directories' | head -n 20
  exit 1
fi
echo "no-op build: building $BUILD again compiles and links nothing"
