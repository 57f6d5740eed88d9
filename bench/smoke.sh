#!/usr/bin/env bash
# Benchmark smoke (CTest test_bench_smoke in `make test`, and by hand):
# runs `replay` and `analyze` on JSON Lines and Avro decoding through a
# schema registry, checks what they compute, and reports their speed
# without timing anything against a fixed clock. Each command's CPU time is divided by the CPU time
# md5sum takes over the same file in the same run (a scalar byte loop whose
# speed follows the machine's), and the quotient is compared with the one
# measured on the reference machine (RATIOS below) times a wide margin.
# The best of REPS interleaved runs counts, so a busy machine inflates
# little. It also checks the commands' output (the storm rank is found).
#
#   bench/smoke.sh [STORMWATCH [SW_AVROBENCH]]  (default build/stormwatch; SW_BIN too)
#
# With SW_AVROBENCH (bench/avro_bench.c), messages encoded by python3-avro
# with the writer schemas of tests/registry are decoded through the
# registry path and the fixed-id path in interleaved rounds of one run;
# the registry rows' speed over the fixed path's (the median over the
# rounds where the tool reports it) must stay above the issue's targets
# (identity plan 0.95, reordered writer v3 0.85) divided by the margin.
#
# Speed verdicts fail the script only with SMOKE_ENFORCE=1 (the default by
# hand; CTest sets 0): a timed verdict inside `make test` fails CI on a
# busy machine (stop 41: analyze 0.76 against a limit of 0.76 while other
# tests ran), and speed targets belong to bench/ (`make bench`). Under
# `make test` the table is printed for the log and the output checks and
# the baseline rule's self-test still fail the test.
#
# Environment: SMOKE_REPS (default 5), SMOKE_MARGIN (default 1.8: fail
# when a quotient exceeds 1.8 x the reference one; a 2x slowdown does, a
# machine at load 10 does not), SMOKE_DIR (scratch
# directory, default a mktemp -d that is removed).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SW=${1:-${SW_BIN:-$ROOT/build/stormwatch}}
AB=${2:-}
REPS=${SMOKE_REPS:-5}
MARGIN=${SMOKE_MARGIN:-1.8}
ENFORCE=${SMOKE_ENFORCE:-1}
# CPU time over md5sum's on the reference machine (2-CPU VM, 2026-11-27,
# branch offline after the decoder's template path: runs of this script at
# load 4-9 gave replay 0.79-0.85 and analyze 0.46-0.62; main before it gave
# 0.88-1.24 and 0.75-1.05: the analyze limit, 0.84, catches losing most of
# the gain; both catch a 2x slowdown). analyze 0.42 since branch offline3
# (mapped input, smaller sample records): three runs at load 4-9 gave
# 0.36-0.45 (the binary before, 0.50), so 0.6 x 1.8 = 1.08 no longer caught
# a 2x slowdown; 0.42 x 1.8 = 0.76 does from 0.38 on. analyze 0.55 since
# the mapped reader gave way to read(2) (issue 39: page faults cost more
# CPU than the copy on this VM): 0.58 idle, 0.76 in CI among other tests.
declare -A RATIOS=([replay]=0.85 [analyze]=0.55)

die() { printf 'bench/smoke.sh: %s\n' "$*" >&2; exit 1; }
[[ -x $SW ]] || die "no stormwatch binary at $SW"
command -v md5sum >/dev/null || die "md5sum is missing"
[[ $REPS =~ ^[1-9][0-9]?$ ]] || die "SMOKE_REPS must be 1-99 (got '$REPS')"
[[ $ENFORCE == [01] ]] || die "SMOKE_ENFORCE must be 0 or 1 (got '$ENFORCE')"
# slow_verdict OK: the verdict column; a miss fails only when enforced.
slow_verdict() {
    if [[ $1 == 1 ]]; then
        echo ok
    elif [[ $ENFORCE == 1 ]]; then
        echo 'SLOWER than the limit'
    else
        echo 'slower than the limit (reported, not enforced: SMOKE_ENFORCE=0)'
    fi
}
if [[ -n ${SMOKE_DIR:-} ]]; then
    DIR=$SMOKE_DIR
    mkdir -p "$DIR"
