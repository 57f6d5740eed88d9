#!/usr/bin/env bash
# Fuzzing with clang's libFuzzer (tests/fuzz): builds build-fuzz with clang
# (-DSW_FUZZ=ON, libraries instrumented with
# -fsanitize=fuzzer-no-link,address,undefined), then runs every target on
# its seed corpus (tests/fuzz/corpus/<target>) plus hostile seeds made here
# at run time (10 MB strings and lines, not committed).
#
# Usage:
#   scripts/fuzz.sh --short            every target for FUZZ_SECONDS (15) each,
#                                      then a few seconds on the 10 MB seeds,
#                                      then tests/fuzz/crashes/<target>/* as
#                                      regressions (CTest test_fuzz_short)
#   scripts/fuzz.sh --long [SECONDS]   every target for SECONDS (3600) with
#                                      -jobs=2; corpus kept in build-fuzz/corpus
#   scripts/fuzz.sh --repro TARGET FILE   run one input (after building)
#   scripts/fuzz.sh --build            only configure and build
#
# Exit status: 0 when nothing was found (or skipped: FUZZ_SECONDS=0, or
# clang/libFuzzer missing outside CI); 1 on a crash, leak, timeout, OOM or
# a broken invariant (the reproducer's path is printed), or when clang is
# missing with CI=true; 2 on a usage error.
#
# Environment: FUZZ_SECONDS (--short: seconds per target, default 15; 0
# skips), FUZZ_LONG_STRING_SECONDS (seconds on the 10 MB seeds, default 5 in
# --short; 0 leaves them out of --short: plain make test, see
# tests/CMakeLists.txt), FUZZ_PARALLEL (targets at once in --short, default: CPUs),
# FUZZ_TARGETS (a subset of: fuzz_json fuzz_avro fuzz_conf fuzz_engine
# fuzz_input fuzz_restore), FUZZ_BUILD_DIR (default build-fuzz), CC (a
# clang), CI (true: missing clang is an error), SW_FUZZ_SKIP_KNOWN=1
# (--short does not replay tests/fuzz/crashes, e.g. while a reported bug is
# being fixed; see tests/fuzz/README.md).
set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${FUZZ_BUILD_DIR:-$ROOT/build-fuzz}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
ALL_TARGETS="fuzz_json fuzz_avro fuzz_conf fuzz_engine fuzz_input fuzz_restore"
TARGETS=${FUZZ_TARGETS:-$ALL_TARGETS}
SAN_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"

say() { printf 'fuzz.sh: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

usage() {
    sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
}

ncpu() { getconf _NPROCESSORS_ONLN 2>/dev/null || nproc 2>/dev/null || echo 2; }

# Largest input per target in the main runs.
max_len() {
    case "$1" in
    fuzz_conf) echo 8192 ;;
    fuzz_engine) echo 4096 ;;
    fuzz_restore) echo 16384 ;;
    *) echo 65536 ;;
    esac
}

# The selected targets that have 10 MB seeds.
long_targets() {
    local t
    for t in $TARGETS; do
        case "$t" in fuzz_json | fuzz_avro | fuzz_conf | fuzz_input) echo "$t" ;; esac
    done
}

# ---------------------------------------------------------------------------
# Toolchain and build

find_clang() {
    if [ -n "${CC:-}" ] && "$CC" --version 2>/dev/null | grep -qi clang; then
        command -v "$CC"
        return
    fi
    for c in clang clang-14 clang-15 clang-16 clang-17 clang-18; do
        if command -v "$c" >/dev/null 2>&1; then command -v "$c"; return; fi
    done
}

