#!/bin/sh
# Writes the stormwatch(1) man page from the binary's own --help texts with
# help2man: the page's synopsis and command list from `stormwatch --help`,
# then one subsection per command with its `stormwatch COMMAND --help`, and
# FILES / SEE ALSO. The build runs it (CMake target man) when help2man is
# installed; `make install` and the .deb install the page.
# Usage: scripts/man.sh STORMWATCH_BINARY OUTPUT.1
set -eu
[ $# -eq 2 ] || { echo "usage: man.sh STORMWATCH_BINARY OUTPUT.1" >&2; exit 2; }
bin=$1
out=$2
inc=$(mktemp "${TMPDIR:-/tmp}/stormwatch-man.XXXXXX")
trap 'rm -f "$inc"' EXIT
version=$("$bin" --version | awk '{ print $2 }')
# roff-safe preformatted text: backslashes doubled, lines that start with a
# dot or an apostrophe escaped.
roff() { sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"; }
{
  echo "[COMMANDS IN DETAIL]"
  for cmd in $("$bin" --help | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }'); do
    echo ".SS \"stormwatch $cmd\""
    echo ".nf"
    "$bin" "$cmd" --help 2>&1 | roff
    echo ".fi"
  done
  cat <<'TXT'
[FILES]
.TP
.I /etc/stormwatch/stormwatch.conf
properties of \fBstormwatch run\fR and \fBstormwatch notify\fR (name=value lines); \fBstormwatch run \-X list\fR lists them all
.TP
.I /etc/default/stormwatch
environment of the systemd units (STORMWATCH_* variables, e.g. secrets)
.TP
.I stormwatch.service, stormwatch-notify.service
systemd units of the two daemons
[ENVIRONMENT]
.TP
.B STORMWATCH_\fINAME\fR
any property, its dots as underscores (STORMWATCH_BOOTSTRAP_SERVERS=bootstrap.servers); wins over \-c FILE, loses to \-X
[SEE ALSO]
.BR systemctl (1),
.BR kcat (1),
.BR prometheus (1).
The README and docs/operating.md of the source distribution.
TXT
} >"$inc"
help2man --no-info --no-discard-stderr --version-string="$version" \
  --name="first-cause detection of GPU memory storms in Kafka telemetry" \
  --section=1 --include="$inc" --output="$out.tmp" "$bin"
mv -f "$out.tmp" "$out"
