#!/usr/bin/env bash
# Installs those of the Debian packages named as arguments that are not installed yet (root, or
# sudo); does nothing where there is no apt-get. Used by tools/setup.sh and tools/test_aarch64.sh.
# Usage: bash tools/apt_ensure.sh PACKAGE...
set -euo pipefail
command -v apt-get >/dev/null 2>&1 || exit 0
missing=()
for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