# Skip (exit 0) or fail (CI=true) when clang or its libFuzzer runtime is missing.
require_clang() {
    CLANG=$(find_clang)
    local why=""
    if [ -z "$CLANG" ]; then
        why="clang not found"
    else
        local tmp
        tmp=$(mktemp -d)
        printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n);\n%s\n' \
            'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }' \
            > "$tmp/t.c"
        if ! "$CLANG" -fsanitize=fuzzer,address,undefined "$tmp/t.c" -o "$tmp/t" >"$tmp/log" 2>&1; then
            why="$CLANG cannot link -fsanitize=fuzzer,address,undefined ($(head -n 1 "$tmp/log")); install libclang-rt-dev"
        fi
        rm -rf "$tmp"
    fi
    [ -z "$why" ] && return 0
    if [ "${CI:-}" = "true" ]; then
        die "clang/libFuzzer not installed: $why (CI=true: this is an error; scripts/install-deps.sh cannot fix it, install clang and libclang-rt-dev)"
    fi
    echo "skipped: clang/libFuzzer not installed ($why)"
    exit 0
}

build() {
    require_clang
    command -v cmake >/dev/null 2>&1 || die "cmake not found"
    local cache="$BUILD/CMakeCache.txt"
    if [ -f "$cache" ] && ! grep -q "^CMAKE_C_COMPILER:.*=$CLANG\$" "$cache"; then
        say "$BUILD was configured with another compiler: reconfiguring"
        rm -rf "$cache" "$BUILD/CMakeFiles"
    fi
    if [ ! -f "$cache" ]; then
        cmake -S "$ROOT" -B "$BUILD" -DSW_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
            -DCMAKE_C_COMPILER="$CLANG" -DCMAKE_C_FLAGS="$SAN_FLAGS" >"$BUILD.configure.log" 2>&1 ||
            { cat "$BUILD.configure.log" >&2; die "configuring $BUILD failed"; }
        rm -f "$BUILD.configure.log"
    fi
    # Concurrent runs (a --long in the background, CTest's --short) share
    # the build: one builds at a time; running targets keep their binary.
    local lock=()
    command -v flock >/dev/null 2>&1 && lock=(flock "$BUILD/.fuzz-build.lock")
    "${lock[@]}" cmake --build "$BUILD" -j "$(ncpu)" --target fuzz_all >"$BUILD/fuzz-build.log" 2>&1 ||
        { tail -n 60 "$BUILD/fuzz-build.log" >&2; die "building the fuzz targets failed (log: $BUILD/fuzz-build.log)"; }
    BIN=$BUILD/tests/fuzz
}

# ---------------------------------------------------------------------------
# Run environment

setup_env() {
    local sym
    sym=$(command -v llvm-symbolizer || command -v llvm-symbolizer-14 || true)
    [ -n "$sym" ] && export ASAN_SYMBOLIZER_PATH="$sym"
    export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:symbolize=1:allocator_may_return_null=0:strict_string_checks=1:detect_invalid_pointer_pairs=0"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:symbolize=1"
    export LSAN_OPTIONS="print_suppressions=0"
}

