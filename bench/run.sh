#!/usr/bin/env bash
# stormwatch benchmark suite. See bench/README.md.
#
#   bench/run.sh                 full run (~2 min on 2 cores incl. generating ~5.5 GB of inputs)
#   BENCH_QUICK=1 bench/run.sh   smaller inputs (~1 min), same rows
#   bench/run.sh --baseline REV  also pair every row of the baseline table with a build of REV
#
# Options:
#   --baseline REV   the revision to pair against (default: $BASELINE, else the newest tag
#                    reachable from HEAD's parent: the previous release). Built once per
#                    commit in a git worktree (cache: $BENCH_CACHE, default
#                    ${XDG_CACHE_HOME:-~/.cache}/stormwatch-bench/<commit>).
#   --no-baseline    no pairing, even when a tag exists
#   --baseline-only  only the paired table (no absolute rows)
#   --quick          as BENCH_QUICK=1
#   --pairs N        paired runs per row (default $BENCH_PAIRS, else 9; 5 with --quick);
#                    with fewer than 5 a row is not judged (its quartiles mean nothing)
# A paired row whose new/baseline CPU-time ratio has a median above
# 1 + $BENCH_NOISE (default 0.03) and a 25th percentile above 1 is "slower":
# the run then exits 1 after printing the table.
#
# Environment:
#   BENCH_REPS=N      timed repetitions per command (default 3); median + min/max reported
#   BENCH_QUICK=1     smaller inputs
#   BENCH_OUT=DIR     cache/results dir (default bench/out, git-ignored)
#   BENCH_BIN=PATH    binary to measure (default build/stormwatch, built if needed)
#   BENCH_NO_BUILD=1  do not run cmake before measuring build/stormwatch
#   BENCH_REGEN=1     regenerate the inputs even if cached (e.g. after changing gen's code)
#   BENCH_CLEAN=1     delete the generated inputs at the end (keeps results.md)
#
# Output: a Markdown report on stdout and in $BENCH_OUT/results.md; progress on stderr;
# raw per-run numbers in $BENCH_OUT/raw.tsv and $BENCH_OUT/raw/.

set -euo pipefail
export LC_ALL=C
BENCH_START=$EPOCHREALTIME

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=bench/lib.sh disable=SC1091
source "$ROOT/bench/lib.sh"
trap 'die "unexpected failure at bench/run.sh line $LINENO: $BASH_COMMAND"' ERR

BASE_ARG="" BASE_MODE=auto PAIRS=${BENCH_PAIRS:-}
while (($#)); do
    case $1 in
    --baseline) BASE_ARG=${2:?--baseline needs a revision}; BASE_MODE=on; shift 2 ;;
    --baseline=*) BASE_ARG=${1#*=}; BASE_MODE=on; shift ;;
    --no-baseline) BASE_MODE=off; shift ;;
    --baseline-only) BASE_MODE=only; shift ;;
    --quick) BENCH_QUICK=1; shift ;;
    --pairs) PAIRS=${2:?--pairs needs a number}; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see bench/run.sh --help)" ;;
    esac
