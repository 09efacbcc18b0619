#!/usr/bin/env bash
# Fails when an ISA-specific object (*_avx2.cpp.o, *_avx512.cpp.o) defines a weak (COMDAT)
# symbol: an inline function or template instantiated there is compiled with AVX2 or AVX-512,
# and the linker may pick that copy for the portable code too, which would then crash on a CPU
# without that instruction set.
# Usage: bash tools/check_isa_isolation.sh [build-dir]
set -euo pipefail
BUILD=${1:-build}
status=0
while IFS= read -r obj; do
  weak=$(nm -C --defined-only "$obj" | awk '$2 ~ /^[WVu]$/ && $3 != "DW.ref.__gxx_personality_v0"' || true)
  if [ -n "$weak" ]; then
    echo "$obj defines weak symbols compiled with an ISA extension:"
    echo "$weak"
    status=1
  fi
done < <(find "$BUILD" -name '*_avx2.cpp.o' -o -name '*_avx512.cpp.o')
[ $status -eq 0 ] && echo "ISA isolation: no weak symbols in $(find "$BUILD" -name '*_avx2.cpp.o' -o -name '*_avx512.cpp.o' | wc -l) ISA-specific objects"
exit $status