# Hostile seeds made at run time (deterministic): 10 MB strings and lines.
make_long_seeds() {
    local dir=$1 ten=10000000
    rm -rf "$dir"
    mkdir -p "$dir"/fuzz_json "$dir"/fuzz_conf "$dir"/fuzz_input "$dir"/fuzz_avro
    a10() { head -c "$ten" /dev/zero | tr '\0' "$1"; }
    # JSON: 10 MB event_type, job_id, metadata string, number, escapes, nesting, blanks.
    { printf '{"timestamp_ns": 1, "event_type": "'; a10 a; printf '", "device_used_bytes": 1}'; } >"$dir/fuzz_json/long-event-type"
    { printf '{"timestamp_ns": 1, "event_type": "sample", "device_used_bytes": 1, "job_id": "'; a10 j; printf '"}'; } >"$dir/fuzz_json/long-job-id"
    { printf '{"event_type": "sample", "metadata": {"k": "'; a10 m; printf '"}, "timestamp_ns": 1, "device_used_bytes": 1}'; } >"$dir/fuzz_json/long-metadata"
    { printf '{"timestamp_ns": 1'; a10 1; printf ', "event_type": "x"}'; } >"$dir/fuzz_json/long-number"
    { printf '{"event_type": "'; head -c 1666666 /dev/zero | sed 's/\x0/\\u0041/g' | tr -d '\n'; printf '", "timestamp_ns": 1}'; } >"$dir/fuzz_json/long-escapes"
    a10 '[' >"$dir/fuzz_json/long-nesting"
    { printf '{"a": '; a10 '{'; } >"$dir/fuzz_json/long-nesting-object"
    { a10 ' '; printf '{}'; } >"$dir/fuzz_json/long-blanks"
    a10 '\n' >"$dir/fuzz_json/long-newlines"
    { printf '{"a": "'; a10 a; } >"$dir/fuzz_json/long-unterminated"
    # Configuration: 10 MB value, name and digits.
    { printf 'kafka.client.id='; a10 v; printf '\n'; } >"$dir/fuzz_conf/long-value"
    { a10 n; printf '=1\n'; } >"$dir/fuzz_conf/long-name"
    { printf 'window.samples='; a10 9; printf '\n'; } >"$dir/fuzz_conf/long-digits"
    { printf 'input.topics='; head -c 5000000 /dev/zero | tr '\0' ','; printf '\n'; } >"$dir/fuzz_conf/long-list"
    # Line reader (first byte = mode, see fuzz_input.c): raw 10 MB line,
    # 10 MB of newlines, gzip of 1 MiB and of SW_INPUT_MAX_LINE (+1) lines.
    { printf '\000'; a10 l; } >"$dir/fuzz_input/long-line"
    { printf '\000'; a10 '\n'; } >"$dir/fuzz_input/long-newlines"
    { printf '\014'; head -c 4096 /dev/zero | tr '\0' x; } >"$dir/fuzz_input/gzip-1mib"
    { printf '\015'; head -c 4096 /dev/zero | tr '\0' y; } >"$dir/fuzz_input/gzip-64mib"
    { printf '\035'; head -c 4096 /dev/zero | tr '\0' z; } >"$dir/fuzz_input/gzip-64mib-plus-1"
    # Avro: made by the target's own encoder.
    SW_FUZZ_GEN_CORPUS="$dir/fuzz_avro" SW_FUZZ_GEN_LONG=1 "$BIN/fuzz_avro" >/dev/null 2>&1 ||
        die "generating the long Avro seeds failed"
}

# run_one TARGET LOGDIR SECONDS MAXLEN EXTRA_ARGS... -- DIRS...
# Runs libFuzzer, writes LOGDIR/{log,rc,secs}; artifacts go to
# $ART_DIR/TARGET/. TIMEOUT: seconds per input (default 10).
run_one() {
    local t=$1 logdir=$2 secs=$3 maxlen=$4
    shift 4
    local args=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do args+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    local art="$ART_DIR/$t/"
    mkdir -p "$logdir" "$art"
    local dict="$ROOT/tests/fuzz/$t.dict"
    [ -f "$dict" ] && args+=("-dict=$dict")
    local start end rc
    start=$(date +%s)
    # A unit slower than -report_slow_units (10 s by default) is written out as
    # an artifact; only the timeout makes a unit a finding.
    (cd "$logdir" && "$BIN/$t" -max_total_time="$secs" -max_len="$maxlen" -timeout="${TIMEOUT:-10}" \
        -report_slow_units="${TIMEOUT:-10}" \
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$art" "${args[@]}" "$@" \
        >"$logdir/log" 2>&1)
    rc=$?
    end=$(date +%s)
    echo "$rc" >"$logdir/rc"
    echo $((end - start)) >"$logdir/secs"
}

# Parallel queue: jobs are "name|command"; at most $1 at once.
run_queue() {
    local par=$1
    shift
    local running=0 job
    for job in "$@"; do
        while [ "$running" -ge "$par" ]; do
            wait -n 2>/dev/null || true
            running=$(jobs -rp | wc -l)
        done
        eval "$job" &
        running=$(jobs -rp | wc -l)
    done
    wait
}

# Stats of one run directory (log, fuzz-*.log): "runs cov0 cov1 units0 units1".
stats_of() {
    local d=$1 logs=("$1"/fuzz-*.log)
    # With -jobs the main log repeats the job logs: read those only.
    [ -f "${logs[0]}" ] || logs=("$d/log")
    cat "${logs[@]}" 2>/dev/null | awk '
        /stat::number_of_executed_units:/ { runs += $2; got = 1 }
        /^#[0-9]+/ {
            n = substr($1, 2) + 0; if (n > last) last = n
            for (i = 2; i <= NF; i++) {
                if ($i == "cov:") c = $(i + 1) + 0
                if ($i == "corp:") { split($(i + 1), a, "/"); u = a[1] + 0 }
            }
            if ($2 == "INITED") { if (c0 == "" || c < c0) c0 = c; if (u0 == "" || u < u0) u0 = u }
            if (c > c1) c1 = c
            if (u > u1) u1 = u
        }
        END {
            if (!got) runs = last
            if (c0 == "") c0 = c1
            if (u0 == "") u0 = u1
            printf "%d %d %d %d %d\n", runs, c0, c1, u0, u1
        }'
}

