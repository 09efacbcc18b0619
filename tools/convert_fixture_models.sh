#!/usr/bin/env bash
# Converts every NeMo fixture model (tests/data/nemo/<name>/model.nemo, made by
# tools/make_nemo_fixtures.py) to the GGUF files the C++ and C tests load, with this
# repository's converter: model.gguf (f32) for every model, and model-f16.gguf and
# model-q8_0.gguf for one 80-mel and one 128-mel model (the f16/q8_0 agreement report).
# Usage: bash tools/convert_fixture_models.sh [python]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${1:-python3}
for nemo in tests/data/nemo/*/model.nemo; do
  dir=$(dirname "$nemo")
  PYTHONPATH=. "$PY" -m parakeet_py.convert "$nemo" "$dir/model.gguf" --type f32
  case "$(basename "$dir")" in
    hybrid_tdt_ctc|rnnt)
      PYTHONPATH=. "$PY" -m parakeet_py.convert "$nemo" "$dir/model-f16.gguf" --type f16
      PYTHONPATH=. "$PY" -m parakeet_py.convert "$nemo" "$dir/model-q8_0.gguf" --type q8_0 ;;
  esac
done
