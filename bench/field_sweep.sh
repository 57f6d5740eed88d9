#!/usr/bin/env bash
# The field's cases (issue 36), longer than `make test` runs them: overlapping
# waves, jitter 0.3 + loss + collector gaps, 2,048-4,096-rank jobs and the
# no-storm cases, judged against `stormwatch gen`'s truth by test_overlap.
# Prints per family: jobs, storms, on time, late (by how much), early,
# missed, extra episodes, right first rank, no-storm pages.
#   bench/field_sweep.sh [SEEDS]       (default 5 seeds per case)
#   FIELD_STRICT=1 bench/field_sweep.sh  also lists every storm that fails
#   FIELD_ONLY=single bench/field_sweep.sh  runs one family (rows, single, overlap, issue,
#                                          field, large, no storm)
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=${1:-5}
bin=${FIELD_TEST:-build/tests/test_overlap}
if [[ ! -x $bin ]]; then
    cmake --build build --target test_overlap -j2 >/dev/null
fi
out=$(SW_FIELD_SEEDS=$seeds SW_FIELD_ONLY=${FIELD_ONLY:-} SW_FIELD_STRICT=${FIELD_STRICT:-0} "$bin" 2>&1 || true)
if [[ ${FIELD_STRICT:-0} == 1 ]]; then
    grep -E 'FAIL \[' <<<"$out" | sed -E 's/^[^[]*\[//' | cut -c1-400 || true
fi
grep -E '^(rows|single|overlap|issue|field|large|no storm) ' <<<"$out"