# Reproducers written by a run (paths), from its logs.
reproducers_of() {
    local logs=("$1"/fuzz-*.log)
    [ -f "${logs[0]}" ] || logs=("$1/log")
    cat "${logs[@]}" 2>/dev/null |
        sed -n "s/.*Test unit written to \(.*\)$/\1/p; s/.*artifact_prefix.*; Test unit written to \(.*\)$/\1/p" | sort -u
}

# Print the table and the failures; set FAILED=1 when a run failed.
report() {
    local title=$1
    shift
    printf '\n%s\n' "$title"
    printf '%-28s %12s %8s %22s %8s\n' "target" "runs" "seconds" "new coverage" "crashes"
    printf '%-28s %12s %8s %22s %8s\n' "------" "----" "-------" "------------" "-------"
    local d name rc s runs c0 c1 u0 u1 n repro
    for d in "$@"; do
        [ -d "$d" ] || continue
        name=$(basename "$d")
        rc=$(cat "$d/rc" 2>/dev/null || echo 1)
        s=$(cat "$d/secs" 2>/dev/null || echo 0)
        read -r runs c0 c1 u0 u1 <<<"$(stats_of "$d")"
        repro=$(reproducers_of "$d")
        n=$(printf '%s' "$repro" | grep -c . || true)
        [ "$rc" != 0 ] && [ "$n" = 0 ] && n="rc=$rc"
        printf '%-28s %12s %8s %22s %8s\n' "$name" "$runs" "$s" \
            "+$((c1 - c0)) edges, +$((u1 - u0)) units" "$n"
        if [ "$rc" != 0 ] || [ -n "$repro" ]; then
            FAILED=1
            FAIL_DIRS+=("$d")
        fi
    done
}

show_failures() {
    local d r
    for d in "${FAIL_DIRS[@]}"; do
        printf '\n==== %s failed (log: %s/log)\n' "$(basename "$d")" "$d" >&2
        grep -E "ERROR: |FUZZ CHECK FAILED|SUMMARY: |runtime error|^ +#[0-9]+ 0x.* in (sw_|LLVMFuzzer|fuzz_|[a-z_]+ /)" "$d"/log "$d"/fuzz-*.log 2>/dev/null |
            sed 's/^[^:]*log://' | head -n 30 >&2
        case "$d" in
        *@crashes)
            r=$(sed -n 's/^Running: //p' "$d/log" | tail -n 1)
            printf 'reproducer: %s\n  replay: scripts/fuzz.sh --repro %s %s\n' "$r" \
                "$(basename "$d" | sed 's/@.*//')" "$r" >&2
            ;;
        esac
        for r in $(reproducers_of "$d"); do
            printf 'reproducer: %s\n  replay: scripts/fuzz.sh --repro %s %s\n' "$r" \
                "$(basename "$d" | sed 's/@.*//')" "$r" >&2
        done
    done
}

# ---------------------------------------------------------------------------
# Modes

