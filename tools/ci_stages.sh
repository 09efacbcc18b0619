# Sourced by .ci/run: `stage NAME` ends the stage running (its wall seconds go to $CI_STAGES, a
# TSV) and starts NAME; `stages_report` ends the last one and prints the table with the total.
# docs/ci.md keeps the budget these tables are checked against.
CI_STAGES=${CI_STAGES:-build/ci-stages.tsv}
mkdir -p "$(dirname "$CI_STAGES")"
: >"$CI_STAGES"
_ci_start=$(date +%s)
_stage_name=""
_stage_start=$_ci_start

_stage_end() {
  [ -n "$_stage_name" ] && printf '%s\t%s\n' "$_stage_name" "$(( $(date +%s) - _stage_start ))" >>"$CI_STAGES"
  _stage_name=""
}

stage() {
  _stage_end
  _stage_name=$1
  _stage_start=$(date +%s)
  printf '\n=== %s (at %ss)\n' "$1" "$(( _stage_start - _ci_start ))"
}

stages_report() {
  _stage_end
  printf '\n=== stages (wall seconds; budget in docs/ci.md)\n'
  { cat "$CI_STAGES"; printf 'total\t%s\n' "$(( $(date +%s) - _ci_start ))"; } |
    awk -F'\t' '{ name[NR] = $1; secs[NR] = $2; if (length($1) > w) w = length($1) }
                END { for (i = 1; i <= NR; i++) printf "%-" w "s  %6d\n", name[i], secs[i] }'
}
