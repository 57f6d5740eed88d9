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

# ---------------------------------------------------------------- baseline mode
# run.sh pairs every row of its baseline table with the same command run by
# a build of another revision (the previous release by default), in the
# same run: A B, B A, A B ... so that a drift of the machine's speed hits
# both sides of a pair alike. What is compared is the whole process's CPU
# time (user + sys of the stormwatch process, as the kernel accounts it):
# instruction counts miss page faults, copies in the kernel and the cache.

# baseline_rev [REV] -> the revision to pair against: REV, else $BASELINE,
# else the newest tag reachable from HEAD's parent (a tag on HEAD itself is
# the release being measured, not the one before), else nothing.
baseline_rev() {
    local rev=${1:-${BASELINE:-}}
    if [[ -z $rev ]]; then
        rev=$(git -C "$ROOT" describe --tags --abbrev=0 HEAD^ 2>/dev/null || true)
    fi
    printf '%s' "$rev"
}

# baseline_build REV: the stormwatch binary of REV (RelWithDebInfo), built
# once per commit in a git worktree under $BENCH_CACHE (default
# ${XDG_CACHE_HOME:-~/.cache}/stormwatch-bench/<commit>); the worktree is
# removed after the build, the binary kept. Sets BASE_BIN, BASE_COMMIT.
baseline_build() {
    local rev=$1 cache=${BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/stormwatch-bench}
    BASE_COMMIT=$(git -C "$ROOT" rev-parse --verify --quiet "$rev^{commit}") ||
        die "baseline revision '$rev' is not a commit of this repository"
    local dir=$cache/$BASE_COMMIT
    BASE_BIN=$dir/stormwatch
    if [[ -x $BASE_BIN ]]; then
        log "baseline $rev ($BASE_COMMIT): cached build $BASE_BIN"
        return 0
    fi
    log "baseline $rev ($BASE_COMMIT): building in a worktree under $dir (RelWithDebInfo, once per commit)"
    mkdir -p "$dir"
    git -C "$ROOT" worktree prune
    rm -rf "$dir/src" "$dir/build"
    git -C "$ROOT" worktree add --detach --force "$dir/src" "$BASE_COMMIT" >&2 ||
        die "git worktree add of $BASE_COMMIT failed"
    if ! { cmake -S "$dir/src" -B "$dir/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DSW_BUILD_TESTS=OFF >&2 && cmake --build "$dir/build" -j2 --target stormwatch >&2; }; then
        git -C "$ROOT" worktree remove --force "$dir/src" || true
        die "building the baseline $rev ($BASE_COMMIT) failed"
    fi
    cp "$dir/build/stormwatch" "$BASE_BIN.tmp"
    mv -f "$BASE_BIN.tmp" "$BASE_BIN"
    git -C "$ROOT" worktree remove --force "$dir/src" || true
    rm -rf "$dir/build"
}

# cpu_run SHAPE OUT ERR FILE BIN ARGS...: run `BIN ARGS...` on FILE as
# SHAPE says (file: FILE as the last argument; stdin: `- < FILE`; pipe:
# `cat FILE | BIN ARGS... -`), stdout to OUT, stderr to ERR; prints the
# stormwatch process's user+sys seconds (the pipe's cat is not counted).
cpu_run() {
    local shape=$1 out=$2 err=$3 f=$4 t rc=0
    shift 4
    local TIMEFORMAT='%3U %3S'
    case $shape in
    file) t=$( { time "$@" "$f" >"$out" 2>"$err"; } 2>&1) || rc=$? ;;
    stdin) t=$( { time "$@" - <"$f" >"$out" 2>"$err"; } 2>&1) || rc=$? ;;
    pipe) t=$( { cat "$f" | { time "$@" - >"$out" 2>"$err"; }; } 2>&1) || rc=$? ;;
    *) die "cpu_run: unknown shape $shape" ;;
    esac
    if [[ $rc -ne 0 ]]; then
        cat "$err" >&2
        die "command failed (exit $rc): $(quote_cmd "$@") ($shape $f)"
    fi
    awk -v t="$t" 'BEGIN { n = split(t, a, " "); printf "%.3f", a[n - 1] + a[n] }'
}

