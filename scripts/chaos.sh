#!/bin/sh
# The long chaos run (issue: no repeated alert from the first message on).
# Runs tests/e2e/test_faults_chaos.c's chaos scenarios for many seeds: telemetry
# produced at a steady rate to 4 partitions of librdkafka's mock cluster
# while `stormwatch run` is killed with SIGKILL at seeded random moments
# (while starting, just after an assignment, during restore, while running)
# and restarted; one instance, then two in the same group, each with
# repartition=off and with repartition=on (the default: the kills then also
# hit the forwarding stage). Each run's output is compared record by record
# with an uninterrupted run.
#
# Usage: scripts/chaos.sh [SEEDS [KILLS]]     (default 20 seeds, 6 kills)
# Environment: BUILD (default build; needs -DSW_BUILD_TESTS=ON).
# Prints one line per run and a summary; exit 1 if any run lost or
# repeated a record.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
SEEDS=${1:-20}
KILLS=${2:-6}
BIN=$BUILD/tests/test_faults_chaos
[ -x "$BIN" ] || { echo "chaos.sh: $BIN not built (scripts/build.sh -- -DSW_BUILD_TESTS=ON)" >&2; exit 2; }
OUT=$BUILD/chaos
rm -rf "$OUT" && mkdir -p "$OUT"
runs=0 bad=0 kills=0
seed=1
while [ "$seed" -le "$SEEDS" ]; do
    for inst in 1 2 1r 2r; do
        log=$OUT/seed$seed-chaos$inst.log
        SW_FAULTS_ONLY=chaos$inst SW_CHAOS_SEED=$seed SW_CHAOS_KILLS=$KILLS \
            SW_BIN=$BUILD/stormwatch SW_FIXTURES=$ROOT/tests/fixtures SW_TMP=$OUT/tmp-$seed-$inst \
            "$BIN" >"$log" 2>&1 &
        eval "pid_$inst=\$!"
    done
    for inst in 1 2 1r 2r; do
        log=$OUT/seed$seed-chaos$inst.log
        # The run's own verdict: its exit status (cmocka's: 0 when every
        # case it ran passed), and that it ran its one scenario.
        eval "pid=\$pid_$inst"
        rc=0
        wait "$pid" || rc=$?
        runs=$((runs + 1))
        kills=$((kills + $(grep -c '^  kill ' "$log")))
        line=$(grep -E 'compared \(output held' "$log" | tail -1)
        if [ "$rc" -eq 0 ] && grep -q '^\[  PASSED  \] 1 test' "$log"; then
            echo "seed $seed, $inst instance(s): ok: ${line#*: }"
            rm -rf "$OUT/tmp-$seed-$inst"
        else
            bad=$((bad + 1))
            echo "seed $seed, $inst instance(s): FAILED (exit $rc): ${line#*: } (see $log)"
        fi
    done
    seed=$((seed + 1))
done
echo "chaos.sh: $runs runs, $kills kill -9 in all, $bad with a lost or repeated record"
[ "$bad" -eq 0 ]
