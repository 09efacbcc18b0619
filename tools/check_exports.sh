#!/usr/bin/env bash
# Fails when libparakeet.so exports anything but the C ABI (parakeet_capi_* and parakeet.cpp's
# legacy parakeet_version / parakeet_transcribe_file / parakeet_free_string), or when a function
# declared in the public header is not exported.
# Usage: bash tools/check_exports.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
LIB=${1:-build}/libparakeet/libparakeet.so
exported=$(nm -D --defined-only "$LIB" | awk '{print $3}' | sort)
LEGACY='^parakeet_(version|transcribe_file|free_string)$'
extra=$(echo "$exported" | grep -v '^parakeet_capi_' | grep -vE "$LEGACY" || true)
declared=$(grep -oE '\bparakeet_[a-z0-9_]+\(' libparakeet/include/parakeet_capi.h | tr -d '(' | sort -u)
missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
if [ -n "$extra" ] || [ -n "$missing" ]; then
  [ -n "$extra" ] && echo "exported but not part of the C ABI:" && echo "$extra"
  [ -n "$missing" ] && echo "declared in parakeet_capi.h but not exported:" && echo "$missing"
  exit 1
fi
echo "exports: the $(echo "$exported" | wc -l) functions of parakeet_capi.h and nothing else"
