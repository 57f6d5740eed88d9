#!/bin/sh
# Regenerate docs/properties.md's property list from the configuration table
# (what test_readme checks). Usage: scripts/update-readme.sh [path/to/stormwatch]
set -eu
bin=${1:-build/stormwatch}
tmp=$(mktemp)
"$bin" run -X markdown > "$tmp"
python3 - "$tmp" <<'PY'
import sys
table = open(sys.argv[1]).read()
s = open("docs/properties.md").read()
b, e = "<!-- properties:begin -->\n", "<!-- properties:end -->"
i, j = s.index(b) + len(b), s.index(e)
open("docs/properties.md", "w").write(s[:i] + table + s[j:])
PY
rm -f "$tmp"