short_run() {
    # One --short at a time per build directory (two CTest runs at once).
    if [ -z "${SW_FUZZ_SHORT_LOCKED:-}" ] && command -v flock >/dev/null 2>&1; then
        mkdir -p "$BUILD"
        SW_FUZZ_SHORT_LOCKED=1 exec flock "$BUILD/.fuzz-short.lock" "$0" --short
    fi
    local secs=${FUZZ_SECONDS:-15}
    case "$secs" in '' | *[!0-9]*) say "FUZZ_SECONDS must be a number of seconds, got \"$secs\""; exit 2 ;; esac
    if [ "$secs" -eq 0 ]; then
        echo "skipped: FUZZ_SECONDS=0"
        exit 0
    fi
    local lsecs=${FUZZ_LONG_STRING_SECONDS:-5}
    case "$lsecs" in '' | *[!0-9]*) say "FUZZ_LONG_STRING_SECONDS must be a number, got \"$lsecs\""; exit 2 ;; esac
    local par=${FUZZ_PARALLEL:-$(ncpu)}
    local t0
    t0=$(date +%s)
    build
    setup_env
    local work="$BUILD/fuzz-short"
    ART_DIR="$work/artifacts"
    SEEDS="$work/seeds"
    rm -rf "$work"
    mkdir -p "$work"
    make_long_seeds "$SEEDS"
    say "built in $(( $(date +%s) - t0 ))s; fuzzing $TARGETS for ${secs}s each ($par at once)"

    # Main runs: committed seeds + the generated ones (cut to max_len);
    # new units go to a scratch corpus, never into tests/fuzz/corpus.
    local jobs=() t
    for t in $TARGETS; do
        mkdir -p "$work/$t/corpus"
        local extra="$SEEDS/$t"
        [ -d "$extra" ] || extra=""
        jobs+=("run_one $t '$work/$t' $secs $(max_len "$t") -- '$work/$t/corpus' '$ROOT/tests/fuzz/corpus/$t' $extra")
    done
    # The 10 MB seeds, for a few seconds each (none when lsecs is 0).
    local long=""
    [ "$lsecs" -eq 0 ] || long=$(long_targets)
    for t in $long; do
        mkdir -p "$work/$t@long/corpus"
        local env=""
        [ "$t" = fuzz_input ] && env="SW_FUZZ_INPUT_HUGE=1"
        jobs+=("$env TIMEOUT=60 run_one $t '$work/$t@long' $lsecs 12000000 -- '$work/$t@long/corpus' '$SEEDS/$t'")
    done
    run_queue "$par" "${jobs[@]}"

    # Known crashes as regressions (each file once).
    local regress=()
    if [ "${SW_FUZZ_SKIP_KNOWN:-0}" = 1 ]; then
        say "SW_FUZZ_SKIP_KNOWN=1: not replaying tests/fuzz/crashes"
    else
        for t in $TARGETS; do
            local files=()
            for f in "$ROOT/tests/fuzz/crashes/$t"/*; do [ -f "$f" ] && files+=("$f"); done
            [ ${#files[@]} -gt 0 ] || continue
            local d="$work/$t@crashes"
            mkdir -p "$d"
            local start
            start=$(date +%s)
            (cd "$d" && "$BIN/$t" -timeout=10 -rss_limit_mb=2048 \
                -print_final_stats=1 "${files[@]}" >"$d/log" 2>&1)
            echo $? >"$d/rc"
            echo $(( $(date +%s) - start )) >"$d/secs"
            regress+=("$d")
        done
    fi

    FAILED=0
    FAIL_DIRS=()
    local dirs=()
    for t in $TARGETS; do dirs+=("$work/$t"); done
    for t in $long; do dirs+=("$work/$t@long"); done
    local on_long="${lsecs}s on 10 MB seeds"
    [ -n "$long" ] || on_long="10 MB seeds left out (FUZZ_LONG_STRING_SECONDS=0)"
    report "fuzz.sh --short: ${secs}s per target, $on_long (total $(( $(date +%s) - t0 ))s)" "${dirs[@]}" "${regress[@]}"
    if [ "$FAILED" = 1 ]; then
        show_failures
        for d in "${FAIL_DIRS[@]}"; do
            case "$d" in *@crashes) say "replaying tests/fuzz/crashes/$(basename "$d" | sed 's/@.*//')/ failed: a known bug is still there" ;; esac
        done
        exit 1
    fi
    echo "fuzz.sh --short: no crash, leak, timeout or broken invariant"
}

