#!/bin/sh
# The `stormwatch` binary of an older revision, for the rolling-update
# tests (test_keying_upgrade_*): built once from this clone's own history in
# a git worktree (Release, the stormwatch target only, no tests) and cached
# by full commit id under ${XDG_CACHE_HOME:-$HOME/.cache}/stormwatch-test/.
#
# Usage: tests/e2e/old_binary.sh REV
# Prints the binary's path. Exit status: 0 ok; 77 (ctest's SKIP) when REV
# is not in this clone (a shallow clone, or a tag not fetched: the tests
# name releases by commit id); 1 when the
# build failed. Environment: SW_OLD_JOBS (default 2) parallel build jobs.
set -eu

rev=${1:?usage: old_binary.sh REV}
root=$(cd "$(dirname "$0")/../.." && pwd)
if ! git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
    echo "old_binary.sh: SKIP: $root is not a git clone (no history to build $rev from)" >&2
    exit 77
fi
if ! sha=$(git -C "$root" rev-parse --verify -q "$rev^{commit}"); then
    echo "old_binary.sh: SKIP: revision $rev is not in this clone (shallow clone or tags not" \
        "fetched: git fetch --unshallow --tags)" >&2
    exit 77
fi
cache=${XDG_CACHE_HOME:-$HOME/.cache}/stormwatch-test/$sha
bin=$cache/stormwatch
mkdir -p "$cache"
# One build per revision, even when several tests ask at once.
exec 9>"$cache/.lock"
flock 9
if [ -x "$bin" ]; then
    echo "$bin"
    exit 0
fi
t0=$(date +%s)
work=$(mktemp -d "${TMPDIR:-/tmp}/sw-old-$sha.XXXXXX")
cleanup() {
    git -C "$root" worktree remove --force "$work/src" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
git -C "$root" worktree add --detach "$work/src" "$sha" >"$work/log" 2>&1 || {
    cat "$work/log" >&2
    exit 1
}
# Its own build script, as its CI built it; only the binary.
if ! JOBS=${SW_OLD_JOBS:-2} "$work/src/scripts/build.sh" -B "$work/build" -t Release \
    --target stormwatch -- -DSW_BUILD_TESTS=OFF >>"$work/log" 2>&1; then
    tail -40 "$work/log" >&2
    echo "old_binary.sh: building $rev ($sha) failed" >&2
    exit 1
fi
cp "$work/build/stormwatch" "$bin.tmp"
mv "$bin.tmp" "$bin"
echo "old_binary.sh: built $rev ($sha) in $(($(date +%s) - t0)) s, cached as $bin" >&2
echo "$bin"
