#!/usr/bin/env bash
# stormwatch soak: millions of events across thousands of ranks streamed
# through `stormwatch run` on the mock cluster while its RSS and engine
# gauges are sampled every second; shows where memory stops growing and
# that max.jobs / max.ranks.per.job / window.samples / job.idle.ms bound it.
# See bench/README.md ("Soak: bench/soak.sh").
#
#   bench/soak.sh                        all three variants (~4-8 min on 2 cores)
#   SOAK_VARIANTS=main bench/soak.sh     one variant
#
# Output: a Markdown report on stdout and in $SOAK_OUT/soak.md; progress on
# stderr; the per-second samples and logs in $SOAK_OUT/soak/.

set -Eeuo pipefail
export LC_ALL=C
BENCH_START=$EPOCHREALTIME

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=bench/lib.sh disable=SC1091
source "$ROOT/bench/lib.sh"

VARIANTS=${SOAK_VARIANTS:-main idle limit}
JOBS=${SOAK_JOBS:-4}
RANKS=${SOAK_RANKS:-1024}
SAMPLES=${SOAK_SAMPLES:-1300}
WINDOW=${SOAK_WINDOW:-512}
AHEAD=${SOAK_MAX_AHEAD:-20000}
WAVES=${SOAK_IDLE_WAVES:-3}
IDLE_MS=${SOAK_IDLE_MS:-3000}
SW_ARGS=${SOAK_SW_ARGS:-}
KBUILD=${KBENCH_BUILD:-$ROOT/build-kbench}
OUT=${SOAK_OUT:-${BENCH_OUT:-$ROOT/bench/out}}
for v in JOBS RANKS SAMPLES WINDOW AHEAD WAVES IDLE_MS; do
    [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "SOAK_$v must be a positive integer (got '${!v}')"
done
for v in $VARIANTS; do [[ $v == main || $v == idle || $v == limit ]] || die "SOAK_VARIANTS: unknown variant '$v' (main, idle, limit)"; done

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
RUN=$OUT/soak
RESULTS=$OUT/soak.md
if command -v flock >/dev/null; then
    exec 8>"$OUT/.soak.lock"
    flock -n 8 || die "another bench/soak.sh is running on $OUT"
fi
rm -rf "$RUN"
mkdir -p "$RUN"
for tool in awk sed grep sort curl; do command -v "$tool" >/dev/null || die "missing tool: $tool"; done

declare -a PIDS=()
cleanup() {  # newest first: clients before the mock cluster they talk to
    local k
    for ((k = ${#PIDS[@]} - 1; k >= 0; k--)); do
        kill -TERM "${PIDS[k]}" 2>/dev/null || true
        wait "${PIDS[k]}" 2>/dev/null || true
    done
}
trap cleanup EXIT
trap 'die "unexpected failure at bench/soak.sh line $LINENO: $BASH_COMMAND"' ERR

# ---------------------------------------------------------------- binaries
kbench_binaries

# ---------------------------------------------------------------- cluster
# One input topic per variant (a new group reads its topic from the start).
MAIN_PARTS=$JOBS
LIMIT_PARTS=2
log "starting the mock cluster (3 brokers)"
MOCK=("$BIN" mock --brokers 3 --topic "soak.main:$MAIN_PARTS" --topic "soak.idle:$JOBS"
    --topic "soak.limit:$LIMIT_PARTS" --topic soak.alerts:8 --topic soak.dlq:8 --topic soak.state:1
    --bootstrap-file "$RUN/bootstrap")
note_cmd "${MOCK[@]}"
"${MOCK[@]}" >"$RUN/mock.out" 2>"$RUN/mock.err" &
PIDS+=("$!")
for ((i = 0; i < 300; i++)); do [[ -s $RUN/bootstrap ]] && break; sleep 0.1; done
[[ -s $RUN/bootstrap ]] || die "the mock cluster did not start (see $RUN/mock.err)"
BOOT=$(cat "$RUN/bootstrap")

# sw_start NAME TOPIC [ARGS...] -> SW_PID, SW_URL
sw_start() {
    local name=$1 topic=$2
    shift 2
    local logf=$RUN/$name.log
    local cmd=("$BIN" run -X "bootstrap.servers=$BOOT" -X "input.topics=$topic" -X output.topic=soak.alerts
        -X dlq.topic=soak.dlq -X state.topic=soak.state -X "group.id=soak-$name"
        -X metrics.listen=127.0.0.1:0 "$@")
    # shellcheck disable=SC2206
    [[ -n $SW_ARGS ]] && cmd+=($SW_ARGS)
    note_cmd "${cmd[@]}"
    "${cmd[@]}" 2>"$logf" &
    SW_PID=$!
    PIDS+=("$SW_PID")
    local port="" i
    for ((i = 0; i < 500; i++)); do
        port=$({ sed -n 's/.*metrics on http.*(port \([0-9]*\)).*/\1/p' "$logf" 2>/dev/null || true; } | head -n 1)
        [[ -n $port ]] && break
        kill -0 "$SW_PID" 2>/dev/null || { cat "$logf" >&2; die "stormwatch run exited"; }
        sleep 0.02
    done
    [[ -n $port ]] || die "stormwatch run did not report its metrics port (see $logf)"
    SW_URL="http://127.0.0.1:$port/metrics"
}

# metric NAME -> summed value of a /metrics family now
metric() { { curl -s --max-time 5 "$SW_URL" || true; } | awk -v n="$1" '$1 == n || index($1, n "{") == 1 { s += $NF } END { printf "%.0f", s }'; }

# wait_until DESCRIPTION SECONDS TEST...: poll TEST every 0.5 s
wait_until() {
    local what=$1 limit=$2 i
    shift 2
    for ((i = 0; i < limit * 2; i++)); do
        "$@" && return 0
        kill -0 "$SW_PID" 2>/dev/null || die "stormwatch exited while waiting for $what"
        sleep 0.5
    done
    die "timeout after ${limit}s waiting for $what"
}
consumed_ge() { (($(metric stormwatch_events_in_total) >= $1)); }
jobs_eq() { (($(metric stormwatch_jobs_tracked) == $1)); }

# load NAME TOPIC PARTITIONS GEN... -> produced events in LOADED
load() {
    local name=$1 topic=$2 parts=$3
    shift 3
    local gens=() g
    for g in "$@"; do gens+=(--gen "$g"); done
    local cmd=("$KB" load -b "$BOOT" -t "$topic" -P "$parts" "${gens[@]}" --throttle-url "$SW_URL"
        --max-ahead "$AHEAD" --progress)
    note_cmd "${cmd[@]}"
    "${cmd[@]}" >"$RUN/$name.load.out" 2>"$RUN/$name.load.err" || { cat "$RUN/$name.load.err" >&2; die "load $name failed"; }
    LOADED=$(kv "$RUN/$name.load.out" delivered)
    log "  $name: produced $(fmt_int "$LOADED") events ($(kv "$RUN/$name.load.out" avg_value_bytes) B each) in $(kv "$RUN/$name.load.out" seconds) s"
}

# start_sampler NAME: 1 Hz samples of the daemon into NAME.tsv
start_sampler() {
    local cmd=("$KB" watch --url "$SW_URL" --pid "$SW_PID" --interval-ms 1000 --tsv "$RUN/$1.tsv")
    note_cmd "${cmd[@]}"
    "${cmd[@]}" >"$RUN/$1.watch.out" 2>"$RUN/$1.watch.err" &
    SAMPLER_PID=$!
    PIDS+=("$SAMPLER_PID")
}

# ---------------------------------------------------------------- report helpers
# col NAME -> column number in the sampler TSV
col() { head -n 1 "$1" | tr '\t' '\n' | grep -nx "$2" | cut -d: -f1; }
# colmax FILE NAME -> max of a column
colmax() { local c; c=$(col "$1" "$2"); awk -F'\t' -v c="$c" 'NR > 1 && $c > m { m = $c } END { printf "%.0f", m }' "$1"; }

# plot FILE: ASCII chart of RSS (MiB, '*') and retained samples ('o', own
# scale) over time.
plot() {
    local f=$1
    awk -F'\t' -v W=64 -v H=14 '
        NR == 1 { next }
        { n++; t[n] = $1; r[n] = $3 / 1024; s[n] = $5; if (r[n] > rmax) rmax = r[n]; if (s[n] > smax) smax = s[n] }
        END {
            if (n < 2) { print "(too few samples)"; exit }
            tmax = t[n]; if (tmax <= 0) tmax = 1
            top = rmax * 1.05; if (top <= 0) top = 1; stop = smax > 0 ? smax : 1
            for (y = 0; y < H; y++) for (x = 0; x < W; x++) g[y, x] = " "
            for (i = 1; i <= n; i++) {
                x = int(t[i] / tmax * (W - 1))
                yr = int(r[i] / top * (H - 1) + 0.5); ys = int(s[i] / stop * (H - 1) * rmax / top + 0.5)
                if (g[yr, x] == "o") g[yr, x] = "@"; else g[yr, x] = "*"
                if (smax > 0) { if (g[ys, x] == "*") g[ys, x] = "@"; else if (g[ys, x] == " ") g[ys, x] = "o" }
            }
            for (y = H - 1; y >= 0; y--) {
                line = ""
                for (x = 0; x < W; x++) line = line g[y, x]
                printf "%7.1f |%s|\n", top * y / (H - 1), line
            }
            printf "%7s +", "MiB"; for (x = 0; x < W; x++) printf "-"; printf "+\n"
            printf "%9s%-*s%s\n", "0 s", W - 6, "", sprintf("%.0f s", tmax)
            printf "* RSS (MiB, left axis)   o retained samples (top of the o scale = %d = the peak)   @ both\n", smax
        }' "$f"
}

# table FILE [MAXROWS]: the samples as a Markdown table (thinned)
table() {
    local f=$1 max=${2:-40} n
    n=$(($(wc -l <"$f") - 1))
    echo "| t (s) | events consumed | RSS (MiB) | retained samples | jobs | ranks | engine (MiB) | lag | limit rejects | summaries |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    awk -F'\t' -v n="$n" -v max="$max" 'NR == 1 { next }
        { i = NR - 1; step = n > max ? n / max : 1
          if (i == 1 || i == n || int((i - 1) / step) != int((i - 2) / step))
            printf "| %.0f | %d | %.1f | %d | %d | %d | %.1f | %d | %d | %d |\n", $1, $2, $3 / 1024, $5, $6, $7, $8 / 1048576, $9, $10, $12 }' "$f"
}

# resets NAME -> offset resets in the daemon's log (input the mock dropped)
resets() { grep -c 'offset reset' "$RUN/$1.log" || true; }

# lost PRODUCED CONSUMED NAME -> a warning when the mock dropped input
lost() {
    if [[ $1 != "$2" || $(resets "$3") != 0 ]]; then
        echo "**INVALID: input was lost ($1 produced, $2 consumed, $(resets "$3") offset resets); lower SOAK_MAX_AHEAD.** "
    fi
}

declare -a SECTIONS=()
section() { SECTIONS+=("$(cat)"); }
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)

# ---------------------------------------------------------------- variant: main
run_main() {
    local name=main full=$((JOBS * RANKS * WINDOW))
    log "[main] $JOBS jobs x $RANKS ranks x $SAMPLES samples, window.samples=$WINDOW"
    sw_start main soak.main -X "window.samples=$WINDOW" -X max.jobs=4 -X "max.ranks.per.job=$RANKS"
    start_sampler main
    local t0=$EPOCHREALTIME
    load main soak.main "$MAIN_PARTS" "jobs=$JOBS,ranks=$RANKS,samples=$SAMPLES,prefix=soak"
    local produced=$LOADED
    wait_until "all events consumed" 600 consumed_ge "$produced"
    local t1=$EPOCHREALTIME
    log "  consumed everything; 15 s more of sampling (a snapshot falls in it)"
    sleep 15
    stop_pid "$SAMPLER_PID"
    local consumed
    consumed=$(metric stormwatch_events_in_total)
    stop_pid "$SW_PID"
    local f=$RUN/main.tsv
    # windows full: the first sample with retained == full
    local rc rr fill_t fill_ev fill_rss end_rss med_after max_after
    rc=$(col "$f" retained)
    rr=$(col "$f" rss_kib)
    read -r fill_t fill_ev fill_rss < <(awk -F'\t' -v c="$rc" -v r="$rr" -v full="$full" 'NR > 1 && $c >= full { printf "%.0f %d %.1f\n", $1, $2, $r / 1024; exit }' "$f")
    if [[ -n ${fill_t:-} ]]; then
        read -r med_after max_after end_rss < <(awk -F'\t' -v c="$rc" -v r="$rr" -v full="$full" 'NR > 1 && $c >= full { v[++n] = $r / 1024; if (v[n] > m) m = v[n]; last = v[n] }
            END { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { x = v[i]; v[i] = v[j]; v[j] = x }
                  printf "%.1f %.1f %.1f\n", v[int((n + 1) / 2)], m, last }' "$f")
    fi
    local peak_hwm
    peak_hwm=$(colmax "$f" hwm_kib)
    local growth verdict
    if [[ -n ${fill_t:-} ]]; then
        growth=$(calc "($max_after - $fill_rss) / $fill_rss * 100")
        if awk -v g="$growth" 'BEGIN { exit !(g <= 10) }'; then verdict="PASS: RSS stops growing once the windows are full (max +$(fmt_f "$growth" 1)% over the value at the fill point)"
        else verdict="**FAIL**: RSS grew $(fmt_f "$growth" 1)% after the windows were full"; fi
    else
        verdict="**INVALID**: the windows never filled (retained peak $(colmax "$f" retained), expected $full)"
    fi
    verdict="$(lost "$produced" "$consumed" main)$verdict"
    section <<EOF
## Variant main: $(fmt_int "$produced") events, $((JOBS * RANKS)) ranks in $JOBS jobs, window.samples=$WINDOW

Config: \`window.samples=$WINDOW max.jobs=4 max.ranks.per.job=$RANKS\` (everything else default);
input: \`sw_kbench load --gen jobs=$JOBS,ranks=$RANKS,samples=$SAMPLES\` to soak.main ($MAIN_PARTS partitions,
one job each), produced while the daemon consumes, at most $AHEAD events ahead of it.

| measurement | value |
|---|---|
| events produced / consumed | $(fmt_int "$produced") / $(fmt_int "$consumed") ($( [[ $produced == "$consumed" ]] && echo "none lost" || echo "**MISMATCH**")); offset resets in the daemon log: $(resets main) |
| time to consume (first produce -> all consumed) | $(fmt_f "$(calc "$t1 - $t0")" 1) s ($(fmt_si "$(calc "$produced / ($t1 - $t0)")") events/s) |
| windows full (retained = $JOBS x $RANKS x $WINDOW = $(fmt_int "$full")) | at t = ${fill_t:-never} s, after $(fmt_int "${fill_ev:-0}") events, RSS ${fill_rss:-?} MiB |
| **plateau RSS** (median of the samples after the fill point) | **${med_after:-?} MiB** (max ${max_after:-?}, last ${end_rss:-?}) |
| **peak RSS** (VmHWM) | **$(fmt_f "$(calc "$peak_hwm / 1024")" 1) MiB** |
| retained samples, max | $(fmt_int "$(colmax "$f" retained)") (limit $(fmt_int "$full")) |
| jobs / ranks tracked, max | $(colmax "$f" jobs) / $(fmt_int "$(colmax "$f" ranks)") (limits 4 per partition engine / $RANKS per job) |
| engine state, max | $(fmt_f "$(calc "$(colmax "$f" engine_bytes) / 1048576")" 1) MiB ($(fmt_f "$(calc "$(colmax "$f" engine_bytes) / ($(colmax "$f" retained) + 1)")" 1) B per retained sample) |
| verdict | $verdict |

\`\`\`
$(plot "$f")
\`\`\`

$(table "$f" 45)
EOF
}

# ---------------------------------------------------------------- variant: idle
run_idle() {
    local samples=300 window=256
    log "[idle] $WAVES waves of $JOBS new jobs x $RANKS ranks x $samples samples, job.idle.ms=$IDLE_MS, window.samples=$window"
    sw_start idle soak.idle -X "window.samples=$window" -X "job.idle.ms=$IDLE_MS"
    start_sampler idle
    local total=0 w rows=()
    for ((w = 1; w <= WAVES; w++)); do
        load "idle.w$w" soak.idle "$JOBS" "jobs=$JOBS,ranks=$RANKS,samples=$samples,prefix=wave$w,seed=$w,storm_at=0.2,spread_ms=100"
        total=$((total + LOADED))
        wait_until "wave $w consumed" 600 consumed_ge "$total"
        local rss_busy
        rss_busy=$(awk '/^VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$SW_PID/status")
        wait_until "wave $w's jobs summarised and freed" 120 jobs_eq 0
        sleep 1.5
        local rss_idle retained_idle ranks_idle summaries
        rss_idle=$(awk '/^VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$SW_PID/status")
        retained_idle=$(metric stormwatch_retained_samples)
        ranks_idle=$(metric stormwatch_ranks_tracked)
        summaries=$({ curl -s "$SW_URL" || true; } | awk '/^stormwatch_records_out_total\{action="summary"\}/ { print $NF }')
        rows+=("| $w | $(fmt_int "$LOADED") | $rss_busy | $rss_idle | $retained_idle | $ranks_idle | $summaries |")
        log "  wave $w: RSS $rss_busy MiB after consuming, $rss_idle MiB once freed (retained $retained_idle, summaries $summaries)"
    done
    sleep 3
    stop_pid "$SAMPLER_PID"
    local consumed
    consumed=$(metric stormwatch_events_in_total)
    stop_pid "$SW_PID"
    local f=$RUN/idle.tsv first_busy last_busy verdict
    first_busy=$(sed -n '1s/^| [0-9]* | [^|]* | \([0-9.]*\) .*/\1/p' <<<"${rows[0]}")
    last_busy=$(sed -n '1s/^| [0-9]* | [^|]* | \([0-9.]*\) .*/\1/p' <<<"${rows[${#rows[@]} - 1]}")
    if awk -v a="$first_busy" -v b="$last_busy" 'BEGIN { exit !(b <= a * 1.10) }'; then
        verdict="PASS: every wave's state was freed (retained 0, ranks 0 after job.idle.ms) and later waves reuse the memory (RSS after wave $WAVES within 10% of wave 1: $first_busy -> $last_busy MiB)"
    else
        verdict="**FAIL**: RSS grows wave over wave ($first_busy -> $last_busy MiB)"
    fi
    verdict="$(lost "$total" "$consumed" idle)$verdict"
    section <<EOF
## Variant idle: jobs go idle and are freed (job.idle.ms=$IDLE_MS)

Config: \`window.samples=$window job.idle.ms=$IDLE_MS\`; $WAVES waves one after the other, each
$JOBS new jobs x $RANKS ranks x $samples samples (prefix waveN); after each wave the script waits
until \`stormwatch_jobs_tracked\` is 0 (each job's summary emitted and its state freed).

| wave | events | RSS after consuming (MiB) | RSS once freed (MiB) | retained once freed | ranks once freed | summaries so far |
|---|---|---|---|---|---|---|
$(printf '%s\n' "${rows[@]}")

Events produced / consumed: $(fmt_int "$total") / $(fmt_int "$consumed"); offset resets in the daemon log: $(resets idle).
Peak RSS (VmHWM): **$(fmt_f "$(calc "$(colmax "$f" hwm_kib) / 1024")" 1) MiB**; retained max $(fmt_int "$(colmax "$f" retained)") (one wave: $JOBS x $RANKS x $window = $(fmt_int $((JOBS * RANKS * window)))).
Verdict: $verdict. (RSS does not fall back to the baseline when state is freed: glibc keeps
freed heap pages for reuse; the gauges show the engine's own state going to 0.)

\`\`\`
$(plot "$f")
\`\`\`

$(table "$f" 45)
EOF
}

# ---------------------------------------------------------------- variant: limit
run_limit() {
    local ok="jobs=4,ranks=1024,samples=800,prefix=ok"
    local wide="jobs=2,ranks=2048,samples=150,prefix=wide,storms=0,delay=200000"
    local extra="jobs=2,ranks=64,samples=600,prefix=extra,delay=200000"
    log "[limit] max.ranks.per.job=1024, max.jobs=2 per partition engine, $LIMIT_PARTS partitions"
    sw_start limit soak.limit -X "window.samples=$WINDOW" -X max.ranks.per.job=1024 -X max.jobs=2
    start_sampler limit
    load limit soak.limit "$LIMIT_PARTS" "$ok" "$wide" "$extra"
    local produced=$LOADED
    wait_until "all events consumed" 600 consumed_ge "$produced"
    sleep 3
    stop_pid "$SAMPLER_PID"
    local consumed rejects dlq_limit
    consumed=$(metric stormwatch_events_in_total)
    rejects=$(metric stormwatch_limit_rejects_total)
    dlq_limit=$({ curl -s "$SW_URL" || true; } | awk '/^stormwatch_dlq_records_total\{kind="limit"\}/ { print $NF }')
    stop_pid "$SW_PID"
    local f=$RUN/limit.tsv
    local want_rej=$((2 * 2048 * 150 + 2 * 64 * 600)) full=$((4 * 1024 * WINDOW))
    local jmax rmax smax verdict
    jmax=$(colmax "$f" jobs)
    rmax=$(colmax "$f" ranks)
    smax=$(colmax "$f" retained)
    if ((jmax <= 4 && rmax <= 4096 && smax <= full && rejects == want_rej)); then
        verdict="PASS: the limits hold (jobs <= 2 per engine x $LIMIT_PARTS, ranks <= 4 x 1024, retained <= $(fmt_int "$full")); every over-limit sample was rejected"
    else
        verdict="**FAIL**: jobs max $jmax (limit 4), ranks max $rmax (4096), retained max $smax ($full), rejects $rejects (expected $want_rej)"
    fi
    verdict="$(lost "$produced" "$consumed" limit)$verdict"
    section <<EOF
## Variant limit: input beyond max.ranks.per.job and max.jobs

Config: \`window.samples=$WINDOW max.ranks.per.job=1024 max.jobs=2\` (per partition engine);
topic soak.limit with $LIMIT_PARTS partitions. Input, interleaved (\`sw_kbench load\`; jobs go to
partitions round-robin in order of appearance):
- \`$ok\`: 4 jobs of 1024 ranks, 2 per partition: within the limits;
- \`$wide\`: 2 jobs of 2048 ranks (world_size 2048 > 1024): every sample must be rejected;
- \`$extra\`: 2 more jobs of 64 ranks, a third job on each partition: rejected by max.jobs.
The last two start after 200,000 events, so the 4 allowed jobs hold the job slots.

| measurement | value |
|---|---|
| events produced / consumed | $(fmt_int "$produced") / $(fmt_int "$consumed"); offset resets in the daemon log: $(resets limit) |
| rejected (stormwatch_limit_rejects_total) | $(fmt_int "$rejects") (expected $(fmt_int "$want_rej") = 2 x 2048 x 150 + 2 x 64 x 600); dead letters of kind limit: $(fmt_int "${dlq_limit:-0}") |
| jobs / ranks tracked, max | $jmax / $(fmt_int "$rmax") |
| retained samples, max | $(fmt_int "$smax") (4 x 1024 x $WINDOW = $(fmt_int "$full")) |
| **peak RSS** (VmHWM) | **$(fmt_f "$(calc "$(colmax "$f" hwm_kib) / 1024")" 1) MiB** |
| verdict | $verdict |

\`\`\`
$(plot "$f")
\`\`\`

$(table "$f" 30)
EOF
}

for v in $VARIANTS; do "run_$v"; done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

# ---------------------------------------------------------------- report
CPU_MODEL=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
GIT_REV=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [[ $FROM_HEAD == 1 && -z ${SW_BIN:-${BENCH_BIN:-}} ]]; then GIT_REV="$HEAD_REV (clean export of HEAD)"
elif [[ -n $(git -C "$ROOT" status --porcelain --untracked-files=no -- src include 2>/dev/null) ]]; then GIT_REV+=" (src/ or include/ modified in the work tree)"; fi
ELAPSED=$(calc "$EPOCHREALTIME - $BENCH_START")
{
    echo "# stormwatch soak (mock cluster)"
    echo
    echo "- date: $(date -Iseconds); wall time $(fmt_f "$ELAPSED" 0) s"
    echo "- machine: nproc $(nproc), $CPU_MODEL; load average before / after: $LOAD_BEFORE / $LOAD_AFTER"
    echo "- binary: ${BIN#"$ROOT"/} (stormwatch $VERSION, $BUILD_TYPE), git $GIT_REV"
    echo "- sampling: \`sw_kbench watch\` once a second: VmRSS/VmHWM from /proc/PID/status, the"
    echo "  engine gauges (retained samples, jobs, ranks, engine bytes) and counters from /metrics"
    echo "  (the daemon refreshes its gauges once a second). Raw samples: soak/<variant>.tsv."
    echo "- the mock keeps at most 5 MiB per partition and drops the oldest message sets beyond"
    echo "  that (rdkafka_mock.c, 2.0.2: max_size = 5 MiB, max_cnt = 100000 message sets), so the"
    echo "  input is produced while the daemon consumes and \`sw_kbench load\` stays at most"
    echo "  $AHEAD events (~$((AHEAD * 210 / 1000000)) MB, even if they all sit in one partition) ahead of the"
    echo "  daemon's events-in counter; \"produced = consumed\" and no \"offset reset\" in the daemon's"
    echo "  log below confirm that nothing was dropped."
    echo
    printf '%s\n\n' "${SECTIONS[@]}"
    echo "## Commands"
    echo
    echo '```'
    printf '%s\n' "${CMDS_USED[@]}" | awk '!seen[$0]++' | sed -e "s#$BOOT#BOOTSTRAP#g" -e 's#127.0.0.1:[0-9]*/metrics#127.0.0.1:PORT/metrics#g' -e 's#--pid [0-9]*#--pid PID#'
    echo '```'
} >"$RESULTS.tmp"
mv -f "$RESULTS.tmp" "$RESULTS"
cat "$RESULTS"
log "results written to $RESULTS (total $(fmt_f "$ELAPSED" 0) s)"
