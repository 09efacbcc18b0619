#!/usr/bin/env bash
# Fails when libparakeet.so exports anything but the C ABI (parakeet_capi_* and parakeet.cpp's
# legacy parakeet_version / parakeet_transcribe_file / parakeet_free_string), or when a function
# declared in the public header is not exported.
# Usage: bash tools/check_exports.sh [build-dir]   (NM=aarch64-linux-gnu-nm for a cross build)
set -euo pipefail
cd "$(dirname "$0")/.."
LIB=${1:-build}/libparakeet/libparakeet.so
exported=$("${NM:-nm}" -D --defined-only "$LIB" | awk '{print $3}' | sort)
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

# parakeet.cpp 0.2.2's C functions (its wheel's exports; the PyPI package binds most of them
# at import, LocalAI's purego backend panics on a missing one of its mandatory set): every one
# must be exported, so programs written for parakeet.cpp link and import unchanged.
LOCALAI_MANDATORY="abi_version load free transcribe_path transcribe_path_json stream_begin stream_feed
  stream_finalize stream_free free_string last_error"
PCPP_0_2_2="$LOCALAI_MANDATORY shutdown transcribe_pcm transcribe_path_lang transcribe_pcm_lang
  transcribe_pcm_batch transcribe_pcm_batch_lang transcribe_pcm_batch_json transcribe_pcm_batch_json_lang
  context_create_text context_create_tokens context_free context_info transcribe_path_contextual_json
  transcribe_pcm_contextual_json transcribe_pcm_logits free_logits stream_begin_lang stream_feed_json
  stream_finalize_json stream_drain_events free_events transcribe_path_nbest_json transcribe_pcm_nbest_json"
absent=""
for f in $PCPP_0_2_2; do
  echo "$exported" | grep -qx "parakeet_capi_$f" || absent="$absent parakeet_capi_$f"
done
for f in parakeet_version parakeet_transcribe_file parakeet_free_string; do
  echo "$exported" | grep -qx "$f" || absent="$absent $f"
done
if [ -n "$absent" ]; then
  echo "parakeet.cpp functions not provided:$absent"
  exit 1
fi
echo "parakeet.cpp 0.2.2: all $(( $(echo $PCPP_0_2_2 | wc -w) + 3 )) of its C functions are provided" \
     "(LocalAI's mandatory set: $(echo $LOCALAI_MANDATORY | wc -w))"
