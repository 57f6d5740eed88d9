#!/bin/sh
# The core fence: src/core may use libc's memory/string/sort functions and
# src/util, nothing else. Checked two ways, because an include-path fence
# alone cannot work (librdkafka, Avro and libmicrohttpd headers live in
# /usr/include, which every target sees):
#   1. includes: every #include in src/core names an allowed libc header or
#      a header of src/core or src/util;
#   2. no JSON parsing: the decoders (src/codec) hand the core parsed
#      fields (e.g. sw_event_t.oom_reason); no core source compares a byte
#      with a JSON delimiter ('"', '\\', '{', '[') as a scanner would;
#   3. symbols: every undefined symbol of the built libsw_core.a is defined in
#      the core itself, is an allowed libc or compiler-runtime function, or
#      is a sw_ function of libsw_util.a other than logging; and the core
#      defines no writable data (no globals, no function-level statics).
# Usage: test_core_purity.sh SOURCE_DIR LIBSW_CORE.a LIBSW_UTIL.a
set -eu
src=$1/src
core_lib=$2
util_lib=$3
fail=0
bad() { echo "core purity: $*" >&2; fail=1; }

# stdatomic.h: the process-wide memory pool (sw_detect_pool_t) is owned by the
# caller and shared by its engines through relaxed atomic counters; the core
# still holds no global and calls nothing for them (inline on every target).
allowed_headers="stdbool.h stddef.h stdint.h stdlib.h string.h limits.h math.h stdarg.h assert.h stdatomic.h"
allowed_libc="free memcmp memcpy memmove memset memchr qsort bsearch strlen strcmp strncmp strchr abs llabs"

# 1. includes
for f in "$src"/core/*.c "$src"/core/*.h; do
    grep -n '^[[:space:]]*#[[:space:]]*include' "$f" | while IFS= read -r line; do
        n=${line%%:*}
        inc=$(printf '%s\n' "$line" | sed -n 's/.*#[[:space:]]*include[[:space:]]*[<"]\([^>"]*\)[>"].*/\1/p')
        case "$line" in
        *'<'*)
            case " $allowed_headers " in
            *" $inc "*) ;;
            *) echo "$f:$n: <$inc> is not allowed in the core (allowed: $allowed_headers)" ;;
            esac ;;
        *)
            if [ ! -e "$src/core/$inc" ] && [ ! -e "$src/util/$inc" ] || [ "$inc" = sw_log.h ]; then
                echo "$f:$n: \"$inc\" is not a header of src/core or src/util (or is logging)"
            fi ;;
        esac
    done
done > purity-includes.txt
if [ -s purity-includes.txt ]; then
    bad "forbidden includes:"; cat purity-includes.txt >&2
fi

# 2. no JSON parsing
grep -nE "(==|!=)[[:space:]]*'(\\\\\\\\|\"|\{|\[)'|'(\\\\\\\\|\"|\{|\[)'[[:space:]]*(==|!=)" \
    "$src"/core/*.c "$src"/core/*.h > purity-json.txt || true
if [ -s purity-json.txt ]; then
    bad "JSON parsing in the core (parse in src/codec, hand the core the fields):"; cat purity-json.txt >&2
fi

# 3. symbols
nm --defined-only "$core_lib" | awk 'NF==3 {print $3}' | sort -u > purity-core-defined.txt
nm --defined-only "$util_lib" | awk 'NF==3 && $2 ~ /[TW]/ {print $3}' | grep -v '^sw_log' | sort -u > purity-util.txt
nm -u "$core_lib" | awk 'NF==2 {print $2}' | sort -u | comm -23 - purity-core-defined.txt > purity-undefined.txt
: > purity-forbidden.txt
while IFS= read -r sym; do
    case " $allowed_libc " in *" $sym "*) continue ;; esac
    case "$sym" in
    __asan_*|__ubsan_*|__sanitizer_*|__lsan_*|__stack_chk_fail|__fix*|__float*|__udiv*|__div*|__mod*|__umod*|__mul*|__pow*) continue ;;
    esac
    if grep -qx "$sym" purity-util.txt; then continue; fi
    echo "$sym" >> purity-forbidden.txt
done < purity-undefined.txt
if [ -s purity-forbidden.txt ]; then
    bad "libsw_core.a calls functions outside its allow-list: $(tr '\n' ' ' < purity-forbidden.txt)"
fi
# Writable data: symbols in .data or .bss sections (.data.rel.ro is
# read-only after relocation: a "static const char *const" lives there in
# position-independent builds). Sanitizer builds add their own module
# descriptors; skip those.
objdump -t "$core_lib" | awk '$0 ~ / O / || $0 ~ / [lg] +[A-Za-z]* *\.(data|bss)/ {
        for (i = 1; i <= NF; i++) if ($i ~ /^\.(data|bss|sdata|sbss)/) { sec = $i; break }
        if (sec ~ /^\.(data|bss|sdata|sbss)/ && sec !~ /^\.data\.rel\.ro/) print $NF; sec = "" }' \
    | grep -v '^\(__asan\|__ubsan\|__sancov\|\.L\|___asan\|\.data\|\.bss\)' > purity-data.txt || true
if [ -s purity-data.txt ]; then
    bad "libsw_core.a defines writable data (globals or statics): $(tr '\n' ' ' < purity-data.txt)"
fi

n_sym=$(wc -l < purity-undefined.txt)
if [ "$fail" -ne 0 ]; then
    exit 1
fi
echo "core purity: $(ls "$src"/core/*.c "$src"/core/*.h | wc -l) files' includes allowed, no JSON scanner; $n_sym external symbols of libsw_core.a all allowed; no writable data"