else
    DIR=$(mktemp -d)
    trap 'rm -rf "$DIR"' EXIT
fi

IN=$DIR/smoke.jsonl
"$SW" gen --ranks 256 --samples 400 --storm-at 0.25 --seed 7 >"$IN" 2>"$DIR/gen.err" ||
    die "gen failed: $(cat "$DIR/gen.err")"
storm=$(sed -n 's/.*storm ranks: job-0: \([0-9]*\).*/\1/p' "$DIR/gen.err")
[[ -n $storm ]] || die "gen did not name the storm rank: $(cat "$DIR/gen.err")"
events=$(wc -l <"$IN")

# cpu_s OUT CMD...: user+sys seconds of CMD (stdout to OUT), ms resolution.
cpu_s() {
    local out=$1 t
    shift
    t=$( { TIMEFORMAT='%3U %3S'; time "$@" >"$out" 2>/dev/null; } 2>&1) || die "failed: $*"
    awk -v t="$t" 'BEGIN { split(t, a, " "); printf "%.3f", a[1] + a[2] }'
}

declare -A best=()
for ((r = 1; r <= REPS; r++)); do
    for id in md5 replay analyze; do
        case $id in
        md5) s=$(cpu_s "$DIR/md5.out" md5sum "$IN") ;;
        replay) s=$(cpu_s "$DIR/replay.out" "$SW" replay --window-samples 512 "$IN") ;;
        analyze) s=$(cpu_s "$DIR/analyze.out" "$SW" analyze --format json --compact "$IN") ;;
        esac
        if [[ -z ${best[$id]:-} ]] || awk -v a="$s" -v b="${best[$id]}" 'BEGIN { exit !(a < b) }'; then
            best[$id]=$s
        fi
    done
done

# The output, not only the speed: both find the storm's first rank.
grep -q "\"action\": *\"trigger\"" "$DIR/replay.out" || die "replay wrote no trigger record"
grep -q "\"first_cause_suspects\": *\[{\"rank\": *${storm}[,}]" "$DIR/analyze.out" ||
    die "analyze did not name rank $storm first: $(head -c 300 "$DIR/analyze.out")"
grep -q "\"rank\": *${storm}[,}]" "$DIR/replay.out" || die "replay's records do not name rank $storm"

fail=0
md5=${best[md5]}
awk -v m="$md5" 'BEGIN { exit !(m > 0) }' || die "md5sum took no measurable CPU time"
printf '%-8s %10s %12s %9s %9s %s\n' command cpu_s events/cpu_s ratio limit verdict
printf '%-8s %10s %12s\n' md5sum "$md5" -
for id in replay analyze; do
    read -r rate ratio limit ok < <(awk -v s="${best[$id]}" -v m="$md5" -v n="$events" \
        -v ref="${RATIOS[$id]}" -v k="$MARGIN" 'BEGIN {
            q = s / m; lim = ref * k;
            printf "%d %.2f %.2f %d\n", (s > 0 ? n / s : 0), q, lim, q <= lim }')
    verdict=$(slow_verdict "$ok")
    [[ $verdict == SLOWER* ]] && fail=1
    printf '%-8s %10s %12s %9s %9s %s\n' "$id" "${best[$id]}" "$rate" "$ratio" "$limit" "$verdict"
done
printf '(%s events, best of %s runs; ratio = CPU time / md5sum CPU time on the same file)\n' \
    "$events" "$REPS"