long_run() {
    local secs=${1:-3600}
    case "$secs" in '' | *[!0-9]*) die "--long: SECONDS must be a number, got \"$secs\"" ;; esac
    build
    setup_env
    local work="$BUILD/fuzz-long" corpus="$BUILD/corpus"
    ART_DIR="$work/artifacts"
    SEEDS="$work/seeds"
    rm -rf "$work"
    mkdir -p "$work"
    make_long_seeds "$SEEDS"
    local lsecs=${FUZZ_LONG_STRING_SECONDS:-$(( secs / 20 > 60 ? 60 : (secs / 20 < 5 ? 5 : secs / 20) ))}
    local t
    for t in $TARGETS; do
        mkdir -p "$corpus/$t"
        say "$t: ${secs}s, -jobs=2, corpus $corpus/$t"
        local extra=()
        [ -d "$SEEDS/$t" ] && extra=("$SEEDS/$t")
        run_one "$t" "$work/$t" "$secs" "$(max_len "$t")" -jobs=2 -workers=2 -use_value_profile=1 \
            -- "$corpus/$t" "$ROOT/tests/fuzz/corpus/$t" "${extra[@]}"
    done
    for t in $(long_targets); do
        mkdir -p "$work/$t@long/corpus"
        local huge=0
        [ "$t" = fuzz_input ] && huge=1
        say "$t: ${lsecs}s on the 10 MB seeds"
        SW_FUZZ_INPUT_HUGE=$huge TIMEOUT=60 run_one "$t" "$work/$t@long" "$lsecs" 12000000 -- \
            "$work/$t@long/corpus" "$SEEDS/$t"
    done
    FAILED=0
    FAIL_DIRS=()
    local dirs=()
    for t in $TARGETS; do dirs+=("$work/$t"); done
    for t in $(long_targets); do dirs+=("$work/$t@long"); done
    report "fuzz.sh --long: ${secs}s per target with -jobs=2 (corpus in $corpus)" "${dirs[@]}"
    local n
    for t in $TARGETS; do
        n=$(find "$corpus/$t" -type f | wc -l)
        printf 'corpus %-12s %6d files, %8d bytes\n' "$t" "$n" "$(du -sb "$corpus/$t" | cut -f1)"
    done
    if [ "$FAILED" = 1 ]; then
        show_failures
        exit 1
    fi
}

repro() {
    [ $# -eq 2 ] || usage
    local t=$1 file=$2
    case " $ALL_TARGETS " in *" $t "*) ;; *) die "unknown target \"$t\" (expected one of: $ALL_TARGETS)" ;; esac
    [ -f "$file" ] || die "no such file: $file"
    build
    setup_env
    [ "$t" = fuzz_input ] && export SW_FUZZ_INPUT_HUGE=1
    "$BIN/$t" -timeout=10 -rss_limit_mb=2048 "$file"
}

main() {
    local t
    for t in $TARGETS; do
        case " $ALL_TARGETS " in *" $t "*) ;; *) say "FUZZ_TARGETS: unknown target \"$t\" (expected: $ALL_TARGETS)"; exit 2 ;; esac
    done
    case "${1:-}" in
    --short) short_run ;;
    --long) shift; long_run "${1:-3600}" ;;
    --repro) shift; repro "$@" ;;
    --build) build; echo "built: $BIN" ;;
    -h | --help | "") usage ;;
    *) say "unknown option \"$1\""; usage ;;
    esac
}

# One line: bash has read all of it before main runs, so editing this file
# during a long run cannot derail the running instance.
main "$@"; exit $?
