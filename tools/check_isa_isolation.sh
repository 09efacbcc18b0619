#!/usr/bin/env bash
# Checks the ISA-specific objects (*_avx2.cpp.o, *_avx512.cpp.o; *_neon.cpp.o, *_dotprod.cpp.o,
# *_i8mm.cpp.o in an AArch64 build):
# - no weak (COMDAT) symbol: an inline function or template instantiated there is compiled
#   with AVX2, AVX-512, SDOT or I8MM, and the linker may pick that copy for the portable code
#   too, which would then crash on a CPU without that instruction set;
# - no external function but the file's table fill function(s), add_<name>_<level>(KernelTable&)
#   (kernels/kernel_table.h): SIMD code is reached only through the kernel tables, never called
#   directly, so nothing can run it at a level the model was not loaded at.
# Usage: bash tools/check_isa_isolation.sh [build-dir]   (NM=aarch64-linux-gnu-nm for a cross build)
set -euo pipefail
BUILD=${1:-build}
NM=${NM:-nm}
status=0
count=0
while IFS= read -r obj; do
  count=$((count + 1))
  weak=$("$NM" -C --defined-only "$obj" | awk '$2 ~ /^[WVu]$/ && $3 != "DW.ref.__gxx_personality_v0"' || true)
  if [ -n "$weak" ]; then
    echo "$obj defines weak symbols compiled with an ISA extension:"
    echo "$weak"
    status=1
  fi
  level=$(basename "$obj" .cpp.o)
  level=${level##*_}
  others=$("$NM" -C --defined-only -g "$obj" | awk '$2 == "T" { $1 = ""; $2 = ""; sub(/^  /, ""); print }' |
           grep -Ev "^pk::kernels::add_[a-z0-9_]+_${level}\(pk::kernels::KernelTable&\)$" || true)
  if [ -n "$others" ]; then
    echo "$obj exports functions other than its add_*_${level}(KernelTable&) table fill:"
    echo "$others"
    status=1
  fi
done < <(find "$BUILD" -name '*_avx2.cpp.o' -o -name '*_avx512.cpp.o' -o -name '*_neon.cpp.o' \
              -o -name '*_dotprod.cpp.o' -o -name '*_i8mm.cpp.o')
[ $status -eq 0 ] &&
  echo "ISA isolation: no weak symbols and only table fill functions exported in $count ISA-specific objects"
exit $status