# pair_row ID PAIRS SHAPE FILE ARGS...: PAIRS paired runs of `stormwatch
# ARGS...` by $BIN and by $BASE_BIN (order alternating pair by pair), one
# line per pair in $PAIR_TSV: id, pair, new CPU s, baseline CPU s. The
# first pair's outputs are compared byte for byte (PAIR_SAME[id]).
declare -A PAIR_SAME=()
pair_row() {
    local id=$1 pairs=$2 shape=$3 f=$4 p a b
    shift 4
    note_cmd "$BIN" "$@" "($shape)"
    for ((p = 1; p <= pairs; p++)); do
        local on=$RAW_DIR/$id.new.out ob=$RAW_DIR/$id.base.out
        if ((p % 2)); then
            a=$(cpu_run "$shape" "$on" "$on.err" "$f" "$BIN" "$@")
            b=$(cpu_run "$shape" "$ob" "$ob.err" "$f" "$BASE_BIN" "$@")
        else
            b=$(cpu_run "$shape" "$ob" "$ob.err" "$f" "$BASE_BIN" "$@")
            a=$(cpu_run "$shape" "$on" "$on.err" "$f" "$BIN" "$@")
        fi
        if ((p == 1)); then
            if cmp -s "$on" "$ob"; then PAIR_SAME[$id]=yes; else PAIR_SAME[$id]=no; fi
        fi
        printf '%s\t%s\t%s\t%s\n' "$id" "$p" "$a" "$b" >>"$PAIR_TSV"
        log "  $id pair $p: new ${a}s, baseline ${b}s CPU"
    done
}

# pair_stats ID -> "new_median base_median ratio_median ratio_p25 ratio_p75
# n" (ratio = new / baseline, pair by pair; quartiles by nearest rank).
pair_stats() {
    awk -F'\t' -v id="$1" '$1 == id { n++; a[n] = $3; b[n] = $4; r[n] = ($4 > 0) ? $3 / $4 : 1 }
        function med(x, n,   i, j, t) {
            for (i = 2; i <= n; i++) { t = x[i]; for (j = i - 1; j > 0 && x[j] > t; j--) x[j + 1] = x[j]; x[j + 1] = t }
            return (n % 2) ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
        }
        END {
            if (!n) { print "nan nan nan nan nan 0"; exit }
            ma = med(a, n); mb = med(b, n); mr = med(r, n)
            q1 = r[int((n + 3) / 4)]; q3 = r[n + 1 - int((n + 3) / 4)]
            printf "%.3f %.3f %.4f %.4f %.4f %d\n", ma, mb, mr, q1, q3, n
        }' "$PAIR_TSV"
}

# pair_verdict RATIO_MEDIAN P25 P75 -> "slower" when the new binary is
# slower beyond the noise (median over 1 + $BENCH_NOISE and three pairs
# in four slower), "faster" when the mirror holds, else "same".
pair_verdict() {
    awk -v m="$1" -v q1="$2" -v q3="$3" -v k="${BENCH_NOISE:-0.03}" 'BEGIN {
        if (m > 1 + k && q1 > 1) print "slower"
        else if (m < 1 - k && q3 < 1) print "faster"
        else print "same" }'
}

# metrics_port_wait LOG PID TRIES STEP: waits (TRIES x STEP seconds at most)
# for `stormwatch run`'s "metrics on http ... (port N)" line in LOG and sets
# METRICS_PORT; dies when PID exits first or the line never comes.
metrics_port_wait() {
    local log=$1 pid=$2 tries=$3 step=$4 i
    METRICS_PORT=""
    for ((i = 0; i < tries; i++)); do
        METRICS_PORT=$({ sed -n 's/.*metrics on http.*(port \([0-9]*\)).*/\1/p' "$log" 2>/dev/null || true; } | head -n 1)
        [[ -n $METRICS_PORT ]] && return 0
        kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; die "stormwatch run exited"; }
        sleep "$step"
    done
    die "stormwatch run did not report its metrics port (see $log)"
}
