#!/bin/sh
# No file circles inside a library: within each static library given, a
# source file's object calls (or reads) only global names defined by the
# objects of files below it, never back up. Computed from the objects
# themselves (nm: the names each object defines against those it leaves
# undefined), so a call through a macro or an inline function counts too,
# and nothing here has to parse C. A circle fails the test, naming each
# file of it and, for each step, the names that tie it; the layering of
# each folder's files is written at the top of its CMakeLists.txt.
# A call that must run upward (a strategy, a callback) goes through a
# function pointer that the higher file registers: no name ties them then.
# Usage: test_file_circles.sh LIBRARY.a...
set -eu
[ $# -gt 0 ] || { echo "usage: $0 LIBRARY.a..." >&2; exit 2; }
NM=${NM:-nm}
bad=0
for lib in "$@"; do
    [ -r "$lib" ] || { echo "file circles: cannot read $lib" >&2; exit 2; }
    # One line per object and name: "OBJECT D NAME" (defined) or "OBJECT U NAME".
    out=$("$NM" -A -P "$lib" 2>/dev/null | awk '
    {
        # POSIX format: "lib.a[obj.c.o]: name type [value size]"
        obj = $1
        sub(/^.*\[/, "", obj); sub(/\]:$/, "", obj)
        sub(/\.o$/, "", obj)
        name = $2; type = $3
        if (type == "U") print obj, "U", name
        else if (type ~ /^[TDBRCGSV]$/) print obj, "D", name
    }' | awk '
    $2 == "D" { def[$3] = $1; files[$1] = 1; next }
    $2 == "U" { use[++nu] = $1 SUBSEP $3; files[$1] = 1 }
    END {
        # edges: user -> definer, with the names that tie them
        for (i = 1; i <= nu; i++) {
            split(use[i], u, SUBSEP)
            if (!(u[2] in def) || def[u[2]] == u[1]) continue
            e = u[1] SUBSEP def[u[2]]
            if (!(e in names)) { names[e] = u[2]; succ[u[1]] = succ[u[1]] " " def[u[2]] }
            else if (length(names[e]) < 200) names[e] = names[e] ", " u[2]
        }
        # reach[a, b]: b is reachable from a (depth-first from each file)
        for (f in files) {
            delete seen; top = 0; stack[++top] = f
            while (top > 0) {
                x = stack[top--]
                m = split(succ[x], s, " ")
                for (k = 1; k <= m; k++) if (!(s[k] in seen)) { seen[s[k]] = 1; reach[f, s[k]] = 1; stack[++top] = s[k] }
            }
        }
        # a circle: the files that reach each other; print each once
        for (f in files) {
            if ((f in done) || !((f, f) in reach)) continue
            list = ""
            for (g in files) if ((f, g) in reach && (g, f) in reach) { done[g] = 1; list = list " " g }
            print "circle:" list
            m = split(list, mem, " ")
            for (a = 1; a <= m; a++) for (b = 1; b <= m; b++)
                if ((mem[a] SUBSEP mem[b]) in names) print "  " mem[a] " -> " mem[b] ": " names[mem[a] SUBSEP mem[b]]
        }
        nf = 0; for (f in files) nf++
        print "files " nf
    }')
    nfiles=$(printf '%s\n' "$out" | sed -n 's/^files //p')
    if printf '%s\n' "$out" | grep -q '^circle:'; then
        echo "file circles in ${lib##*/} (each file calls the next, and so round):" >&2
        printf '%s\n' "$out" | grep -v '^files ' >&2
        bad=1
    else
        echo "file circles: none in ${lib##*/} ($nfiles files)"
    fi
done
exit $bad
