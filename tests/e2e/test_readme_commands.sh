#!/bin/sh
# Every README command that needs no Kafka cluster works as written, and so
# does every such command of the guide pages the README sends a reader to.
# Runs, in order of the files given and in one scratch directory (so that a
# file one block writes is there for the next), each line of their ```sh blocks
# that calls stormwatch's offline commands (gen, analyze, replay, report)
# or asks for a property list (-X list); `stormwatch` and
# `build/stormwatch` both run the binary under test. Lines that need a
# cluster, Docker, Kubernetes, make or a browser are listed as skipped.
# Usage: test_readme_commands.sh README.md [docs/PAGE.md...]   (SW_BIN = the binary)
set -u
[ $# -ge 1 ] || { echo "usage: test_readme_commands.sh README.md [docs/PAGE.md...]" >&2; exit 2; }
BIN=${SW_BIN:?SW_BIN must name the stormwatch binary}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/build" "$work/docs"
ln -s "$BIN" "$work/build/stormwatch"
export PATH="$work/build:$PATH"
ran=0 skipped=0 failed=0
for page in "$@"; do
    awk '/^```sh/{f=1; next} /^```/{f=0} f' "$page"
done > "$work/lines"
cont=0
while IFS= read -r line; do
    case "$line" in *\\) next_cont=1 ;; *) next_cont=0 ;; esac
    if [ "$cont" = 1 ]; then cont=$next_cont; continue; fi
    cont=$next_cont
    cmd=$(printf '%s' "$line" | sed 's/[[:space:]]*#[^'"'"'"]*$//')
    [ -z "$cmd" ] && continue
    case "$cmd" in
        build/stormwatch\ gen*|build/stormwatch\ analyze*|build/stormwatch\ replay*|build/stormwatch\ report*|\
        stormwatch\ gen*|stormwatch\ analyze*|stormwatch\ replay*|stormwatch\ report*|*stormwatch\ *-X\ list*)
            printf 'doc: %s\n' "$cmd"
            if (cd "$work" && sh -ec "$cmd" >"$work/out" 2>"$work/err"); then
                ran=$((ran + 1))
            else
                failed=$((failed + 1))
                printf 'FAIL (exit %s): %s\n' "$?" "$cmd"
                sed 's/^/  stderr: /' "$work/err" | head -5
            fi ;;
        *) skipped=$((skipped + 1)); printf 'skipped (needs a cluster, Docker, Kubernetes, make or a browser): %s\n' "$cmd" ;;
    esac
done < "$work/lines"
echo "test_readme_commands: $ran commands ran, $failed failed, $skipped skipped"
[ "$ran" -ge 8 ] || { echo "FAIL: too few commands found ($ran): did the pages' blocks change?"; exit 1; }
[ "$failed" -eq 0 ]
