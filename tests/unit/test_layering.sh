#!/bin/sh
# The house's layering: a folder of src/ may include only headers of the
# folders below it (its own, and those listed for it here). The list is the
# the layering table of docs/DEVELOPING.md; a folder that includes a header of a folder above it
# (or of one beside it that it does not list) fails this test, naming the
# file, the line and the header. The core's stricter fence (libc allow-list,
# linked symbols) is test_core_purity.
# Usage: test_layering.sh SOURCE_DIR
set -eu
src=$1/src

allowed() {
    case $1 in
    util) echo "" ;;
    core) echo "util" ;;
    codec) echo "core util" ;;
    conf) echo "core util" ;;
    io) echo "util" ;;
    ship) echo "util" ;;
    gen) echo "core util" ;;
    net) echo "util" ;;
    registry) echo "net codec conf core util" ;;
    ops) echo "core util" ;;
    kafka) echo "ops conf codec core util" ;;
    report) echo "codec core util" ;;
    notify) echo "kafka net ops conf codec core util" ;;
    daemon) echo "kafka registry ops conf codec core util" ;;
    cli) echo "daemon notify kafka report registry net ops gen ship io conf codec core util" ;;
    *) echo "?" ;;
    esac
}

# header name -> owning folder (the first folder that has it), and each
# known folder's allowed list; then one awk pass over every file (a process
# per include line made this test take a minute and a half on a loaded
# machine).
: > layering-owners.txt
: > layering-allowed.txt
: > layering-bad.txt
set --
for d in "$src"/*/; do
    d=${d%/}; name=${d##*/}
    for h in "$d"/*.h; do
        [ -e "$h" ] && printf '%s %s\n' "${h##*/}" "$name" >> layering-owners.txt
    done
    ok=$(allowed "$name")
    if [ "$ok" = "?" ]; then
        echo "src/$name: a folder this test does not know; add it to the table (and docs/DEVELOPING.md's layering table)" >> layering-bad.txt
        continue
    fi
    printf '%s %s\n' "$name" "$ok" >> layering-allowed.txt
    for f in "$d"/*.c "$d"/*.h; do
        [ -e "$f" ] && set -- "$@" "$f"
    done
done
n_files=$#
if [ $# -gt 0 ]; then
    awk '
    FILENAME == ARGV[1] { if (!($1 in owner)) owner[$1] = $2; next }
    FILENAME == ARGV[2] { ok[$1] = " " substr($0, length($1) + 2) " "; list[$1] = substr($0, length($1) + 2); next }
    FNR == 1 { n = split(FILENAME, part, "/"); name = part[n - 1]; base = part[n] }
    /^[[:space:]]*#[[:space:]]*include[[:space:]]*"/ {
        inc = $0
        sub(/^[[:space:]]*#[[:space:]]*include[[:space:]]*"/, "", inc)
        if (index(inc, "\"") == 0) next
        inc = substr(inc, 1, index(inc, "\"") - 1)
        if (!(inc in owner)) next          # generated or system header
        o = owner[inc]
        if (o == name || index(ok[name], " " o " ") > 0) next
        printf "src/%s/%s:%d: includes \"%s\" of src/%s, which src/%s may not use (it may use: %s)\n", \
            name, base, FNR, inc, o, name, (list[name] == "" ? "nothing" : list[name])
    }' layering-owners.txt layering-allowed.txt "$@" >> layering-bad.txt
fi
if [ -s layering-bad.txt ]; then
    echo "layering: a folder reaches above itself:" >&2
    cat layering-bad.txt >&2
    exit 1
fi
echo "layering: $n_files files in $(ls -d "$src"/*/ | wc -l) folders include only headers of the folders below them"
