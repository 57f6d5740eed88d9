#!/usr/bin/env bash
# Peak RSS of `stormwatch run` under a job-id flood (issue 28): N one-sample
# job ids (default 500,000; 1, 2 or 8 ranks each, one message per rank)
# produced to a 32-partition topic of the mock cluster, then consumed by
# one daemon at the defaults (max.memory.bytes unset: 60% of the cgroup
# limit, else 614 MiB). Prints the daemon's peak RSS (VmHWM), its engine
# state and its evictions once the input is consumed. The mock cluster
# keeps at most 5 MiB per partition (it drops the oldest beyond), so the
# whole flood only arrives when it is paced (FLOOD_RATE) or smaller.
#
#   bench/flood_rss.sh [build/stormwatch]     FLOOD_JOBS=N  FLOOD_RATE=msg/s (0: full speed)
#                                             FLOOD_X="-X name=value ..." (more daemon properties)
set -Eeuo pipefail
bin=${1:-build/stormwatch}
n=${FLOOD_JOBS:-500000}
rate=${FLOOD_RATE:-0}
dir=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
python3 - "$n" > "$dir/flood.jsonl" <<'PY'
import sys
n = int(sys.argv[1])
sizes = (1, 2, 8)
out = sys.stdout
for i in range(n):
    k = sizes[i % 3]
    for r in range(k):
        out.write('{"timestamp_ns": %d, "event_type": "sample", "rank": %d, "world_size": %d, '
                  '"job_id": "flood-%d", "pid": 7, "host": "h%d", "device_used_bytes": 1073741824, '
                  '"sampling_interval_ms": 100}\n' % (1763700000000000000 + i, r, k, i, r))
PY
msgs=$(wc -l < "$dir/flood.jsonl")
"$bin" mock --brokers 1 --topic flood.in:32 --topic flood.out:32 --topic flood.dlq:8 \
    --topic flood.state:1 --bootstrap-file "$dir/boot" > /dev/null 2> "$dir/mock.err" &
for _ in $(seq 100); do [ -s "$dir/boot" ] && break; sleep 0.1; done
boot=$(cat "$dir/boot")
rate_opt=()
[ "$rate" != 0 ] && rate_opt=(--rate "$rate")
"$bin" produce -q -b "$boot" -t flood.in "${rate_opt[@]}" "$dir/flood.jsonl" &
prod=$!
"$bin" run -b "$boot" -X input.topics=flood.in -X output.topic=flood.out \
    -X dlq.topic=flood.dlq -X state.topic=flood.state -X group.id=flood \
    -X metrics.listen=127.0.0.1:0 -X log.level=info ${FLOOD_X:-} 2> "$dir/run.err" &
run=$!
port=""
for _ in $(seq 300); do
    port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$dir/run.err" | head -1)
    [ -n "$port" ] && break
    sleep 0.1
done
t0=$(date +%s)
peak_state=0
while :; do
    m=$(curl -s "http://127.0.0.1:$port/metrics" || true)
    done_n=$(printf '%s\n' "$m" | awk '/^stormwatch_events_in_total\{topic="flood.in"\}/{s += $2} END {print s + 0}')
    st=$(printf '%s\n' "$m" | awk '/^stormwatch_engine_state_bytes /{print $2 + 0}')
    [ "${st:-0}" -gt "$peak_state" ] && peak_state=$st
    [ "$done_n" -ge "$msgs" ] && break
    # The mock keeps 5 MiB per partition: what it dropped never comes.
    if [ "$done_n" = "${last_n:-x}" ] && [ "$(printf '%s\n' "$m" | awk '/^stormwatch_consumer_total_lag /{print $2}')" = 0 ]; then
        still=$((${still:-0} + 1))
        [ "$still" -ge 10 ] && ! kill -0 $prod 2>/dev/null && break
    else
        still=0
    fi
    last_n=$done_n
    [ $(( $(date +%s) - t0 )) -gt 900 ] && { echo "only $done_n of $msgs consumed in 900 s" >&2; break; }
    sleep 1
done
wait $prod
hwm=$(awk '/VmHWM/{print $2}' "/proc/$run/status")
state=$(printf '%s\n' "$m" | awk '/^stormwatch_engine_state_bytes /{print $2}')
budget=$(printf '%s\n' "$m" | awk '/^stormwatch_memory_budget_bytes /{print $2}')
evicted=$(printf '%s\n' "$m" | awk '/^stormwatch_jobs_evicted_total /{print $2}')
kill -TERM $run; wait $run || true
printf 'flood: %d job ids (%d messages, %s consumed, rate %s) through run on 32 partitions: peak RSS %d MiB, engine state peak %s bytes (sampled each second; %s at the end; budget %s), %s jobs evicted\n' \
    "$n" "$msgs" "$done_n" "${rate/#0/full speed}" $((hwm / 1024)) "$peak_state" "$state" "$budget" "$evicted"