# Avro through a registry against the fixed-id path, in one run.
avro_smoke() {
    [[ -x $AB ]] || die "no sw_avrobench at $AB"
    if ! /usr/bin/python3 -c 'import avro.schema' 2>/dev/null; then
        [[ ${CI:-} == true ]] && die "python3-avro is missing (scripts/install-deps.sh test)"
        echo "avro: skipped (python3-avro is not installed)"
        return 0
    fi
    local ev=$DIR/avro.jsonl reg=$ROOT/tests/registry v
    "$SW" gen --ranks 32 --samples 250 --seed 7 --quiet -o "$ev" || die "gen failed"
    cp "$ROOT/schemas/telemetry_event.avsc" "$DIR/telemetry_v2.avsc"
    for v in 1 2 3; do
        local avsc=$reg/telemetry_v$v.avsc
        [[ $v == 2 ]] && avsc=$DIR/telemetry_v2.avsc
        /usr/bin/python3 "$reg/sr_encode.py" --schema "$((10 + v))=$avsc" "$ev" "$DIR/v$v.bin" >/dev/null ||
            die "sr_encode.py failed for schema v$v"
    done
    "$AB" "$DIR/v2.bin" "$DIR/v1.bin" "$reg/telemetry_v1.avsc" "$DIR/v3.bin" \
        "$reg/telemetry_v3.avsc" 1 >"$DIR/avro.out" || die "sw_avrobench failed"
    local row target got limit ok
    for row in "identity plan:0.95" "writer v3 (:0.85"; do
        target=${row##*:}
        row=${row%:*}
        # The row's last column: the paired median (or the best-round ratio).
        got=$(grep -F "$row" "$DIR/avro.out" | head -1 |
            awk -F'|' '{ for (i = NF; i > 0; i--) if ($i ~ /^ *[0-9.]+ *$/) { print $i + 0; exit } }')
        [[ -n $got ]] || die "sw_avrobench printed no row \"$row\": $(cat "$DIR/avro.out")"
        read -r limit ok < <(awk -v g="$got" -v t="$target" -v k="$MARGIN" \
            'BEGIN { printf "%.2f %d\n", t / k, (g >= t / k) }')
        verdict=$(slow_verdict "$ok")
        [[ $verdict == SLOWER* ]] && fail=1
        printf '%-22s %9s %9s %s\n' "avro ${row% (}" "$got" ">= $limit" "$verdict"
    done
    echo "(Avro: $(wc -l <"$ev") events; speed over the fixed-id path's in the same run)"
}
[[ -n $AB ]] && avro_smoke

# The baseline mode's arithmetic (bench/lib.sh, used by `make bench`): the
# pair statistics and the noise rule on made-up pairs, and cpu_run's three
# shapes on a small command.
baseline_selftest() {
    local ROOT_SAVE=$ROOT
    (
        # shellcheck source=bench/lib.sh disable=SC1091
        source "$ROOT_SAVE/bench/lib.sh"
        PAIR_TSV=$DIR/pairs.tsv
        printf 'slow\t%d\t1.10\t1.00\n' 1 2 3 4 5 >"$PAIR_TSV"
        printf 'noisy\t1\t1.20\t1.00\nnoisy\t2\t0.90\t1.00\nnoisy\t3\t1.04\t1.00\nnoisy\t4\t0.95\t1.00\nnoisy\t5\t1.05\t1.00\n' >>"$PAIR_TSV"
        printf 'fast\t%d\t0.80\t1.00\n' 1 2 3 >>"$PAIR_TSV"
        local id want got m q1 q3
        for id in slow:slower noisy:same fast:faster; do
            want=${id#*:}
            id=${id%:*}
            read -r _ _ m q1 q3 _ < <(pair_stats "$id")
            got=$(pair_verdict "$m" "$q1" "$q3")
            [[ $got == "$want" ]] || { echo "baseline rule: $id gave $got (median $m, p25 $q1), expected $want"; exit 1; }
        done
        printf 'a\nb\nc\n' >"$DIR/three"
        local shape c
        for shape in file stdin pipe; do
            c=$(cpu_run "$shape" "$DIR/cpu.out" "$DIR/cpu.err" "$DIR/three" wc -l)
            [[ $c =~ ^[0-9]+\.[0-9]{3}$ && $(tr -d ' ' <"$DIR/cpu.out" | grep -o '^[0-9]*') == 3 ]] ||
                { echo "cpu_run $shape: '$c', output '$(cat "$DIR/cpu.out")'"; exit 1; }
        done
    ) || return 1
    echo "baseline mode rule: ok (slower / same / faster on made-up pairs; cpu_run file, stdin, pipe)"
}
baseline_selftest || fail=1
exit $fail
