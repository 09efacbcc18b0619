#!/usr/bin/env bash
# Fails when libparakeet.so exports anything but the C ABI (parakeet_capi_*), or when a
# function declared in the public header is not exported.
# Usage: bash tools/check_exports.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
LIB=${1:-build}/libparakeet/libparakeet.so
exported=$(nm -D --defined-only "$LIB" | awk '{print $3}' | sort)
extra=$(echo "$exported" | grep -v '^parakeet_capi_' || true)
declared=$(grep -oE 'parakeet_capi_[a-z0-9_]+\(' libparakeet/include/parakeet_capi.h | tr -d '(' | sort -u)
missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
if [ -n "$extra" ] || [ -n "$missing" ]; then
  [ -n "$extra" ] && echo "exported but not part of the C ABI:" && echo "$extra"
  [ -n "$missing" ] && echo "declared in parakeet_capi.h but not exported:" && echo "$missing"
  exit 1
fi
echo "exports: the $(echo "$exported" | wc -l) functions of parakeet_capi.h and nothing else"
