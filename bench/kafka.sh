#!/usr/bin/env bash
# stormwatch Kafka benchmark: consumer throughput against a count-only
# librdkafka consumer, and alert latency, on librdkafka's mock cluster.
# See bench/README.md ("Kafka benchmark: bench/kafka.sh").
#
#   bench/kafka.sh                      full run (~10 min on 2 cores)
#   KBENCH_REPS=5 bench/kafka.sh        more repetitions
#   KBENCH_PROFILE=1 bench/kafka.sh     also a callgrind profile (+3-5 min)
#
# Output: a Markdown report on stdout and in $KBENCH_OUT/kafka.md; progress
# on stderr; raw numbers and logs in $KBENCH_OUT/kafka/.

set -Eeuo pipefail
export LC_ALL=C
BENCH_START=$EPOCHREALTIME

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=bench/lib.sh disable=SC1091
source "$ROOT/bench/lib.sh"

REPS=${KBENCH_REPS:-3}
JOBS=${KBENCH_JOBS:-64}
RANKS=${KBENCH_RANKS:-16}
SAMPLES=${KBENCH_SAMPLES:-1000}
PARTS=${KBENCH_PARTITIONS:-64}
BROKERS=${KBENCH_BROKERS:-3}
STORMS=${KBENCH_STORMS:-200}
TUNED=${KBENCH_TUNED:-0}
DO_TP=${KBENCH_THROUGHPUT:-1}
DO_LAT=${KBENCH_LATENCY:-1}
PROFILE=${KBENCH_PROFILE:-0}
PROFILE_EVENTS=${KBENCH_PROFILE_EVENTS:-200000}
# repartition modes side by side (issue 27): job-keyed input placed as Kafka's
# clients place keys (murmur2) and unkeyed input, each read with off/auto/on.
# Many small jobs, so that murmur2 spreads them evenly enough for the mock's 5 MiB
# per partition.
DO_KEYING=${KBENCH_KEYING:-1}
KJOBS=${KBENCH_KEYING_JOBS:-256}
KRANKS=${KBENCH_KEYING_RANKS:-4}
KSAMPLES=${KBENCH_KEYING_SAMPLES:-500}
SW_ARGS=${KBENCH_SW_ARGS:-}
# Extra worker.threads counts measured beside the default (0 = the CPUs).
THREADS=${KBENCH_THREADS:-1}
# JSON input too (topic kb.jin): JSON values are ~4.5x larger than Avro, so
# a quarter of the samples keeps each partition (one per job) under the mock's 5 MiB.
DO_JSON=${KBENCH_JSON:-1}
JPARTS=${KBENCH_JSON_PARTITIONS:-64}
KBUILD=${KBENCH_BUILD:-$ROOT/build-kbench}
OUT=${KBENCH_OUT:-${BENCH_OUT:-$ROOT/bench/out}}
for v in REPS JOBS RANKS SAMPLES PARTS BROKERS STORMS PROFILE_EVENTS JPARTS KJOBS KRANKS KSAMPLES; do
    [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "KBENCH_$v must be a positive integer (got '${!v}')"
done
for v in TUNED PROFILE DO_TP DO_LAT DO_JSON DO_KEYING; do [[ ${!v} == 0 || ${!v} == 1 ]] || die "$v must be 0 or 1 (got '${!v}')"; done
EVENTS=$((JOBS * RANKS * SAMPLES))
JSAMPLES=${KBENCH_JSON_SAMPLES:-$((SAMPLES / 4))}
JEVENTS=$((JOBS * RANKS * JSAMPLES))
KEVENTS=$((KJOBS * KRANKS * KSAMPLES))
for t in $THREADS; do [[ $t =~ ^[1-9][0-9]?$ ]] || die "KBENCH_THREADS must list thread counts 1-99 (got '$t')"; done

# Throughput variants: name -> input topic, events, stormwatch and count-only
# consumer arguments, and the count-only variant it is compared with (its own
# when empty: then the count-only consumer runs for it too).
declare -A V_TOPIC V_N V_SWX V_CX V_BASE V_DESC
VARIANTS=()
add_variant() {  # NAME TOPIC N SWX CX BASE DESC
    VARIANTS+=("$1"); V_TOPIC[$1]=$2; V_N[$1]=$3; V_SWX[$1]=$4; V_CX[$1]=$5; V_BASE[$1]=$6; V_DESC[$1]=$7
}
TARGET_RATIO=0.70
TARGET_P99_MS=20
TUNED_X=${KBENCH_TUNED_X:-queued.min.messages=1000000}

# Latency variants: "label|stormwatch -X arguments" (one line each).
# "label|stormwatch -X arguments[|sw_kbench latency arguments]"
DEFAULT_LAT_VARIANTS="as shipped (fetch.wait.max.ms=5)|
kafka.producer.linger.ms=0|-X kafka.producer.linger.ms=0
state.restore=off|-X state.restore=off
processing.guarantee=exactly_once (commit.interval.ms 100)|-X processing.guarantee=exactly_once
repartition=off, job-keyed by murmur2|-X repartition=off|--place murmur2
repartition=auto, job-keyed by murmur2|-X repartition=auto|--place murmur2
repartition=on, job-keyed by murmur2|-X repartition=on|--place murmur2"
LAT_VARIANTS=${KBENCH_LAT_VARIANTS:-$DEFAULT_LAT_VARIANTS}
mapfile -t LATV < <(printf '%s\n' "$LAT_VARIANTS" | sed '/^[[:space:]]*$/d')

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
RUN=$OUT/kafka
RESULTS=$OUT/kafka.md
if command -v flock >/dev/null; then
    exec 8>"$OUT/.kafka.lock"
    flock -n 8 || die "another bench/kafka.sh is running on $OUT"
fi
rm -rf "$RUN"
mkdir -p "$RUN"
for tool in awk sed grep sort curl; do command -v "$tool" >/dev/null || die "missing tool: $tool"; done

# ---------------------------------------------------------------- processes
declare -a PIDS=()
cleanup() {  # newest first: clients before the mock cluster they talk to
    local k
    for ((k = ${#PIDS[@]} - 1; k >= 0; k--)); do
        kill -TERM "${PIDS[k]}" 2>/dev/null || true
        wait "${PIDS[k]}" 2>/dev/null || true
    done
}
trap cleanup EXIT
trap 'die "unexpected failure at bench/kafka.sh line $LINENO: $BASH_COMMAND"' ERR

# ---------------------------------------------------------------- binaries
kbench_binaries

# ---------------------------------------------------------------- cluster
LAT_TOPICS=()
for ((i = 1; i <= ${#LATV[@]}; i++)); do
    LAT_TOPICS+=(--topic "kb.lat$i.in:8" --topic "kb-lat-$i.repartition:8")
done
# With repartition=on (the default) each group's engines read
# <group.id>.repartition: made here, as the mock has no Admin API.
add_variant default kb.in "$EVENTS" "" "" "" "Avro"
[[ $TUNED == 1 ]] && add_variant tuned kb.in "$EVENTS" "-X kafka.consumer.$TUNED_X" "-X $TUNED_X" "" "Avro, both with \`$TUNED_X\`"
for t in $THREADS; do add_variant "t$t" kb.in "$EVENTS" "-X worker.threads=$t" "" default "Avro"; done
# The repartition modes, live: each run on a topic of its own, produced while
# the daemon runs and at most KLIVE_AHEAD events ahead of what it analysed
# (sw_kbench load --throttle-url), so that no mode is measured on a backlog
# librdkafka prefetched while it was still joining.
KMODES=("k-off:murmur2:off" "k-auto:murmur2:auto" "k-on:murmur2:on" "u-on:none:on" "u-auto:none:auto")
KLIVE_AHEAD=${KBENCH_KEYING_AHEAD:-50000}
KLIVE_TOPICS=()
if [[ $DO_KEYING == 1 ]]; then
    for ((r = 1; r <= REPS; r++)); do
        for km in "${KMODES[@]}"; do
            KLIVE_TOPICS+=(--topic "kb.live.${km%%:*}.$r:$PARTS" --topic "kb-live-${km%%:*}-$r.repartition:$PARTS")
        done
    done
fi
if [[ $DO_JSON == 1 ]]; then
    add_variant json kb.jin "$JEVENTS" "" "" "" "JSON"
    for t in $THREADS; do add_variant "json-t$t" kb.jin "$JEVENTS" "-X worker.threads=$t" "" json "JSON"; done
fi
for ((r = 1; r <= REPS; r++)); do
    for v in "${VARIANTS[@]}"; do
        np=$PARTS; [[ ${V_TOPIC[$v]} == kb.jin ]] && np=$JPARTS
        LAT_TOPICS+=(--topic "kb-sw-$v-$r.repartition:$np")
    done
done
LAT_TOPICS+=(--topic "kb-profile.repartition:$PARTS")
log "starting the mock cluster ($BROKERS brokers)"
rm -f "$RUN/bootstrap"
MOCK=("$BIN" mock --brokers "$BROKERS" --topic "kb.in:$PARTS" --topic "kb.jin:$JPARTS" "${KLIVE_TOPICS[@]}" --topic kb.alerts:8 --topic kb.dlq:8
    --topic kb.state:1 --topic kb.lat.alerts:8 "${LAT_TOPICS[@]}" --bootstrap-file "$RUN/bootstrap")
note_cmd "${MOCK[@]}"
"${MOCK[@]}" >"$RUN/mock.out" 2>"$RUN/mock.err" &
MOCK_PID=$!
PIDS+=("$MOCK_PID")
for ((i = 0; i < 300; i++)); do [[ -s $RUN/bootstrap ]] && break; sleep 0.1; done
[[ -s $RUN/bootstrap ]] || die "the mock cluster did not start (see $RUN/mock.err)"
BOOT=$(cat "$RUN/bootstrap")

# sw_start GROUP INPUT OUTPUT LOG [ARGS...]: starts `stormwatch run`, sets
# SW_PID and SW_URL (metrics on a random port).
sw_start() {
    local group=$1 input=$2 output=$3 logf=$4
    shift 4
    local cmd=("$BIN" run -X "bootstrap.servers=$BOOT" -X "input.topics=$input"
        -X "output.topic=$output" -X dlq.topic=kb.dlq -X state.topic=kb.state
        -X "group.id=$group" -X metrics.listen=127.0.0.1:0 "$@")
    # shellcheck disable=SC2206
    [[ -n $SW_ARGS ]] && cmd+=($SW_ARGS)
    note_cmd "${cmd[@]}"
    "${cmd[@]}" 2>"$logf" &
    SW_PID=$!
    PIDS+=("$SW_PID")
    local port="" i
    metrics_port_wait "$logf" "$SW_PID" 500 0.02
    port=$METRICS_PORT
    SW_URL="http://127.0.0.1:$port/metrics"
}

# ---------------------------------------------------------------- load
AVG_BYTES=-; PMAX_BYTES=0
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
if [[ $DO_TP == 1 || $PROFILE == 1 ]]; then
log "producing $(fmt_int "$EVENTS") Avro events ($JOBS jobs x $RANKS ranks x $SAMPLES samples) to kb.in ($PARTS partitions)"
LOAD=("$KB" load -b "$BOOT" -t kb.in -P "$PARTS" --gen "jobs=$JOBS,ranks=$RANKS,samples=$SAMPLES,prefix=kb")
note_cmd "${LOAD[@]}"
"${LOAD[@]}" >"$RUN/load.out" 2>"$RUN/load.err" || { cat "$RUN/load.err" >&2; die "load failed"; }
[[ $(kv "$RUN/load.out" delivered) == "$EVENTS" ]] || die "load delivered $(kv "$RUN/load.out" delivered) of $EVENTS"
[[ $(kv "$RUN/load.out" topic_high_watermark_sum) == "$EVENTS" ]] || die "kb.in holds $(kv "$RUN/load.out" topic_high_watermark_sum) messages, expected $EVENTS"
[[ $(kv "$RUN/load.out" topic_max_low_watermark) == 0 ]] ||
    die "the mock dropped old data (log start offset $(kv "$RUN/load.out" topic_max_low_watermark)); use more partitions (KBENCH_PARTITIONS) or fewer events"
AVG_BYTES=$(kv "$RUN/load.out" avg_value_bytes)
PMAX_BYTES=$(kv "$RUN/load.out" max_partition_bytes_est)
if [[ $DO_JSON == 1 && $DO_TP == 1 ]]; then
    log "producing $(fmt_int "$JEVENTS") JSON events ($JOBS jobs x $RANKS ranks x $JSAMPLES samples) to kb.jin ($JPARTS partitions)"
    JLOAD=("$KB" load -b "$BOOT" -t kb.jin -P "$JPARTS" --json --gen "jobs=$JOBS,ranks=$RANKS,samples=$JSAMPLES,prefix=kj")
    note_cmd "${JLOAD[@]}"
    "${JLOAD[@]}" >"$RUN/jload.out" 2>"$RUN/jload.err" || { cat "$RUN/jload.err" >&2; die "JSON load failed"; }
    [[ $(kv "$RUN/jload.out" topic_high_watermark_sum) == "$JEVENTS" ]] || die "kb.jin holds $(kv "$RUN/jload.out" topic_high_watermark_sum) messages, expected $JEVENTS"
    [[ $(kv "$RUN/jload.out" topic_max_low_watermark) == 0 ]] ||
        die "the mock dropped old JSON data; use more partitions (KBENCH_JSON_PARTITIONS) or fewer samples (KBENCH_JSON_SAMPLES)"
    JAVG_BYTES=$(kv "$RUN/jload.out" avg_value_bytes)
    JPMAX_BYTES=$(kv "$RUN/jload.out" max_partition_bytes_est)
fi
fi

# ---------------------------------------------------------------- throughput
TP=$RUN/throughput.tsv
printf 'consumer\tvariant\trep\tjoin_s\ttotal_s\ttotal_evs\tsteady_evs\tsteady_cpu_s\tev_per_cpu_s\tstall_s\tgap_max_ms\tmax_rss_kib\n' >"$TP"

# tp_row CONSUMER VARIANT REP SPAWN OUTFILE EVENTS
tp_row() {
    local f=$5
    awk -F= -v c="$1" -v v="$2" -v r="$3" -v s="$4" -v n="$6" '
        { x[$1] = $2 }
        END {
            steady = 0.9 * n / (x["t_95"] - x["t_05"]); cpu = x["cpu_95"] - x["cpu_05"]
            printf "%s\t%s\t%s\t%.3f\t%.3f\t%.0f\t%.0f\t%.3f\t%.0f\t%.3f\t%.1f\t%d\n", c, v, r,
                x["t_first"] - s, x["t_done"] - s, n / (x["t_done"] - s), steady, cpu,
                (cpu > 0 ? 0.9 * n / cpu : 0), x["stall_s"], x["gap_max_ms"], x["max_rss_kib"]
        }' "$f" >>"$TP"
    local last
    last=$(tail -n 1 "$TP")
    log "  $(awk -F'\t' '{ printf "%s/%s rep %s: join %.1fs, all in %.1fs (%.0f ev/s), steady %.0f ev/s, %.0f ev/CPU-s, stalls %.2fs (max gap %s ms)", $1, $2, $3, $4, $5, $6, $7, $9, $10, $11 }' <<<"$last")"
}

run_count() {  # VARIANT REP
    local v=$1 r=$2
    # shellcheck disable=SC2206
    local x=(${V_CX[$v]})
    local f="$RUN/count.$v.$r.out" spawn=$EPOCHREALTIME
    local cmd=("$KB" count -b "$BOOT" -t "${V_TOPIC[$v]}" -n "${V_N[$v]}" -g "kb-count-$v-$r" "${x[@]}")
    note_cmd "${cmd[@]}"
    "${cmd[@]}" >"$f" 2>"$RUN/count.$v.$r.err" || { cat "$RUN/count.$v.$r.err" >&2; die "count consumer failed"; }
    tp_row count "$v" "$r" "$spawn" "$f" "${V_N[$v]}"
}

run_sw() {  # VARIANT REP
    local v=$1 r=$2
    # shellcheck disable=SC2206
    local x=(${V_SWX[$v]})
    local f="$RUN/sw.$v.$r.out" spawn=$EPOCHREALTIME
    sw_start "kb-sw-$v-$r" "${V_TOPIC[$v]}" kb.alerts "$RUN/sw.$v.$r.log" "${x[@]}"
    local cmd=("$KB" watch --url "$SW_URL" --pid "$SW_PID" -n "${V_N[$v]}" --t0 "$spawn" --tsv "$RUN/sw.$v.$r.tsv")
    "${cmd[@]}" >"$f" 2>"$RUN/sw.$v.$r.watch.err" || { cat "$RUN/sw.$v.$r.watch.err" >&2; die "stormwatch did not consume everything"; }
    stop_pid "$SW_PID"
    tp_row stormwatch "$v" "$r" "$spawn" "$f" "${V_N[$v]}"
}

if [[ $DO_TP == 1 ]]; then
    log "[1/3] throughput: $REPS reps x {count-only consumer, stormwatch run} x {${VARIANTS[*]}}"
    for ((r = 1; r <= REPS; r++)); do
        for v in "${VARIANTS[@]}"; do
            # alternate the order so that a slow phase of the VM hits both
            if [[ -n ${V_BASE[$v]} ]]; then run_sw "$v" "$r"; continue; fi
            if ((r % 2)); then run_count "$v" "$r"; run_sw "$v" "$r"; else run_sw "$v" "$r"; run_count "$v" "$r"; fi
        done
    done
fi

# run_live NAME PLACE MODE REP: stormwatch with repartition=MODE on its own
# topic, fed live by sw_kbench load (--place PLACE, throttled).
run_live() {
    local v=$1 place=$2 mode=$3 r=$4 t="kb.live.$1.$4"
    local f="$RUN/sw.$v.$r.out" spawn=$EPOCHREALTIME
    sw_start "kb-live-$v-$r" "$t" kb.alerts "$RUN/sw.$v.$r.log" -X "repartition=$mode"
    local cmd=("$KB" watch --url "$SW_URL" --pid "$SW_PID" -n "$KEVENTS" --t0 "$spawn" --tsv "$RUN/sw.$v.$r.tsv")
    "${cmd[@]}" >"$f" 2>"$RUN/sw.$v.$r.watch.err" &
    local wpid=$!
    local load=("$KB" load -b "$BOOT" -t "$t" -P "$PARTS" --place "$place" --throttle-url "$SW_URL"
        --max-ahead "$KLIVE_AHEAD" --gen "jobs=$KJOBS,ranks=$KRANKS,samples=$KSAMPLES,prefix=kk")
    note_cmd "${load[@]}"
    "${load[@]}" >"$RUN/kload.$v.$r.out" 2>"$RUN/kload.$v.$r.err" || { cat "$RUN/kload.$v.$r.err" >&2; die "live load of $t failed"; }
    [[ $(kv "$RUN/kload.$v.$r.out" topic_max_low_watermark) == 0 ]] ||
        die "the mock dropped old data of $t; use fewer samples (KBENCH_KEYING_SAMPLES)"
    wait "$wpid" || { cat "$RUN/sw.$v.$r.watch.err" >&2; die "stormwatch did not analyse everything of $t"; }
    stop_pid "$SW_PID"
    tp_row stormwatch "$v" "$r" "$spawn" "$f" "$KEVENTS"
}
if [[ $DO_KEYING == 1 ]]; then
    log "[1b/3] the repartition modes, live: $REPS reps x {${KMODES[*]}}"
    for ((r = 1; r <= REPS; r++)); do
        for km in "${KMODES[@]}"; do
            IFS=: read -r v place mode <<<"$km"
            run_live "$v" "$place" "$mode" "$r"
        done
    done
fi

# med CONSUMER VARIANT COLUMN -> "median min max"
med() { awk -F'\t' -v c="$1" -v v="$2" -v k="$3" 'NR > 1 && $1 == c && $2 == v { print $k }' "$TP" | stat3; }
# paired ratios stormwatch/count per rep of COLUMN -> "median min max"
paired() {
    awk -F'\t' -v v="$1" -v k="$2" 'NR > 1 && $2 == v { val[$1, $3] = $k; reps[$3] = 1 }
        END { for (r in reps) if (val["count", r] > 0) print val["stormwatch", r] / val["count", r] }' "$TP" | stat3
}

# ---------------------------------------------------------------- latency
LT=$RUN/latency.tsv
printf 'variant\tstorms\tmissed\tp50_us\tp90_us\tp99_us\tmax_us\tmean_us\tother\twrong_cause\n' >"$LT"
((DO_LAT)) && log "[2/3] alert latency: ${#LATV[@]} variants x $STORMS storms"
for ((i = 1; DO_LAT && i <= ${#LATV[@]}; i++)); do
    line=${LATV[i - 1]}
    label=${line%%|*}
    args=${line#*|}
    latargs=
    [[ $args == *'|'* ]] && latargs=${args#*|} && args=${args%%|*}
    # shellcheck disable=SC2206
    xargs_arr=($args)
    # shellcheck disable=SC2206
    latargs_arr=($latargs)
    sw_start "kb-lat-$i" "kb.lat$i.in" kb.lat.alerts "$RUN/lat.$i.log" "${xargs_arr[@]}"
    cmd=("$KB" latency -b "$BOOT" -t "kb.lat$i.in" -o kb.lat.alerts --storms "$STORMS" --warmup 3
        --gap-min-ms 50 --gap-max-ms 550 --timeout-ms 30000 --raw "$RUN/lat.$i.tsv" -j "kb-lat$i" --seed "$i" "${latargs_arr[@]}")
    note_cmd "${cmd[@]}"
    "${cmd[@]}" >"$RUN/lat.$i.out" 2>"$RUN/lat.$i.err" || log "  latency run $i reported missed triggers (see $RUN/lat.$i.err)"
    stop_pid "$SW_PID"
    f=$RUN/lat.$i.out
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$(kv "$f" storms)" "$(kv "$f" missed)" \
        "$(kv "$f" p50_us)" "$(kv "$f" p90_us)" "$(kv "$f" p99_us)" "$(kv "$f" max_us)" \
        "$(kv "$f" mean_us)" "$(kv "$f" other_records)" "$(kv "$f" wrong_cause)" >>"$LT"
    log "  $label: p50 $(fmt_f "$(calc "$(kv "$f" p50_us) / 1000")" 1) ms, p99 $(fmt_f "$(calc "$(kv "$f" p99_us) / 1000")" 1) ms, max $(fmt_f "$(calc "$(kv "$f" max_us) / 1000")" 1) ms"
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

# ---------------------------------------------------------------- profile
PROFILE_ROWS=()
if [[ $PROFILE == 1 ]]; then
    for tool in valgrind callgrind_annotate callgrind_control; do
        command -v "$tool" >/dev/null || die "KBENCH_PROFILE=1 needs valgrind ($tool is missing)"
    done
    log "[3/3] callgrind profile of stormwatch run (events 20,000 to $(fmt_int $((20000 + PROFILE_EVENTS))))"
    CG=$RUN/callgrind.out
    rm -f "$CG"*
    cmd=(valgrind --tool=callgrind --instr-atstart=no "--callgrind-out-file=$CG" "$BIN" run
        -X "bootstrap.servers=$BOOT" -X input.topics=kb.in -X output.topic=kb.alerts -X dlq.topic=kb.dlq
        -X state.topic=kb.state -X group.id=kb-profile -X metrics.listen=127.0.0.1:0
        -X "kafka.consumer.$TUNED_X")
    # shellcheck disable=SC2206
    [[ -n $SW_ARGS ]] && cmd+=($SW_ARGS) # the profile measures what the rows measure
    note_cmd "${cmd[@]}"
    "${cmd[@]}" 2>"$RUN/profile.log" &
    SW_PID=$!
    PIDS+=("$SW_PID")
    port=""
    for ((i = 0; i < 600; i++)); do
        port=$({ sed -n 's/.*metrics on http.*(port \([0-9]*\)).*/\1/p' "$RUN/profile.log" 2>/dev/null || true; } | head -n 1)
        [[ -n $port ]] && break
        sleep 0.1
    done
    [[ -n $port ]] || die "stormwatch under valgrind did not start (see $RUN/profile.log)"
    events_now() { { curl -s "http://127.0.0.1:$port/metrics" || true; } | awk '/^stormwatch_events_in_total/ { s += $NF } END { printf "%d", s }'; }
    "$KB" watch --url "http://127.0.0.1:$port/metrics" --pid "$SW_PID" -n 20000 --interval-ms 100 >/dev/null
    callgrind_control -i on "$SW_PID" >/dev/null
    PROF_A=$(events_now)
    "$KB" watch --url "http://127.0.0.1:$port/metrics" --pid "$SW_PID" -n $((PROF_A + PROFILE_EVENTS)) --interval-ms 200 >/dev/null
    callgrind_control -i off "$SW_PID" >/dev/null
    PROF_N=$(($(events_now) - PROF_A))
    stop_pid "$SW_PID" 300
    callgrind_annotate --inclusive=yes --tree=calling "$CG" >"$RUN/callgrind.txt" 2>/dev/null
    # The main thread's loop (sw_run) and what it calls, in Ir per event.
    # Events in the instrumented window: the calls of decode() (one per message).
    n=$(awk '/\*  .*sw_run\.c:sw_run \[/ { inrun = 1; next } inrun && /^ *$/ { inrun = 0 }
        inrun && /sw_run\.c:decode/ { c = $0; sub(/.*\(/, "", c); sub(/x\).*/, "", c); gsub(",", "", c); print c; exit }' "$RUN/callgrind.txt")
    [[ -n $n && $n -gt 0 ]] && PROF_N=$n
    mapfile -t PROFILE_ROWS < <(awk -v n="$PROF_N" '
        /PROGRAM TOTALS/ { gsub(",", "", $1); total = $1 }
        /\*  .*sw_run\.c:sw_run \[/ { inrun = 1; gsub(",", "", $1); run = $1; next }
        inrun && /^ *$/ { inrun = 0 }
        inrun && />   / {
            ir = $1; gsub(",", "", ir); fn = $0; sub(/.*>   /, "", fn); calls = fn
            sub(/ \(.*/, "", fn); sub(/.*:/, "", fn); sub(/\..*/, "", fn)
            sub(/.*\(/, "", calls); sub(/x\).*/, "", calls); gsub(",", "", calls)
            kids += ir
            if (ir / n >= 20) printf "| `%s` | %.0f | %s |\n", fn, ir / n, calls
        }
        END {
            printf "| `sw_run` itself (loop, inlined helpers) | %.0f | - |\n", (run - kids) / n
            printf "| **main thread (sw_run) total** | **%.0f** | - |\n", run / n
            printf "| other threads in the same window (librdkafka fetch/parse, HTTP; much of the fetching happened before it) | %.0f | - |\n", (total - run) / n
            printf "| **process total** | **%.0f** | - |\n", total / n
        }' "$RUN/callgrind.txt")
fi

# ---------------------------------------------------------------- report
if [[ $DO_TP == 1 ]]; then
read -r c_st c_st_lo c_st_hi < <(med count default 7)
read -r s_st s_st_lo s_st_hi < <(med stormwatch default 7)
read -r c_tot _ _ < <(med count default 6)
read -r s_tot _ _ < <(med stormwatch default 6)
read -r c_join _ _ < <(med count default 4)
read -r s_join _ _ < <(med stormwatch default 4)
read -r c_cpu _ _ < <(med count default 9)
read -r s_cpu _ _ < <(med stormwatch default 9)
read -r c_stall _ _ < <(med count default 10)
read -r s_stall _ _ < <(med stormwatch default 10)
read -r c_rss _ _ < <(med count default 12)
read -r s_rss _ _ < <(med stormwatch default 12)
RATIO=$(calc "$s_st / $c_st")
RATIO_TOT=$(calc "$s_tot / $c_tot")
RATIO_CPU=$(calc "$s_cpu / $c_cpu")
read -r pr pr_lo pr_hi < <(paired default 7)
fi

DEF_LINGER=$(sed -n 's/.*{"linger.ms", "\([0-9]*\)"}.*/\1/p' src/kafka/sw_kafka.c | head -n 1)
DEF_FETCH=$(sed -n 's/.*{"fetch.wait.max.ms", "\([0-9]*\)"}.*/\1/p' src/kafka/sw_kafka.c | head -n 1)
DEF_QMIN=$(sed -n 's/.*{"queued.min.messages", "\([0-9]*\)"}.*/\1/p' src/kafka/sw_kafka.c | head -n 1)
CPU_MODEL=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
GIT_REV=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [[ $FROM_HEAD == 1 && -z ${SW_BIN:-${BENCH_BIN:-}} ]]; then GIT_REV="$HEAD_REV (clean export of HEAD)"
elif [[ -n $(git -C "$ROOT" status --porcelain --untracked-files=no -- src include 2>/dev/null) ]]; then GIT_REV+=" (src/ or include/ modified in the work tree)"; fi
RDK=$(pkg-config --modversion rdkafka 2>/dev/null || echo unknown)
ELAPSED=$(calc "$EPOCHREALTIME - $BENCH_START")
ms() { fmt_f "$(calc "$1 / 1000")" 1; }

{
    echo "# stormwatch Kafka benchmark (mock cluster, $REPS reps, median [min-max])"
    echo
    echo "- date: $(date -Iseconds); bench wall time $(fmt_f "$ELAPSED" 0) s"
    echo "- machine: nproc $(nproc), $CPU_MODEL; load average before / after: $LOAD_BEFORE / $LOAD_AFTER"
    echo "- binary: ${BIN#"$ROOT"/} (stormwatch $VERSION, $BUILD_TYPE), git $GIT_REV; librdkafka $RDK"
    echo "- cluster: \`stormwatch mock\`, $BROKERS brokers, one process (the mock serves all brokers from one thread)"
    [[ $AVG_BYTES == - ]] || echo "- input: $(fmt_int "$EVENTS") Confluent-Avro TelemetryEvents, $JOBS jobs x $RANKS ranks ($((JOBS * RANKS)) ranks) x $SAMPLES samples, avg value $AVG_BYTES B,"
    [[ $AVG_BYTES == - ]] || echo "  topic kb.in with $PARTS partitions, job k on partition k mod $PARTS (largest partition ~$(fmt_int "$PMAX_BYTES") B < the mock's 5 MiB; nothing dropped)"
    [[ -z ${JAVG_BYTES:-} ]] || echo "- JSON input: $(fmt_int "$JEVENTS") events ($JSAMPLES samples per rank), avg value $JAVG_BYTES B, topic kb.jin with $JPARTS partitions (largest ~$(fmt_int "$JPMAX_BYTES") B)"
    [[ -z $SW_ARGS ]] || echo "- stormwatch run with \`$SW_ARGS\` (KBENCH_SW_ARGS) in every run"
    echo
    if [[ $DO_TP == 1 ]]; then
    echo "## 1. Throughput: stormwatch run vs a count-only librdkafka consumer"
    echo
    echo "| measurement | count-only consumer | stormwatch run | ratio | target | verdict |"
    echo "|---|---|---|---|---|---|"
    echo "| steady state, 5% -> 95% of the events (events/s) | $(fmt_si "$c_st") [$(fmt_si "$c_st_lo")-$(fmt_si "$c_st_hi")] | $(fmt_si "$s_st") [$(fmt_si "$s_st_lo")-$(fmt_si "$s_st_hi")] | **$(fmt_f "$RATIO" 2)** (paired per rep: $(fmt_f "$pr" 2) [$(fmt_f "$pr_lo" 2)-$(fmt_f "$pr_hi" 2)]) | >= $TARGET_RATIO | $(verdict_min "$RATIO" "$TARGET_RATIO") |"
    echo "| process start -> all consumed (events/s) | $(fmt_si "$c_tot") | $(fmt_si "$s_tot") | $(fmt_f "$RATIO_TOT" 2) | info | |"
    echo "| process start -> first message (join) | $(fmt_f "$c_join" 2) s | $(fmt_f "$s_join" 2) s | | info | |"
    echo "| events per CPU second (steady, all threads of the process) | $(fmt_si "$c_cpu") | $(fmt_si "$s_cpu") | $(fmt_f "$RATIO_CPU" 2) | info | |"
    echo "| stalls: time in gaps >= 100 ms without a message | $(fmt_f "$c_stall" 2) s | $(fmt_f "$s_stall" 2) s | | info | |"
    echo "| max RSS | $(fmt_f "$(calc "$c_rss / 1024")" 0) MiB | $(fmt_f "$(calc "$s_rss / 1024")" 0) MiB | | info | |"
    if [[ $TUNED == 1 ]]; then
        read -r tc_st tc_lo tc_hi < <(med count tuned 7)
        read -r ts_st ts_lo ts_hi < <(med stormwatch tuned 7)
        read -r tc_cpu _ _ < <(med count tuned 9)
        read -r ts_cpu _ _ < <(med stormwatch tuned 9)
        read -r tc_stall _ _ < <(med count tuned 10)
        read -r ts_stall _ _ < <(med stormwatch tuned 10)
        TR=$(calc "$ts_st / $tc_st")
        echo "| both with \`$TUNED_X\`: steady events/s | $(fmt_si "$tc_st") [$(fmt_si "$tc_lo")-$(fmt_si "$tc_hi")] | $(fmt_si "$ts_st") [$(fmt_si "$ts_lo")-$(fmt_si "$ts_hi")] | $(fmt_f "$TR" 2) | (diagnostic) | $(verdict_min "$TR" "$TARGET_RATIO") |"
        echo "| both with \`$TUNED_X\`: events per CPU second | $(fmt_si "$tc_cpu") | $(fmt_si "$ts_cpu") | $(fmt_f "$(calc "$ts_cpu / $tc_cpu")" 2) | info | |"
        echo "| both with \`$TUNED_X\`: stalls | $(fmt_f "$tc_stall" 2) s | $(fmt_f "$ts_stall" 2) s | | info | |"
        read -r tc_rss _ _ < <(med count tuned 12)
        read -r ts_rss _ _ < <(med stormwatch tuned 12)
        echo "| both with \`$TUNED_X\`: max RSS | $(fmt_f "$(calc "$tc_rss / 1024")" 0) MiB | $(fmt_f "$(calc "$ts_rss / 1024")" 0) MiB | | info | |"
    fi
    echo
    echo "By input format and \`worker.threads\` (\`default\` = the CPUs; each stormwatch row beside"
    echo "the count-only consumer on the same topic; medians of $REPS reps):"
    echo
    echo "| variant | input | worker.threads | count-only ev/s | stormwatch ev/s | ratio | target | count-only ev/CPU-s | stormwatch ev/CPU-s | stormwatch max RSS |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    for v in "${VARIANTS[@]}"; do
        b=${V_BASE[$v]:-$v}
        read -r vc _ _ < <(med count "$b" 7)
        read -r vs vs_lo vs_hi < <(med stormwatch "$v" 7)
        read -r vcc _ _ < <(med count "$b" 9)
        read -r vsc _ _ < <(med stormwatch "$v" 9)
        read -r vrss _ _ < <(med stormwatch "$v" 12)
        th=${V_SWX[$v]#*worker.threads=}; [[ ${V_SWX[$v]} == *worker.threads=* ]] || th="default ($(nproc))"
        vr=$(calc "$vs / $vc")
        echo "| $v | ${V_DESC[$v]} | $th | $(fmt_si "$vc") | $(fmt_si "$vs") [$(fmt_si "$vs_lo")-$(fmt_si "$vs_hi")] | $(fmt_f "$vr" 2) | >= $TARGET_RATIO | $(fmt_si "$vcc") | $(fmt_si "$vsc") | $(fmt_f "$(calc "$vrss / 1024")" 0) MiB |"
    done
    if [[ $DO_KEYING == 1 ]]; then
        echo
        echo "### The repartition modes, live ($(fmt_int "$KEVENTS") Avro events per run, $KJOBS jobs x $KRANKS ranks x $KSAMPLES samples,"
        echo "produced while the daemon runs and at most $(fmt_int "$KLIVE_AHEAD") events ahead of it; job-keyed: keyed by job_id where"
        echo "Kafka's clients put the key (murmur2); no key: spread message by message; steady events analysed per s)"
        echo
        echo "| comparison | first (ev/s) | second (ev/s) | ratio, paired per rep | target | verdict |"
        echo "|---|---|---|---|---|---|"
        krow() {  # LABEL V1 V2 TARGET
            read -r a _ _ < <(med stormwatch "$2" 7)
            read -r b _ _ < <(med stormwatch "$3" 7)
            read -r k k_lo k_hi < <(awk -F'\t' -v x="$2" -v y="$3" 'NR > 1 && $1 == "stormwatch" { val[$2, $3] = $7; reps[$3] = 1 }
                END { for (r in reps) if (val[y, r] > 0 && val[x, r] > 0) print val[x, r] / val[y, r] }' "$TP" | stat3)
            local t=">= $4" vd
            if [[ $4 == info ]]; then t=info; vd=; else vd=$(verdict_min "$k" "$4"); fi
            echo "| $1 | $(fmt_si "$a") | $(fmt_si "$b") | **$(fmt_f "$k" 2)** [$(fmt_f "$k_lo" 2)-$(fmt_f "$k_hi" 2)] | $t | $vd |"
        }
        krow "job-keyed: auto / off" k-auto k-off 0.90
        krow "job-keyed: on / off (the hop)" k-on k-off info
        krow "no key: auto / on" u-auto u-on 0.95
        echo
        echo "Live, the producer (sw_kbench load, generating and encoding) shares the 2 CPUs with the"
        echo "daemon and the mock cluster, so the rates are lower than the backlog rows above; the"
        echo "ratios compare the modes under the same conditions."
    fi
    echo
    echo "Both consumers join a new group (cooperative-sticky), start from the beginning and stop"
    echo "when they have all $(fmt_int "$EVENTS") messages. The count-only consumer is \`sw_kbench count\`"
    echo "(rd_kafka_consumer_poll, count, destroy). stormwatch's completion is read from"
    echo "\`stormwatch_events_in_total\` on its /metrics, polled every 20 ms. \"Steady state\" excludes"
    echo "the group join (~3 s on the mock) and the tail; \"start -> all\" includes them. CPU comes"
    echo "from getrusage (count) and /proc/PID/stat (stormwatch) over the same 5%-95% span."
    echo
    echo "Per run (raw: kafka/throughput.tsv):"
    echo
    echo "| consumer | variant | rep | join s | start->all s | steady ev/s | steady CPU s | ev/CPU-s | stalls s | longest gap ms | max RSS MiB |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|"
    awk -F'\t' 'NR > 1 { printf "| %s | %s | %s | %.2f | %.2f | %.0f | %.2f | %.0f | %.2f | %s | %.0f |\n", $1, $2, $3, $4, $5, $7, $8, $9, $10, $11, $12 / 1024 }' "$TP"
    echo
    fi
    if [[ $DO_LAT == 1 ]]; then
    echo "## 2. Alert latency (sample produced -> trigger readable on the output topic)"
    echo
    echo "| stormwatch settings | storms | missed | p50 ms | p90 ms | p99 ms | max ms | mean ms | p99 target | verdict |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    while IFS=$'\t' read -r label n miss p50 p90 p99 mx mean _ wrong; do
        [[ ${wrong:-0} == 0 || $label == variant ]] || miss="$miss (+$wrong caused by another sample)"
        [[ $label == variant ]] && continue
        if [[ -z $p99 ]]; then
            echo "| $label | ${n:-0} | ${miss:-?} | - | - | - | - | - | < $TARGET_P99_MS ms | **FAIL** (no trigger) |"
            continue
        fi
        echo "| $label | $n | $miss | $(ms "$p50") | $(ms "$p90") | **$(ms "$p99")** | $(ms "$mx") | $(ms "$mean") | < $TARGET_P99_MS ms | $(verdict_max "$(calc "$p99 / 1000")" "$TARGET_P99_MS") |"
    done <"$LT"
    echo
    echo "Per storm (\`sw_kbench latency\`): a new job of 4 ranks gets 4 quiet samples per rank and"
    echo "rank 0's spike (a candidate, no cluster onset yet), flushed; then 50-550 ms of silence"
    echo "(uniform, so that the moment falls at a random phase of the daemon's fetch cycle); then"
    echo "the driver reads the clock and produces rank 1's spike (linger.ms=0), the sample that"
    echo "completes the second crossing. The latency ends when a record with that job's key and"
    echo "header \`stormwatch.action: trigger\` comes out of rd_kafka_consumer_poll on the output topic"
    echo "(observer: no group, fetch.wait.max.ms=1). 3 warm-up storms are not counted."
    echo
    echo "Settings that matter (librdkafka $RDK):"
    echo
    setting() {  # VALUE_FROM_SRC LIBRDKAFKA_DEFAULT
        if [[ -n $1 ]]; then echo "$1 (set in src/kafka/sw_kafka.c; the librdkafka default is $2)"
        else echo "$2 (the librdkafka default; stormwatch does not set it)"; fi
    }
    echo "- stormwatch producer: linger.ms = $(setting "$DEF_LINGER" 5)."
    echo "- stormwatch consumer: fetch.wait.max.ms = $(setting "$DEF_FETCH" 500);"
    echo "  queued.min.messages = $(setting "$DEF_QMIN" 100000)."
    echo "- The mock broker does **not** answer a fetch when data arrives: a Fetch that finds no data"
    echo "  is answered after the full fetch.wait.max.ms (rdkafka_mock_handlers.c, 2.0.2: \"If there was"
    echo "  no data, delay up to MaxWait\"), so on the mock the consumer's fetch.wait.max.ms adds"
    echo "  U(0, fetch.wait.max.ms) to every alert. A real broker answers as soon as fetch.min.bytes"
    echo "  (1) is there. The mock also returns at most one message set per partition per Fetch."
    fi
    if ((${#PROFILE_ROWS[@]})); then
        echo
        echo "## 3. Where stormwatch's time goes (callgrind, $(fmt_int "$PROF_N") events, queued.min.messages raised)"
        echo
        echo "| function (called from the main loop) | instructions per event | calls |"
        echo "|---|---|---|"
        printf '%s\n' "${PROFILE_ROWS[@]}"
        echo
        echo "Full annotation: kafka/callgrind.txt. Time-driven work (snapshots every 10 s, /metrics"
        echo "renders) is inflated here because valgrind runs ~50x slower than real time."
    fi
    echo
    echo "## Commands"
    echo
    echo '```'
    printf '%s\n' "${CMDS_USED[@]}" | awk '!seen[$0]++' | sed -e "s#$BOOT#BOOTSTRAP#g"
    echo '```'
} >"$RESULTS.tmp"
mv -f "$RESULTS.tmp" "$RESULTS"
cat "$RESULTS"
log "results written to $RESULTS (total $(fmt_f "$(calc "$EPOCHREALTIME - $BENCH_START")" 0) s)"
