# shellcheck shell=bash
# Helpers for bench/run.sh (sourced, not executed).
#
# Conventions:
#   - every timed run appends one line to $RAW_TSV:
#       id <TAB> rep <TAB> wall_s <TAB> user_s <TAB> sys_s <TAB> maxrss_kib
#   - the run's stderr (e.g. replay --stats JSON) is kept in $RAW_DIR/<id>.<rep>.err
#   - numbers are crunched with sort/awk (mawk-compatible); no gawk-only features.

log() { printf '[bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf 'bench: error: %s\n' "$*" >&2; exit 1; }

# Print a command line as it could be pasted into a shell (relative to repo root).
quote_cmd() {
    local out="" a
    for a in "$@"; do
        a=${a#"$ROOT"/}
        if [[ $a == ">" || $a =~ ^[A-Za-z0-9_./=:,+-]+$ ]]; then out+="$a "; else out+="$(printf '%q' "$a") "; fi
    done
    printf '%s' "${out% }"
}

# Record a command in the "commands used" list (deduplicated, in order).
declare -a CMDS_USED=()
note_cmd() {
    local c; c=$(quote_cmd "$@")
    local x
    for x in "${CMDS_USED[@]}"; do [[ $x == "$c" ]] && return 0; done
    CMDS_USED+=("$c")
}

# run_timed ID REP CMD...   (stdout of CMD goes to /dev/null)
# Wall time from bash's $EPOCHREALTIME (microseconds), user/sys/max RSS from
# /usr/bin/time -v. Aborts the benchmark if CMD fails.
run_timed() {
    local id=$1 rep=$2; shift 2
    local tf="$RAW_DIR/$id.$rep.time" ef="$RAW_DIR/$id.$rep.err"
    note_cmd "$@"
    local t0 t1 rc
    t0=$EPOCHREALTIME
    if /usr/bin/time -v -o "$tf" "$@" >/dev/null 2>"$ef"; then rc=0; else rc=$?; fi
    t1=$EPOCHREALTIME
    if [[ $rc -ne 0 ]]; then
        cat "$ef" >&2
        die "command failed (exit $rc): $(quote_cmd "$@")"
    fi
    local user sys rss
    user=$(sed -n 's/^[[:space:]]*User time (seconds): //p' "$tf")
    sys=$(sed -n 's/^[[:space:]]*System time (seconds): //p' "$tf")
    rss=$(sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): //p' "$tf")
    local wall
    wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$id" "$rep" "$wall" "${user:-0}" "${sys:-0}" "${rss:-0}" >>"$RAW_TSV"
    log "  $id rep $rep: ${wall}s wall, ${user}s user, ${sys}s sys, ${rss} KiB max RSS"
}

# values ID COLUMN -> one value per line (column: 3 wall, 4 user, 5 sys, 6 rss,
# 7 = user+sys)
values() {
    local id=$1 col=$2
    awk -F'\t' -v id="$id" -v c="$col" '$1 == id { if (c == 7) print $4 + $5; else print $c }' "$RAW_TSV"
}

# stat3: reads numbers on stdin, prints "median min max" (nan if none).
stat3() {
    sort -g | awk '{ a[NR] = $1 }
        END {
            if (NR == 0) { print "nan nan nan"; exit }
            if (NR % 2) m = a[(NR + 1) / 2]; else m = (a[NR / 2] + a[NR / 2 + 1]) / 2
            printf "%.6f %.6f %.6f\n", m, a[1], a[NR]
        }'
}

# calc EXPR -> floating point result of an awk expression
calc() { awk "BEGIN { printf \"%.6f\", ($1) }"; }

# fmt_si N [UNIT] -> "1.02 M", "791 k ev/s" ...
fmt_si() {
    awk -v n="$1" -v u="${2:-}" 'BEGIN {
        a = n < 0 ? -n : n
        if (a >= 1e9)      s = sprintf("%.2f G", n / 1e9)
        else if (a >= 1e6) s = sprintf("%.2f M", n / 1e6)
        else if (a >= 1e3) s = sprintf("%.0f k", n / 1e3)
        else               s = sprintf("%.0f", n)
        print (u == "") ? s : s " " u
    }'
}
fmt_f() { awk -v n="$1" -v d="${2:-1}" 'BEGIN { printf "%.*f", d, n }'; }
fmt_int() { awk -v n="$1" 'BEGIN { s = sprintf("%.0f", n); o = ""; while (length(s) > 3) { o = "," substr(s, length(s) - 2) o; s = substr(s, 1, length(s) - 3) } print s o }'; }

# json_num FILE KEY -> the number after "KEY": in the last JSON object line of FILE
json_num() {
    grep '^{' "$1" | tail -n 1 | grep -o "\"$2\": *-\\?[0-9.]*" | head -n 1 | sed 's/.*: *//'
}

# verdict_min VALUE TARGET -> "PASS" or "FAIL (-x% vs target)"  (VALUE must be >= TARGET)
verdict_min() {
    awk -v v="$1" -v t="$2" 'BEGIN {
        if (v >= t) printf "PASS (%+.0f%%)", (v / t - 1) * 100
        else printf "**FAIL** (%.0f%% below target)", (1 - v / t) * 100 }'
}
# verdict_max VALUE TARGET -> PASS if VALUE <= TARGET
verdict_max() {
    awk -v v="$1" -v t="$2" 'BEGIN {
        if (v <= t) printf "PASS (%.0f%% headroom)", (1 - v / t) * 100
        else printf "**FAIL** (%.0f%% over target)", (v / t - 1) * 100 }'
}

