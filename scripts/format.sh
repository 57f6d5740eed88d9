#!/bin/sh
# Formats stormwatch's C sources with clang-format and the repository's
# .clang-format: the *.c and *.h files git tracks under src/, tests/ and
# bench/ (or under the PATHs given).
#
# Usage: scripts/format.sh [--check] [PATH...]
#   --check     change nothing: list each file that differs from the format
#               with the number of its lines that would change, then the
#               total; exit 1 when any file differs
#   -h, --help  show this help
# Environment: CLANG_FORMAT (default clang-format). The style was tuned with
# clang-format 14 (Debian 12); another major version may lay out some lines
# differently, so it is named when it is not 14.
# Exit status: 0 formatted (or, with --check, nothing differs), 1 files
# differ (--check), 2 usage error or no clang-format.
set -eu

usage() { sed -n '2,/^set -eu$/p' "$0" | sed -e '/^set -eu$/d' -e 's/^# \{0,1\}//'; }

check=0
while [ $# -gt 0 ]; do
    case $1 in
    --check) check=1; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; break ;;
    -*) echo "format.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done

cf=${CLANG_FORMAT:-clang-format}
if ! command -v "$cf" >/dev/null 2>&1; then
    echo "format.sh: $cf not found (apt-get install clang-format)" >&2
    exit 2
fi
major=$("$cf" --version | sed -n 's/.*version \([0-9][0-9]*\).*/\1/p')
[ "$major" = 14 ] || echo "format.sh: note: $cf is version ${major:-unknown}, the style was tuned with 14" >&2

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[ $# -gt 0 ] || set -- src tests bench
# Tracked files and new ones not yet added (a new file is formatted and
# checked before its first commit), never ignored ones.
files=$(git ls-files --cached --others --exclude-standard -- "$@" | grep -E '\.[ch]$' | sort -u || true)
[ -n "$files" ] || { echo "format.sh: no C files under $*" >&2; exit 2; }

if [ $check -eq 0 ]; then
    # shellcheck disable=SC2086 # one file name a word: the tree has no spaces in them
    printf '%s\n' $files | xargs "$cf" --style=file -i
    exit 0
fi

# One clang-format process for every file first (its start-up, not the
# formatting, is most of the time of a process per file); then the per-file
# count only for the files it names (all of them if it named none).
# shellcheck disable=SC2086 # one file name a word, as above
if dry=$("$cf" --style=file --dry-run -Werror $files 2>&1); then
    exit 0
fi
named=$(printf '%s\n' "$dry" | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: [a-z]*: code should be clang-formatted.*/\1/p' | sort -u)
[ -z "$named" ] || files=$named
nfiles=0
nlines=0
for f in $files; do
    n=$("$cf" --style=file "$f" | diff "$f" - | grep -c '^<' || true)
    if [ "$n" -gt 0 ]; then
        echo "$f: $n lines"
        nfiles=$((nfiles + 1))
        nlines=$((nlines + n))
    fi
done
if [ $nfiles -gt 0 ]; then
    echo "format.sh: $nfiles files differ from .clang-format ($nlines lines would change)" >&2
    exit 1
fi
