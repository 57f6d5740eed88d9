#!/usr/bin/env bash
# The backlog flood of issue 35 at full size, on demand (make test runs a
# scaled-down one, test_floods_flood): 500,000 one-sample job ids beside 4
# real 16-rank storm jobs, keyed by job id on 32 partitions, all produced
# before `stormwatch run` starts (a daemon far behind), at the defaults
# (repartition=auto, max.memory.bytes 614 MiB: 60% of a 1 GiB pod). Each
# run checks that every real job's records equal replay's, that nothing is
# refused or evicted with evidence, and that peak RSS (VmHWM) stays under
# FLOOD_LIMIT_MIB (1024: the pod); it prints the peak RSS and the dead
# letters by kind. One mock cluster per run. No cgroup limit applies here,
# so the prefetch the start check gives in a 1 GiB pod for 32 input + 32
# repartition partitions beside 614 MiB is passed as set
# (FLOOD_PREFETCH_KB, 2457: (1 GiB - 1/4 - 614 MiB) / 64).
#
# The mock keeps at most 5 MiB and 100,000 messages per partition (it drops
# the oldest beyond): 500,000 ids of 1, 2 and 8 ranks (1.8 M messages)
# would not fit, so the ids have one rank each here (FLOOD_RANKS=3 for
# 1, 2, 8 with fewer ids).
#
#   bench/flood_backlog.sh [build]   FLOOD_RUNS=10 FLOOD_JOBS=500000 FLOOD_RANKS=1
#                                    FLOOD_BUDGET=0 (the default) FLOOD_LIMIT_MIB=1024
#                                    FLOOD_X=name=value (one more daemon property)
set -Eeuo pipefail
build=${1:-build}
runs=${FLOOD_RUNS:-10}
held=0
for i in $(seq "$runs"); do
    tmp=$(mktemp -d)
    if SW_FLOODS_ONLY=flood SW_BIN="$build/stormwatch" SW_TMP="$tmp" \
        SW_FLOOD_JOBS=${FLOOD_JOBS:-500000} SW_FLOOD_RANKS=${FLOOD_RANKS:-1} \
        SW_FLOOD_BUDGET=${FLOOD_BUDGET:-0} SW_FLOOD_LIMIT_MIB=${FLOOD_LIMIT_MIB:-1024} \
        SW_FLOOD_PREFETCH_KB=${FLOOD_PREFETCH_KB:-2457} \
        SW_FLOOD_X=${FLOOD_X:-} \
        STORMWATCH_WORKER_THREADS=${STORMWATCH_WORKER_THREADS:-0} \
        "$build/tests/test_floods" > "$tmp/out" 2>&1; then
        held=$((held + 1))
        verdict=held
    else
        verdict=FAILED
    fi
    grep -E 'run 0:|records of the real|dead letters|says|FAIL' "$tmp/out" | sed "s/^/run $i: /"
    echo "run $i: $verdict"
    [ "$verdict" = held ] && rm -rf "$tmp" || echo "run $i: logs kept in $tmp"
done
echo "flood_backlog: $held of $runs runs held"
[ "$held" = "$runs" ]
