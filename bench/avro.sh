#!/usr/bin/env bash
# Avro decoding speed, one run, side by side: today's fixed-id path against
# the schema-registry path (identity plan; writer schemas v1 and v3 that
# need resolution). Inputs: `stormwatch gen` (64 ranks x 500 samples =
# 32,000 events), all encoded by python3-avro with schemas v1, v2 (today's) and v3
# (tests/registry/sr_encode.py). Prints a Markdown table (bench/README.md).
#
#   bench/avro.sh [SECONDS per row, default 3]
#   bench/avro.sh --ir   instructions per event of each single-thread row
#                        (callgrind, one pass; independent of the load)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
OUT=${BENCH_OUT:-$ROOT/bench/out}/avro
mkdir -p "$OUT"
BUILD=${BENCH_BUILD:-build}
[[ -f $BUILD/CMakeCache.txt ]] || cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >&2
cmake --build "$BUILD" -j2 --target stormwatch sw_avrobench >&2
EV=$OUT/events.jsonl
[[ -s $EV ]] || "$BUILD/stormwatch" gen --ranks 64 --samples 500 --quiet -o "$EV"
REG=$ROOT/tests/registry
cp "$ROOT/schemas/telemetry_event.avsc" "$OUT/telemetry_v2.avsc"
for v in 1 2 3; do
    id=$((10 + v))
    avsc=$REG/telemetry_v$v.avsc
    [[ $v == 2 ]] && avsc=$OUT/telemetry_v2.avsc
    [[ -s $OUT/v$v.bin ]] || /usr/bin/python3 "$REG/sr_encode.py" --schema "$id=$avsc" "$EV" "$OUT/v$v.bin" >&2
done
ARGS=("$OUT/v2.bin" "$OUT/v1.bin" "$REG/telemetry_v1.avsc" "$OUT/v3.bin" "$REG/telemetry_v3.avsc")
if [[ ${1:-} == --ir ]]; then
    n=$(($(wc -l <"$EV")))
    echo "| Avro decoding, instructions per event (callgrind, one pass of $n events) | Ir/event | vs fixed id |"
    echo "|---|---|---|"
    base=
    for row in fixed identity v1 v3; do
        ir=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null --toggle-collect="row_$row" \
            "$BUILD/bench/sw_avrobench" "${ARGS[@]}" 0 2>&1 >/dev/null |
            sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
        per=$((ir / n))
        base=${base:-$per}
        printf '| %s | %d | %s |\n' "$row" "$per" "$(awk -v a="$per" -v b="$base" 'BEGIN{printf "%.2f", b / a}')"
    done
    exit 0
fi
"$BUILD/bench/sw_avrobench" "$OUT/v2.bin" "$OUT/v1.bin" "$REG/telemetry_v1.avsc" "$OUT/v3.bin" "$REG/telemetry_v3.avsc" "${1:-3}"
