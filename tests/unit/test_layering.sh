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

# header name -> owning folder
: > layering-owners.txt
for d in "$src"/*/; do
    d=${d%/}; name=${d##*/}
    for h in "$d"/*.h; do
        [ -e "$h" ] && printf '%s %s\n' "${h##*/}" "$name" >> layering-owners.txt
    done
done

: > layering-bad.txt
n_files=0
for d in "$src"/*/; do
    d=${d%/}; name=${d##*/}
    ok=$(allowed "$name")
    if [ "$ok" = "?" ]; then
        echo "src/$name: a folder this test does not know; add it to the table (and docs/DEVELOPING.md's layering table)" >> layering-bad.txt
        continue
    fi
    for f in "$d"/*.c "$d"/*.h; do
        [ -e "$f" ] || continue
        n_files=$((n_files + 1))
        grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" | while IFS= read -r line; do
            n=${line%%:*}
            inc=$(printf '%s\n' "$line" | sed -n 's/.*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p')
            owner=$(awk -v h="$inc" '$1 == h {print $2; exit}' layering-owners.txt)
            [ -n "$owner" ] || continue          # generated or system header
            [ "$owner" = "$name" ] && continue
            case " $ok " in
            *" $owner "*) ;;
            *) echo "src/$name/${f##*/}:$n: includes \"$inc\" of src/$owner, which src/$name may not use (it may use: ${ok:-nothing})" ;;
            esac
        done >> layering-bad.txt
    done
done
if [ -s layering-bad.txt ]; then
    echo "layering: a folder reaches above itself:" >&2
    cat layering-bad.txt >&2
    exit 1
fi
echo "layering: $n_files files in $(ls -d "$src"/*/ | wc -l) folders include only headers of the folders below them"
