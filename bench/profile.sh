#!/usr/bin/env bash
# Where the CPU time goes: a perf profile (software event cpu-clock, so it
# works on VMs without hardware counters) of each command on a generated
# input, printing the top symbols (user and kernel) of each. See
# docs/benchmarks.md ("Profiles").
#
#   bench/profile.sh [OPTIONS] [replay] [analyze] [run]   (default: all three)
#
# Options:
#   --events N   events of the generated input (default 400,000; 256 ranks)
#   --top K      symbols printed per command (default 15)
#   --bin PATH   the stormwatch to profile (default $SW_BIN, else build/stormwatch)
#   --freq HZ    samples per second (default 4999)
#   -h, --help   this text
#
# replay and analyze read the input file. run (the daemon) reads the same
# events of 64 jobs x 4 ranks (at most 96,000: the mock keeps ~5 MiB a
# partition) from a topic of `stormwatch mock` (librdkafka's mock cluster;
# produced before the daemon starts, so the profile is of a backlog), at
# its defaults, and is stopped (SIGTERM) once its metrics count
# every event in. Raw profiles: $BENCH_OUT/profile/perf.CMD.data (default
# bench/out), for `perf report -i FILE`.
#
# Needs perf (Debian: linux-perf; scripts/install-deps.sh bench). As a
# user with kernel.perf_event_paranoid >= 2 only user space is sampled
# (cpu-clock:u): the kernel's share then shows as missing time.
set -euo pipefail
export LC_ALL=C
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh disable=SC1091
source "$ROOT/bench/lib.sh"

EVENTS=400000 TOP=15 FREQ=4999 BIN=${SW_BIN:-$ROOT/build/stormwatch}
CMDS=()
while (($#)); do
    case $1 in
    --events) EVENTS=${2:?}; shift 2 ;;
    --top) TOP=${2:?}; shift 2 ;;
    --bin) BIN=${2:?}; shift 2 ;;
    --freq) FREQ=${2:?}; shift 2 ;;
    replay | analyze | run) CMDS+=("$1"); shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see bench/profile.sh --help)" ;;
    esac