# ---------------------------------------------------------------- kafka.sh, soak.sh

# stop_pid PID [SECONDS]: SIGTERM, wait up to SECONDS (default 120), then
# SIGKILL; PID leaves the caller's PIDS array.
stop_pid() {
    local pid=$1 limit=${2:-120} i
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < limit * 10; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        log "process $pid did not stop within ${limit}s; killing it"
        kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
    local keep=() p
    for p in "${PIDS[@]}"; do [[ $p == "$pid" ]] || keep+=("$p"); done
    PIDS=("${keep[@]}")
}

# kv FILE KEY -> value of a key=value line
kv() { sed -n "s/^$2=//p" "$1" | tail -n 1; }

# kbench_binaries: configure $KBUILD (RelWithDebInfo) if needed, build
# sw_kbench there and pick the stormwatch to measure: $SW_BIN or $BENCH_BIN,
# else with KBENCH_FROM_HEAD=1 one built from a clean export of HEAD (so
# uncommitted edits in the work tree are not measured), else $KBUILD's.
# Sets BIN, KB, VERSION, BUILD_TYPE, FROM_HEAD and (from HEAD) HEAD_REV.
kbench_binaries() {
    if [[ ! -f $KBUILD/CMakeCache.txt ]]; then
        log "configuring ${KBUILD#"$ROOT"/} (RelWithDebInfo)"
        cmake -S "$ROOT" -B "$KBUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSW_BUILD_TESTS=OFF >&2
    fi
    BIN=${SW_BIN:-${BENCH_BIN:-}}
    FROM_HEAD=${KBENCH_FROM_HEAD:-0}
    if [[ -z $BIN && $FROM_HEAD == 1 ]]; then
        HEAD_REV=$(git -C "$ROOT" rev-parse --short HEAD)
        local head_dir=$KBUILD/head-$HEAD_REV
        if [[ ! -x $head_dir/build/stormwatch ]]; then
            log "building stormwatch from a clean export of HEAD ($HEAD_REV) in ${head_dir#"$ROOT"/}"
            rm -rf "$head_dir"
            mkdir -p "$head_dir/src"
            git -C "$ROOT" archive HEAD | tar -x -C "$head_dir/src"
            cmake -S "$head_dir/src" -B "$head_dir/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSW_BUILD_TESTS=OFF >&2
            cmake --build "$head_dir/build" -j2 --target stormwatch >&2
        fi
        BIN=$head_dir/build/stormwatch
        log "building ${KBUILD#"$ROOT"/}: sw_kbench (measuring HEAD $HEAD_REV)"
        cmake --build "$KBUILD" -j2 --target sw_kbench >&2
    elif [[ -z $BIN ]]; then
        log "building ${KBUILD#"$ROOT"/}: stormwatch, sw_kbench"
        cmake --build "$KBUILD" -j2 --target stormwatch sw_kbench >&2
        BIN=$KBUILD/stormwatch
    else
        log "building ${KBUILD#"$ROOT"/}: sw_kbench (measuring $BIN)"
        cmake --build "$KBUILD" -j2 --target sw_kbench >&2
    fi
    KB=$KBUILD/bench/sw_kbench
    [[ -x $BIN ]] || die "no stormwatch binary at $BIN"
    [[ -x $KB ]] || die "no sw_kbench at $KB"
    VERSION=$("$BIN" --version | awk '{ print $NF }')
    BUILD_TYPE=unknown
    local cache
    cache=$(dirname "$BIN")/CMakeCache.txt
    if [[ -f $cache ]]; then BUILD_TYPE=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$cache"); fi
}