done
REPS=${BENCH_REPS:-3}
[[ $REPS =~ ^[1-9][0-9]*$ ]] || die "BENCH_REPS must be a positive integer (got '$REPS')"
QUICK=${BENCH_QUICK:-0}
[[ $QUICK == 0 || $QUICK == 1 ]] || die "BENCH_QUICK must be 0 or 1"
OUT=${BENCH_OUT:-$ROOT/bench/out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
IN=$OUT/inputs
RAW_DIR=$OUT/raw
RAW_TSV=$OUT/raw.tsv
RESULTS=$OUT/results.md
WINDOW=512          # --window-samples of every replay run
TARGET_EVS=2000000  # events/s per core, analyze and replay on JSONL (issue 27; 1.5 M in issue 15)
TARGET_BPS=64       # bytes of engine state per retained sample
TARGET_RATIO=0.60   # 4096-rank throughput / 16-rank throughput (issue 15)

for tool in /usr/bin/time gzip zcat cat awk sort sed grep wc stat df; do
    command -v "$tool" >/dev/null || die "missing tool: $tool"
done

# One benchmark at a time: two concurrent runs would measure each other.
if command -v flock >/dev/null; then
    exec 9>"$OUT/.lock"
    flock -n 9 || die "another bench/run.sh is running on $OUT"
fi

# ---------------------------------------------------------------- binary
BIN=${BENCH_BIN:-$ROOT/build/stormwatch}
BUILD_TYPE=unknown
if [[ -z ${BENCH_BIN:-} ]]; then
    if [[ ${BENCH_NO_BUILD:-0} != 1 ]]; then
        if [[ ! -f build/CMakeCache.txt ]]; then
            log "configuring build/ (RelWithDebInfo)"
            cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >&2
        fi
        log "building build/stormwatch"
        cmake --build build -j2 --target stormwatch >&2
    fi
    if [[ -f build/CMakeCache.txt ]]; then
        BUILD_TYPE=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' build/CMakeCache.txt)
        SANITIZE=$(sed -n 's/^SW_SANITIZE:[A-Z]*=//p' build/CMakeCache.txt)
        [[ ${SANITIZE:-OFF} == ON ]] && BUILD_TYPE+=" + SW_SANITIZE=ON"
    fi
fi
[[ -x $BIN ]] || die "no binary at $BIN (build it: cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo && cmake --build build -j2)"
VERSION=$("$BIN" --version | awk '{ print $NF }')

# ---------------------------------------------------------------- baseline
BASE_REV="" BASE_BIN="" BASE_COMMIT=""
if [[ $BASE_MODE != off ]]; then
    BASE_REV=$(baseline_rev "$BASE_ARG")
    if [[ -z $BASE_REV && $BASE_MODE != auto ]]; then
        die "no baseline: give --baseline REV or BASELINE=REV (no release tag is reachable from HEAD^)"
    fi
    [[ -n $BASE_REV ]] && baseline_build "$BASE_REV"
fi
[[ $BASE_MODE == only && -z $BASE_BIN ]] && die "--baseline-only without a baseline"

# ---------------------------------------------------------------- parameters
RANKS_BIG=4096
RANKS_SMALL=16
if [[ $QUICK == 1 ]]; then
    MODE=quick
    T_RANKS=1024; T_SAMPLES=400;  T_EXTRA="--storm-at 0.25"
    S_SAMPLES_BIG=600; S_EXTRA="--storm-at 0.1 --spread-ms 50"
else
    MODE=full
    T_RANKS=1024; T_SAMPLES=1000; T_EXTRA=""
    S_SAMPLES_BIG=1000; S_EXTRA="--storm-at 0.1"
fi
S_SAMPLES_SMALL=$((RANKS_BIG * S_SAMPLES_BIG / RANKS_SMALL))   # same total events
T_ARGS="--ranks $T_RANKS --samples $T_SAMPLES${T_EXTRA:+ $T_EXTRA}"
BIG_ARGS="--ranks $RANKS_BIG --samples $S_SAMPLES_BIG $S_EXTRA"
SMALL_ARGS="--ranks $RANKS_SMALL --samples $S_SAMPLES_SMALL $S_EXTRA"
BASE_ARGS="--ranks 8 --samples 64 --storms 0"
WIDE_ARGS="--ranks 131072 --samples 4 --storms 0"   # a wide job that has just started

# Cache file name keyed by generator version and options.
input_path() {
    local key
    key=$(printf '%s' "$1" | sed -e 's/^--//' -e 's/ --/_/g' -e 's/ //g' -e 's/[^A-Za-z0-9._-]/_/g')
    printf '%s/sw%s_%s.jsonl' "$IN" "$VERSION" "$key"
}
T_FILE=$(input_path "$T_ARGS")
T_GZ=$T_FILE.gz1.gz
BIG_FILE=$(input_path "$BIG_ARGS")
SMALL_FILE=$(input_path "$SMALL_ARGS")
BASE_FILE=$(input_path "$BASE_ARGS")
WIDE_FILE=$(input_path "$WIDE_ARGS")

# ---------------------------------------------------------------- inputs
mkdir -p "$IN"
WANTED=("$T_FILE" "$T_GZ" "$BIG_FILE" "$SMALL_FILE" "$BASE_FILE" "$WIDE_FILE")
# Prune inputs this run does not use (old options, other mode, leftovers of an
# interrupted run) so the cache never holds more than one run's inputs.
for f in "$IN"/*; do
    [[ -e $f ]] || continue
    keep=0
    for w in "${WANTED[@]}"; do [[ $f == "$w" || $f == "$w.meta" ]] && keep=1; done
    if [[ $keep == 0 || ${BENCH_REGEN:-0} == 1 ]]; then
        log "removing cached input $(basename "$f")"
        rm -f -- "$f"
    fi
done

# Disk check: ~650 bytes per event for the plain files, +15% for the gzip copy.
need=0
for a in "$T_ARGS" "$BIG_ARGS" "$SMALL_ARGS"; do
    f=$(input_path "$a")
    [[ -s $f ]] && continue
    ev=$(awk -v s="$a" 'BEGIN { n = split(s, w, " "); for (i = 1; i < n; i++) { if (w[i] == "--ranks") r = w[i+1]; if (w[i] == "--samples") m = w[i+1] } print r * m }')
    need=$((need + ev * 650))
done
[[ -s $T_GZ ]] || need=$((need + T_RANKS * T_SAMPLES * 100))
avail=$(df -B1 --output=avail "$IN" | tail -n 1 | tr -d ' ')
if ((need > 0)); then
    log "need ~$((need / 1000000)) MB for new inputs, $((avail / 1000000)) MB available in $IN"
    ((avail > need + 500000000)) || die "not enough disk space in $IN (need ~$((need / 1000000)) MB + 500 MB margin)"
fi

# meta files: "events bytes" of each input
gen_input() {  # gen_input ARGS FILE
    local args=$1 f=$2
    # shellcheck disable=SC2086
    note_cmd "$BIN" gen $args -o "$f"
    if [[ -s $f && -s $f.meta ]]; then
        log "cached: $(basename "$f")"
        return 0
    fi
    log "generating $(basename "$f")"
    # shellcheck disable=SC2086
    "$BIN" gen $args --quiet -o "$f.tmp" || die "gen $args failed"
    mv -f "$f.tmp" "$f"
    printf '%s %s\n' "$(wc -l <"$f")" "$(stat -c %s "$f")" >"$f.meta"
}
gen_input "$T_ARGS" "$T_FILE"
note_cmd gzip -1 -c "$T_FILE" ">" "$T_GZ"
if [[ -s $T_GZ && -s $T_GZ.meta ]]; then
    log "cached: $(basename "$T_GZ")"
else
    log "compressing $(basename "$T_FILE") with gzip -1"
    gzip -1 -c "$T_FILE" >"$T_GZ.tmp"
    mv -f "$T_GZ.tmp" "$T_GZ"
    printf '%s %s\n' "$(awk '{ print $1 }' "$T_FILE.meta")" "$(stat -c %s "$T_GZ")" >"$T_GZ.meta"
fi
gen_input "$BIG_ARGS" "$BIG_FILE"
gen_input "$SMALL_ARGS" "$SMALL_FILE"
gen_input "$BASE_ARGS" "$BASE_FILE"
gen_input "$WIDE_ARGS" "$WIDE_FILE"

meta() { awk -v k="$2" '{ print (k == "events") ? $1 : $2 }' "$1.meta"; }
T_EVENTS=$(meta "$T_FILE" events);       T_BYTES=$(meta "$T_FILE" bytes)
GZ_BYTES=$(meta "$T_GZ" bytes)
BIG_EVENTS=$(meta "$BIG_FILE" events);   BIG_BYTES=$(meta "$BIG_FILE" bytes)
SMALL_EVENTS=$(meta "$SMALL_FILE" events); SMALL_BYTES=$(meta "$SMALL_FILE" bytes)
BASE_EVENTS=$(meta "$BASE_FILE" events)
WIDE_EVENTS=$(meta "$WIDE_FILE" events)

# Warm the page cache so that the first repetition is not a disk benchmark.
log "warming the page cache"
for f in "${WANTED[@]}"; do cat "$f" >/dev/null; done

# ---------------------------------------------------------------- measurements
rm -rf "$RAW_DIR"
mkdir -p "$RAW_DIR"
: >"$RAW_TSV"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)

# ---------------------------------------------------------------- paired with the baseline
# Every row: the same command by both binaries, PAIRS pairs, whole-process
# CPU time. Sets PAIR_FAIL=1 when a row is slower beyond the noise.
PAIR_TSV=$OUT/pairs.tsv
PAIR_MD=$OUT/baseline.md
PAIR_FAIL=0
paired_table() {
    local pairs=${PAIRS:-$([[ $QUICK == 1 ]] && echo 5 || echo 9)}
    [[ $pairs =~ ^[1-9][0-9]*$ ]] || die "--pairs/BENCH_PAIRS must be a positive integer (got '$pairs')"
    : >"$PAIR_TSV"
    local R=(replay --window-samples "$WINDOW") A=(analyze --format json --compact)
    local base_ver
    base_ver=$("$BASE_BIN" --version | awk '{ print $NF }')
    log "[baseline] $pairs pairs a row against $BASE_REV ($base_ver, ${BASE_COMMIT:0:12})"
    # id | shape | file | events | description | args
    local -a rows=(
        "replay_file|file|$T_FILE|$T_EVENTS|\`replay\` JSONL file, $T_RANKS ranks"
        "analyze_file|file|$T_FILE|$T_EVENTS|\`analyze\` JSONL file, $T_RANKS ranks"
        "replay_stdin|stdin|$T_FILE|$T_EVENTS|\`replay -\` JSONL, stdin redirected from the file"
        "replay_pipe|pipe|$T_FILE|$T_EVENTS|\`cat f \| replay -\` JSONL through a pipe"
        "replay_gz|file|$T_GZ|$T_EVENTS|\`replay\` gzip file"
        "analyze_gz|file|$T_GZ|$T_EVENTS|\`analyze\` gzip file"
        "replay_gz_pipe|pipe|$T_GZ|$T_EVENTS|\`cat f.gz \| replay -\` gzip through a pipe"
        "replay_small|file|$SMALL_FILE|$SMALL_EVENTS|\`replay\` $RANKS_SMALL ranks x $(fmt_int "$S_SAMPLES_SMALL")"
        "replay_big|file|$BIG_FILE|$BIG_EVENTS|\`replay\` $RANKS_BIG ranks x $(fmt_int "$S_SAMPLES_BIG")"
        "replay_wide|file|$WIDE_FILE|$WIDE_EVENTS|\`replay\` 131,072 ranks x 4"
    )
    local r id shape f ev desc
    for r in "${rows[@]}"; do
        IFS='|' read -r id shape f ev desc <<<"$r"
        case $id in
        analyze*) pair_row "$id" "$pairs" "$shape" "$f" "${A[@]}" ;;
        *) pair_row "$id" "$pairs" "$shape" "$f" "${R[@]}" ;;
        esac
    done
    {
        echo "## Against the baseline $BASE_REV (stormwatch $base_ver, ${BASE_COMMIT:0:12}): CPU time, $pairs pairs a row"
        echo
        echo "| row | events | new CPU s (median) | baseline CPU s (median) | new / baseline (median [p25-p75]) | new ev/CPU-s | same output | verdict |"
        echo "|---|---|---|---|---|---|---|---|"
        local nm bm rm q1 q3 n v
        for r in "${rows[@]}"; do
            IFS='|' read -r id shape f ev desc <<<"$r"
            read -r nm bm rm q1 q3 n < <(pair_stats "$id")
            v=$(pair_verdict "$rm" "$q1" "$q3")
            if [[ $v == slower && $n -lt 5 ]]; then
                v="slower? (not judged: fewer than 5 pairs)"
            elif [[ $v == slower ]]; then
                PAIR_FAIL=1
                v="**SLOWER**"
            fi
            printf '| %s | %s | %s | %s | **%s** [%s-%s] | %s | %s | %s |\n' "$desc" "$(fmt_int "$ev")" \
                "$nm" "$bm" "$(fmt_f "$rm" 3)" "$(fmt_f "$q1" 3)" "$(fmt_f "$q3" 3)" \
                "$(fmt_si "$(calc "$ev / ($nm > 0 ? $nm : 1e-9)")")" "${PAIR_SAME[$id]}" "$v"
        done
        echo
        echo "CPU = user + sys seconds of the stormwatch process (a pipe's \`cat\` not counted), the"
        echo "two binaries run in turn (A B, B A, ...); the ratio is taken pair by pair. A row is"
        echo "slower when the ratio's median exceeds $(fmt_f "$(calc "1 + ${BENCH_NOISE:-0.03}")" 2) and its 25th percentile"
        echo "exceeds 1 (three pairs in four slower); \"same output\": the first pair's outputs are"
        echo "byte-identical. Baseline binary: ${BASE_BIN}."
    } >"$PAIR_MD"
}

if [[ $BASE_MODE == only ]]; then
    rm -rf "$RAW_DIR"
    mkdir -p "$RAW_DIR"
    paired_table
    cat "$PAIR_MD"
    log "paired table written to $PAIR_MD (total $(fmt_f "$(calc "$EPOCHREALTIME - $BENCH_START")" 0) s)"
    if [[ $PAIR_FAIL == 1 ]]; then
        echo "bench: a row is slower than the baseline $BASE_REV beyond the noise (see above)" >&2
        exit 1
    fi
    exit 0
fi

REPLAY=("$BIN" replay --window-samples "$WINDOW" --stats)
log "[1/2] throughput on $(fmt_int "$T_EVENTS") events, 1024 ranks, plain and gzip ($REPS reps)"
for ((r = 1; r <= REPS; r++)); do
    run_timed cat_plain "$r" cat "$T_FILE"
    run_timed analyze_plain "$r" "$BIN" analyze "$T_FILE"
    run_timed replay_plain "$r" "${REPLAY[@]}" "$T_FILE"
    run_timed zcat_gz "$r" zcat "$T_GZ"
    run_timed analyze_gz "$r" "$BIN" analyze "$T_GZ"
    run_timed replay_gz "$r" "${REPLAY[@]}" "$T_GZ"
done

log "[2/2] memory and rank scaling: $RANKS_SMALL vs $RANKS_BIG ranks, $(fmt_int "$BIG_EVENTS") events each ($REPS reps)"
for ((r = 1; r <= REPS; r++)); do
    run_timed replay_base "$r" "${REPLAY[@]}" "$BASE_FILE"
    run_timed replay_small "$r" "${REPLAY[@]}" "$SMALL_FILE"
    run_timed replay_big "$r" "${REPLAY[@]}" "$BIG_FILE"
    run_timed replay_wide "$r" "${REPLAY[@]}" "$WIDE_FILE"
done
if [[ -n $BASE_BIN ]]; then
    paired_table
fi
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

# ---------------------------------------------------------------- crunching
declare -a ROWS=() NOTES=()
row() { ROWS+=("| $1 | $2 | $3 | $4 |"); }

# stats_check ID EVENTS: replay --stats must have seen every event, in every rep
stats_check() {
    local id=$1 ev=$2 r got
    for ((r = 1; r <= REPS; r++)); do
        got=$(json_num "$RAW_DIR/$id.$r.err" events)
        [[ $got == "$ev" ]] || NOTES+=("WARNING: $id rep $r: replay --stats counted $got events, the file has $ev")
    done
}

# rate_cell ID EVENTS BYTES [UNCOMPRESSED_BYTES] -> sets EVS (median events/s), MED (median wall s) and CELL
rate_cell() {
    local id=$1 ev=$2 bytes=$3 ubytes=${4:-}
    local med lo hi cpu
    read -r med lo hi < <(values "$id" 3 | stat3)
    read -r cpu _ _ < <(values "$id" 7 | stat3)
    EVS=$(calc "$ev / $med")
    MED=$med
    local mbs
    if [[ -n $ubytes ]]; then
        mbs="$(fmt_f "$(calc "$ubytes / $med / 1e6")" 0) MB/s uncompressed, $(fmt_f "$(calc "$bytes / $med / 1e6")" 0) MB/s compressed"
    else
        mbs="$(fmt_f "$(calc "$bytes / $med / 1e6")" 0) MB/s"
    fi
    CELL="**$(fmt_si "$EVS" "ev/s")**, $mbs (min-max $(fmt_si "$(calc "$ev / $hi")")-$(fmt_si "$(calc "$ev / $lo")" "ev/s"); wall $(fmt_f "$med" 2) s, CPU $(fmt_f "$cpu" 2) s = $(fmt_si "$(calc "$ev / $cpu")" "ev/CPU-s"))"
}
# ref_cell ID LINES BYTES [UNCOMPRESSED_BYTES] -> CELL for cat/zcat (MB/s first)
ref_cell() {
    local id=$1 ev=$2 bytes=$3 ubytes=${4:-}
    local med lo hi ub=${4:-$3}
    read -r med lo hi < <(values "$id" 3 | stat3)
    CELL="**$(fmt_f "$(calc "$ub / $med / 1e6")" 0) MB/s**${ubytes:+ uncompressed ($(fmt_f "$(calc "$bytes / $med / 1e6")" 0) MB/s compressed)} = $(fmt_si "$(calc "$ev / $med")" "lines/s") (min-max $(fmt_f "$(calc "$ub / $hi / 1e6")" 0)-$(fmt_f "$(calc "$ub / $lo / 1e6")" 0) MB/s; wall $(fmt_f "$med" 3) s)"
}
rss_med() { values "$1" 6 | stat3; }   # KiB: median min max

# --- 1. throughput
T_DESC="$(fmt_int "$T_EVENTS") events, $T_RANKS ranks, $(fmt_f "$(calc "$T_BYTES / 1e6")" 0) MB"
GZ_DESC="$(fmt_f "$(calc "$GZ_BYTES / 1e6")" 0) MB gzip -1 of the same"
stats_check replay_plain "$T_EVENTS"
stats_check replay_gz "$T_EVENTS"

ref_cell cat_plain "$T_EVENTS" "$T_BYTES"
row "1. \`cat\` JSONL ($T_DESC) - I/O floor" "$CELL" "reference" "-"
rate_cell analyze_plain "$T_EVENTS" "$T_BYTES"
row "1. \`analyze\` JSONL" "$CELL" ">= 2 M ev/s/core" "$(verdict_min "$EVS" "$TARGET_EVS")"
rate_cell replay_plain "$T_EVENTS" "$T_BYTES"
row "1. \`replay\` JSONL" "$CELL" ">= 2 M ev/s/core" "$(verdict_min "$EVS" "$TARGET_EVS")"
ref_cell zcat_gz "$T_EVENTS" "$GZ_BYTES" "$T_BYTES"
row "1. \`zcat\` JSONL.gz ($GZ_DESC) - I/O floor" "$CELL" "reference" "-"
read -r ZCAT_MED _ _ < <(values zcat_gz 3 | stat3)
# gz_verdict: the median wall time against zcat's of the same run
gz_verdict() {
    local ratio
    ratio=$(calc "$MED / $ZCAT_MED")
    echo "wall $(fmt_f "$ratio" 2) x zcat's ($(awk -v r="$ratio" 'BEGIN { print (r <= 1.10) ? "within 10%" : "**more than 10% above**" }')); $(fmt_f "$(calc "$EVS / $TARGET_EVS * 100")" 0)% of the JSONL target"
}
rate_cell analyze_gz "$T_EVENTS" "$GZ_BYTES" "$T_BYTES"
row "1. \`analyze\` JSONL.gz" "$CELL" "wall within 10% of \`zcat\`'s (info)" "info: $(gz_verdict)"
rate_cell replay_gz "$T_EVENTS" "$GZ_BYTES" "$T_BYTES"
row "1. \`replay\` JSONL.gz" "$CELL" "wall within 10% of \`zcat\`'s (info)" "info: $(gz_verdict)"
read -r a_rss a_lo a_hi < <(rss_med analyze_plain)
row "1. max RSS of \`analyze\` JSONL (batch keeps the whole input's samples)" \
    "$(fmt_f "$(calc "$a_rss / 1024")" 1) MiB (min-max $(fmt_f "$(calc "$a_lo / 1024")" 1)-$(fmt_f "$(calc "$a_hi / 1024")" 1))" "none (info)" "info"

# --- 2. memory
stats_check replay_small "$SMALL_EVENTS"
stats_check replay_big "$BIG_EVENTS"
stats_check replay_base "$BASE_EVENTS"
ERR_BIG=$RAW_DIR/replay_big.1.err
RETAINED=$(json_num "$ERR_BIG" retained_samples)
ENGINE_BYTES=$(json_num "$ERR_BIG" engine_bytes)
PEAK_BYTES=$(json_num "$ERR_BIG" peak_engine_bytes)
BPS=$(json_num "$ERR_BIG" bytes_per_retained_sample)
for ((r = 2; r <= REPS; r++)); do
    [[ $(json_num "$RAW_DIR/replay_big.$r.err" engine_bytes) == "$ENGINE_BYTES" ]] ||
        NOTES+=("WARNING: engine_bytes differs between repetitions of the $RANKS_BIG-rank replay")
done
FULL_BIG=$((RANKS_BIG * WINDOW))
RETAINED_SMALL=$(json_num "$RAW_DIR/replay_small.1.err" retained_samples)
FULL_SMALL=$((RANKS_SMALL * WINDOW))
full_note() { if [[ $1 == "$2" ]]; then echo "windows full: yes, $(fmt_int "$1") retained"; else echo "**windows NOT full: $(fmt_int "$1") retained, expected $(fmt_int "$2")**"; fi; }
read -r b_rss b_lo b_hi < <(rss_med replay_big)
read -r base_rss base_lo base_hi < <(rss_med replay_base)
BIG_DESC="$RANKS_BIG ranks x $WINDOW-sample windows, $(fmt_int "$BIG_EVENTS") events"
row "2. max RSS of \`replay\`, $BIG_DESC" \
    "$(fmt_f "$(calc "$b_rss / 1024")" 1) MiB (min-max $(fmt_f "$(calc "$b_lo / 1024")" 1)-$(fmt_f "$(calc "$b_hi / 1024")" 1)); $(full_note "$RETAINED" "$FULL_BIG")" \
    "none (info)" "info"
if [[ $RETAINED == "$FULL_BIG" ]]; then VALID=1; else VALID=0; fi
v() { if [[ $VALID == 1 ]]; then "$@"; else echo "INVALID (windows not full)"; fi; }
row "2. engine bytes per retained sample (\`--stats\` bytes_per_retained_sample)" \
    "**$BPS B** (engine_bytes $(fmt_int "$ENGINE_BYTES") / $(fmt_int "$RETAINED") samples)" "<= $TARGET_BPS B" "$(v verdict_max "$BPS" "$TARGET_BPS")"
PEAK_BPS=$(calc "$PEAK_BYTES / $RETAINED")
row "2. peak engine bytes per retained sample (peak_engine_bytes / retained)" \
    "$(fmt_f "$PEAK_BPS" 1) B (peak $(fmt_int "$PEAK_BYTES"))" "<= $TARGET_BPS B (same target at the peak)" "$(v verdict_max "$PEAK_BPS" "$TARGET_BPS")"
row "2. baseline max RSS of \`replay\` on a tiny file ($BASE_EVENTS events, 8 ranks)" \
    "$(fmt_f "$(calc "$base_rss / 1024")" 1) MiB (min-max $(fmt_f "$(calc "$base_lo / 1024")" 1)-$(fmt_f "$(calc "$base_hi / 1024")" 1))" "none (info)" "info"
RSS_BPS=$(calc "($b_rss - $base_rss) * 1024 / $RETAINED")
row "2. (max RSS - baseline) per retained sample, whole process" \
    "$(fmt_f "$RSS_BPS" 1) B ($(fmt_f "$(calc "($b_rss - $base_rss) / 1024")" 1) MiB / $(fmt_int "$RETAINED"))" "<= $TARGET_BPS B (cross-check)" "$(v verdict_max "$RSS_BPS" "$TARGET_BPS")"

stats_check replay_wide "$WIDE_EVENTS"
read -r w_rss w_lo w_hi < <(rss_med replay_wide)
W_BYTES=$(json_num "$RAW_DIR/replay_wide.1.err" engine_bytes)
W_RET=$(json_num "$RAW_DIR/replay_wide.1.err" retained_samples)
W_RANKS=$(json_num "$RAW_DIR/replay_wide.1.err" ranks)
W_BPS=$(json_num "$RAW_DIR/replay_wide.1.err" bytes_per_retained_sample)
row "2. a wide job just started: 131,072 ranks x 4 samples ($(fmt_int "$WIDE_EVENTS") events, windows of $WINDOW)" \
    "**$W_BPS B** per retained sample, $(fmt_f "$(calc "$W_BYTES / $W_RANKS")" 0) B per rank (engine_bytes $(fmt_int "$W_BYTES") / $(fmt_int "$W_RET") samples); max RSS $(fmt_f "$(calc "$w_rss / 1024")" 1) MiB" \
    "windows sized by the samples held (issue 16: ~100 B a sample + a per-rank constant)" "info"

# --- 3. rank scaling
rate_cell replay_small "$SMALL_EVENTS" "$SMALL_BYTES"; EVS_SMALL=$EVS
row "3. \`replay\` $RANKS_SMALL ranks x $(fmt_int "$S_SAMPLES_SMALL") samples ($(fmt_int "$SMALL_EVENTS") events)" \
    "$CELL; $(full_note "$RETAINED_SMALL" "$FULL_SMALL")" "none (info)" "info"
rate_cell replay_big "$BIG_EVENTS" "$BIG_BYTES"; EVS_BIG=$EVS
row "3. \`replay\` $RANKS_BIG ranks x $(fmt_int "$S_SAMPLES_BIG") samples ($(fmt_int "$BIG_EVENTS") events)" \
    "$CELL; $(full_note "$RETAINED" "$FULL_BIG")" "none (info)" "info"
read -r _ s_lo s_hi < <(values replay_small 3 | stat3)
read -r _ g_lo g_hi < <(values replay_big 3 | stat3)
RATIO=$(calc "$EVS_BIG / $EVS_SMALL")
# worst/best pairing of the repetitions (ev counts are equal, so a ratio of walls)
RATIO_LO=$(calc "$s_lo / $g_hi"); RATIO_HI=$(calc "$s_hi / $g_lo")
if [[ $RETAINED_SMALL == "$FULL_SMALL" && $VALID == 1 ]]; then
    RV=$(verdict_min "$RATIO" "$TARGET_RATIO")
else
    RV="INVALID (windows not full)"
fi
row "3. throughput ratio $RANKS_BIG / $RANKS_SMALL ranks (same event count)" \
    "**$(fmt_f "$RATIO" 2)** (worst-best pairing $(fmt_f "$RATIO_LO" 2)-$(fmt_f "$RATIO_HI" 2)); per-event cost x$(fmt_f "$(calc "1 / $RATIO")" 2) at $RANKS_BIG ranks" \
    ">= $TARGET_RATIO" "$RV"

# ---------------------------------------------------------------- report
CPU_MODEL=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
MEM_TOTAL=$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
GIT_REV=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [[ -n $(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null) ]]; then GIT_REV+=" (uncommitted changes)"; fi
CC_NAME=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' build/CMakeCache.txt 2>/dev/null || true)
CC_VER=$( { [[ -n $CC_NAME ]] && "$CC_NAME" --version 2>/dev/null | head -n 1; } || echo unknown)
ELAPSED=$(calc "$EPOCHREALTIME - $BENCH_START")
share_full() { calc "($1 > $WINDOW) ? ($1 - $WINDOW) / $1 * 100 : 0"; }

{
    echo "# stormwatch benchmark ($MODE, $REPS reps, median [min-max])"
    echo
    echo "- date: $(date -Iseconds)"
    echo "- machine: nproc $(nproc), $CPU_MODEL, $MEM_TOTAL RAM, Linux $(uname -r)"
    echo "- load average before / after: $LOAD_BEFORE / $LOAD_AFTER"
    echo "- binary: ${BIN#"$ROOT"/} (stormwatch $VERSION, build type $BUILD_TYPE, $CC_VER), git $GIT_REV"
    echo "- bench wall time: $(fmt_f "$ELAPSED" 0) s"
    echo
    echo "| measurement | value | target | verdict |"
    echo "|---|---|---|---|"
    printf '%s\n' "${ROWS[@]}"
    echo
    echo "Rates are events / wall seconds of one process (the commands are single-threaded, so"
    echo "this is the per-core rate, except that a .gz input is inflated by a second thread: its"
    echo "CPU may exceed its wall time); MB = 10^6 bytes of input per wall second. \"min-max\" is the"
    echo "spread over the $REPS repetitions; CPU = user+sys seconds (median), ev/CPU-s = events per"
    echo "CPU second (less sensitive to a busy machine than wall time). The VM is noisy"
    echo "(+-30% run to run): look at the spread before trusting a verdict near its target."
    if [[ $BUILD_TYPE != RelWithDebInfo && $BUILD_TYPE != Release ]]; then
        echo
        echo "WARNING: build type is '$BUILD_TYPE', not RelWithDebInfo/Release; numbers are not representative."
    fi
    if awk -v l="${LOAD_BEFORE%% *}" 'BEGIN { exit !(l > 0.5) }'; then
        echo
        echo "WARNING: 1-minute load average was ${LOAD_BEFORE%% *} before the run; the machine was not idle."
    fi
    for n in "${NOTES[@]}"; do echo; echo "$n"; done
    echo
    echo "## Inputs (cache: ${IN#"$ROOT"/})"
    echo
    echo "| file | gen options | events | bytes | share of events arriving at a full $WINDOW-sample window |"
    echo "|---|---|---|---|---|"
    echo "| $(basename "$T_FILE") | $T_ARGS | $(fmt_int "$T_EVENTS") | $(fmt_int "$T_BYTES") | $(fmt_f "$(share_full "$T_SAMPLES")" 1)% |"
    echo "| $(basename "$T_GZ") | gzip -1 of the above | $(fmt_int "$T_EVENTS") | $(fmt_int "$GZ_BYTES") (uncompressed $(fmt_int "$T_BYTES")) | same |"
    echo "| $(basename "$SMALL_FILE") | $SMALL_ARGS | $(fmt_int "$SMALL_EVENTS") | $(fmt_int "$SMALL_BYTES") | $(fmt_f "$(share_full "$S_SAMPLES_SMALL")" 1)% |"
    echo "| $(basename "$BIG_FILE") | $BIG_ARGS | $(fmt_int "$BIG_EVENTS") | $(fmt_int "$BIG_BYTES") | $(fmt_f "$(share_full "$S_SAMPLES_BIG")" 1)% |"
    echo "| $(basename "$BASE_FILE") | $BASE_ARGS | $(fmt_int "$BASE_EVENTS") | - | baseline only |"
    echo
    echo "## Commands"
    echo
    echo "Each timed command ran as \`/usr/bin/time -v -o FILE CMD >/dev/null 2>ERR\`, wall time from"
    echo "bash \$EPOCHREALTIME around it; repetitions interleave the commands (rep 1 of all, rep 2 ...)."
    echo "Inputs were read once (\`cat FILE >/dev/null\`) before timing so they come from the page cache."
    echo
    echo '```'
    printf '%s\n' "${CMDS_USED[@]}"
    echo '```'
    echo
    if [[ -n $BASE_BIN ]]; then
        cat "$PAIR_MD"
    else
        echo "No baseline: no release tag is reachable from HEAD^ and none was given"
        echo "(bench/run.sh --baseline REV, or BASELINE=REV make bench)."
    fi
} >"$RESULTS.tmp"
mv -f "$RESULTS.tmp" "$RESULTS"
cat "$RESULTS"

if [[ ${BENCH_CLEAN:-0} == 1 ]]; then
    log "BENCH_CLEAN=1: removing generated inputs in $IN"
    rm -rf -- "$IN"
else
    log "inputs kept in $IN ($(du -sh "$IN" | cut -f1)); BENCH_CLEAN=1 removes them after a run"
fi
log "results written to $RESULTS (total $(fmt_f "$(calc "$EPOCHREALTIME - $BENCH_START")" 0) s)"
if [[ $PAIR_FAIL == 1 ]]; then
    echo "bench: a row is slower than the baseline $BASE_REV beyond the noise (see the table)" >&2
    exit 1
fi