done
((${#CMDS[@]})) || CMDS=(replay analyze run)
[[ $EVENTS =~ ^[1-9][0-9]*$ ]] || die "--events must be a positive integer"
[[ -x $BIN ]] || die "no stormwatch at $BIN (make build)"
command -v perf >/dev/null || die "perf is missing (scripts/install-deps.sh bench installs linux-perf)"

OUT=${BENCH_OUT:-$ROOT/bench/out}/profile
mkdir -p "$OUT"
RANKS=256
SAMPLES=$(((EVENTS + RANKS - 1) / RANKS))
IN=$OUT/in-r${RANKS}-s${SAMPLES}.jsonl
if [[ ! -s $IN ]]; then
    log "generating $IN ($RANKS ranks x $SAMPLES samples)"
    "$BIN" gen --ranks "$RANKS" --samples "$SAMPLES" --storm-at 0.25 --quiet -o "$IN.tmp"
    mv -f "$IN.tmp" "$IN"
fi
NEV=$(wc -l <"$IN")

# The event: cpu-clock, or cpu-clock:u where the kernel may not be sampled.
EVENT=cpu-clock
if ! perf record -q -e "$EVENT" -o /dev/null -- true >/dev/null 2>&1; then
    EVENT=cpu-clock:u
    perf record -q -e "$EVENT" -o /dev/null -- true >/dev/null 2>&1 ||
        die "perf record -e cpu-clock fails here (kernel.perf_event_paranoid: $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null))"
fi

# report CMD DATA: the top symbols of one profile.
report() {
    local cmd=$1 data=$2 total
    total=$(perf report -i "$data" --stdio --no-children --sort sym 2>/dev/null |
        sed -n 's/^# Samples: \([0-9.]*[kKM]\{0,1\}\).*/\1/p' | head -n 1)
    echo "### $cmd ($(fmt_int "$NEV") events, $EVENT at $FREQ Hz, ${total:-?} samples)"
    echo
    echo '```'
    perf report -i "$data" --stdio --no-children --sort sym 2>/dev/null |
        grep -v '^#' | grep -v '^[[:space:]]*$' | head -n "$TOP"
    echo '```'
    echo "([k] kernel, [.] user space; perf report -i ${data#"$ROOT"/} --no-children for more)"
    echo
}

# profile_file CMD ARGS...: perf record of `stormwatch ARGS... IN`.
profile_file() {
    local cmd=$1 data=$OUT/perf.$1.data
    shift
    log "profiling $cmd"
    local TIMEFORMAT='%3U %3S'
    perf record -q -e "$EVENT" -F "$FREQ" -o "$data" -- "$BIN" "$@" "$IN" >/dev/null 2>"$OUT/$cmd.err" ||
        { cat "$OUT/$cmd.err" >&2; die "perf record of $cmd failed"; }
    report "$cmd" "$data"
}

# profile_run: the daemon on a backlog of the same events in the mock.
profile_run() {
    local data=$OUT/perf.run.data dir=$OUT/run
    rm -rf "$dir"
    mkdir -p "$dir"
    local pids=()
    cleanup_run() {
        local p
        for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
        for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    }
    trap cleanup_run EXIT
    log "profiling run: starting the mock cluster"
    "$BIN" mock --brokers 1 --topic prof.in:64 --topic prof.alerts:8 --topic prof.dlq:8 \
        --topic prof.state:1 --topic prof.repartition:64 --bootstrap-file "$dir/bootstrap" \
        >"$dir/mock.out" 2>"$dir/mock.err" &
    pids+=($!)
    local i boot port=""
    for ((i = 0; i < 300; i++)); do [[ -s $dir/bootstrap ]] && break; sleep 0.1; done
    [[ -s $dir/bootstrap ]] || die "the mock cluster did not start (see $dir/mock.err)"
    boot=$(cat "$dir/bootstrap")
    # The mock keeps ~5 MiB a partition and drops older data: at most
    # 96,000 events, as 64 jobs of 4 ranks over 64 partitions.
    local rin=$dir/in.jsonl rs=$(((EVENTS < 96000 ? EVENTS : 96000) / 256))
    "$BIN" gen --jobs 64 --ranks 4 --samples "$((rs > 100 ? rs : 100))" --storm-at 0.25 --quiet -o "$rin"
    local nev
    nev=$(wc -l <"$rin")
    log "producing $(fmt_int "$nev") events (64 jobs x 4 ranks) to prof.in"
    "$BIN" produce -q -b "$boot" -t prof.in "$rin" 2>"$dir/produce.err" ||
        { cat "$dir/produce.err" >&2; die "produce failed"; }
    perf record -q -e "$EVENT" -F "$FREQ" -o "$data" -- "$BIN" run -X "bootstrap.servers=$boot" \
        -X input.topics=prof.in -X output.topic=prof.alerts -X dlq.topic=prof.dlq \
        -X state.topic=prof.state -X group.id=prof -X metrics.listen=127.0.0.1:0 \
        >"$dir/run.out" 2>"$dir/run.err" &
    local perf_pid=$!
    pids+=("$perf_pid")
    metrics_port_wait "$dir/run.err" "$perf_pid" 600 0.1
    port=$METRICS_PORT
    local n=0 last=-1 still=0
    # Progress-based: every event counted in, however long that takes; 15 s
    # without one more ends it (what was read is still profiled).
    while :; do
        n=$({ curl -s "http://127.0.0.1:$port/metrics" || true; } |
            awk '/^stormwatch_events_in_total/ && /stage="engine"/ { s += $NF } END { printf "%d", s }')
        ((n >= nev)) && break
        kill -0 "$perf_pid" 2>/dev/null || { cat "$dir/run.err" >&2; die "stormwatch run exited after $n events"; }
        if ((n == last)); then
            ((++still < 75)) || { log "WARNING: no progress for 15 s at $n of $nev events; stopping"; break; }
        else
            still=0 last=$n
        fi
        sleep 0.2
    done
    local sw
    sw=$(pgrep -P "$perf_pid" -x stormwatch | head -n 1 || true)
    [[ -n $sw ]] || sw=$(pgrep -P "$perf_pid" | head -n 1)
    kill -TERM "$sw"
    wait "$perf_pid" || true
    cleanup_run
    trap - EXIT
    NEV=$n report "run (daemon at its defaults, a backlog of 64 jobs x 4 ranks in the mock)" "$data"
}

{
    echo "## Profiles: stormwatch $("$BIN" --version | awk '{ print $NF }'), $(date -u +%Y-%m-%d), load $(cut -d' ' -f1 /proc/loadavg)"
    echo
    for c in "${CMDS[@]}"; do
        case $c in
        replay) profile_file replay replay --window-samples 512 ;;
        analyze) profile_file analyze analyze ;;
        run)
            command -v curl >/dev/null || die "run needs curl (its metrics)"
            profile_run
            ;;
        esac
    done
} | tee "$OUT/profile.md"
log "written to $OUT/profile.md"
