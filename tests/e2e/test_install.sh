#!/bin/sh
# The install path, with the tools a packager and an admin use.
# Registered in CTest as `test_install.sh <repo-root> <build-dir>`.
#
#  1. cmake --install BUILD into a DESTDIR (what `make install PREFIX=...
#     DESTDIR=...` runs after configuring): every file where it belongs; the
#     installed binary runs; the man page renders without a warning
#     (man --warnings) and documents every command; the bash completion
#     completes commands, options and -X properties; both systemd units pass
#     `systemd-analyze verify`, restart on failure, wait longer than
#     shutdown.timeout.ms before SIGKILL, and run the installed binary on the
#     installed configuration, which both daemons accept (-X dump)
#  2. the Debian package: a build directory configured for /usr, `cpack -G
#     DEB`, then `dpkg-deb --info/--contents` (dependencies from the
#     binary's libraries, the configuration a conffile) and a real `dpkg -i`
#     into a temporary root (dpkg --root): installed, the binary runs from
#     there, `dpkg -r` keeps the conffile, `dpkg -P` removes it
#
# Missing tools (help2man, dpkg-deb, systemd-analyze) fail the test when
# CI=true and skip their step otherwise. SW_INSTALL_DEB=0 skips step 2.
# Step 2's binary: with CI=true (or SW_INSTALL_DEB_BUILD=1), built once more
# in the package's own tree, as `make package` does; otherwise, when
# BUILD_DIR is an optimised build without sanitizers, BUILD_DIR's binary and
# man page, which the package's tree would compile the same way (the
# install paths are configured into the units and the conffile list, not
# into the binary), so that `make test` compiles stormwatch once.
# Exit status: 0 passed (or skipped outside CI), 1 failed, 2 usage.
set -u

if [ $# -ne 2 ] || [ ! -d "$1" ] || [ ! -f "$2/CMakeCache.txt" ]; then
  echo "usage: test_install.sh REPO_ROOT BUILD_DIR" >&2
  exit 2
fi
root=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
ci=${CI:-false}
cmake=${CMAKE:-cmake}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_install.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

fails=0
skips=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
check() { # check DESCRIPTION COMMAND...
  check_what=$1
  shift
  if "$@" >"$tmp/check.out" 2>&1; then ok "$check_what"; else fail "$check_what: $(head -c 2000 "$tmp/check.out")"; fi
}
missing() {
  if [ "$ci" = true ]; then
    fail "$1 is not installed (needed for $2; CI=true)"
  else
    echo "SKIP $2: $1 is not installed"
    skips=$((skips + 1))
  fi
}
have() { command -v "$1" >/dev/null 2>&1; }

# The daemon's stop budget: the default in the property table, or what the
# installed configuration sets.
shutdown_ms() { # [CONF]
  v=""
  [ $# -gt 0 ] && v=$(sed -n 's/^[[:space:]]*shutdown\.timeout\.ms[[:space:]]*=[[:space:]]*\([0-9]*\).*/\1/p' "$1" | tail -1)
  [ -n "$v" ] || v=$(sed -n 's/.*INT_PROP("shutdown\.timeout\.ms", *\([a-z_.]*, *\)\{0,1\}[0-9]*, *[0-9]*, *"\([0-9]*\)".*/\2/p' "$root/src/conf/sw_conf_table.c")
  echo "$v"
}

# check_tree DESTDIR PREFIX SYSCONFDIR WHAT: the installed files and units.
check_tree() {
  d=$1 prefix=$2 etc=$3 what=$4
  b="$d$prefix/bin/stormwatch"
  conf="$d$etc/stormwatch/stormwatch.conf"
  for f in "$prefix/bin/stormwatch" "$prefix/lib/systemd/system/stormwatch.service" \
    "$prefix/lib/systemd/system/stormwatch-notify.service" "$etc/stormwatch/stormwatch.conf" \
    "$prefix/share/bash-completion/completions/stormwatch" \
    "$prefix/share/stormwatch/monitoring/stormwatch-rules.yml" \
    "$prefix/share/stormwatch/monitoring/stormwatch-dashboard.json" \
    "$prefix/share/doc/stormwatch/README.md"; do
    [ -f "$d$f" ] && ok "$what: $f" || fail "$what: $f is not installed"
  done
  check "$what: the installed binary runs" "$b" --version
  # Sanitizer builds make no man page (cmake/install.cmake).
  if [ "$what" = "make install" ] && [ "$sanitized" = ON ]; then
    echo "note: a sanitizer build: no man page expected"
  elif have help2man || [ -f "$d$prefix/share/man/man1/stormwatch.1" ]; then
    man1="$d$prefix/share/man/man1/stormwatch.1"
    [ -f "$man1.gz" ] && gzip -dc "$man1.gz" >"$tmp/stormwatch.1" && man1="$tmp/stormwatch.1"
    if [ ! -f "$man1" ]; then
      fail "$what: no man page ($prefix/share/man/man1/stormwatch.1)"
    elif ! have man; then
      missing man "$what: rendering the man page (man-db)"
    else
      LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$man1" >"$tmp/man.txt" 2>"$tmp/man.err"
      [ ! -s "$tmp/man.err" ] && grep -q "^NAME" "$tmp/man.txt" && ok "$what: man page renders without warnings" ||
        fail "$what: man page: $(cat "$tmp/man.err")"
      for cmd in $("$b" --help | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }'); do
        grep -q "^   stormwatch $cmd\$" "$tmp/man.txt" || fail "$what: the man page lacks stormwatch $cmd"
      done
      ok "$what: the man page has every command's --help"
    fi
  else
    missing help2man "$what: man page"
  fi
  # Completion: commands, options, -X properties, from the installed binary.
  comp="$d$prefix/share/bash-completion/completions/stormwatch"
  out=$(bash -c '. "$1"; c() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _stormwatch; echo "${COMPREPLY[*]}"; }
    c "$2" r; c "$2" tail --fr; c "$2" run -X shutdown.ti' _ "$comp" "$b" 2>&1)
  [ "$out" = "$(printf 'replay run report\n--from\nshutdown.timeout.ms=')" ] &&
    ok "$what: bash completion (commands, options, -X properties)" || fail "$what: bash completion gave: $out"
  # Units.
  for unit in stormwatch stormwatch-notify; do
    u="$d$prefix/lib/systemd/system/$unit.service"
    [ -f "$u" ] || continue
    cmd=run
    [ "$unit" = stormwatch-notify ] && cmd=notify
    exec_start=$(sed -n 's/^ExecStart=//p' "$u")
    [ "$exec_start" = "$prefix/bin/stormwatch $cmd -c $etc/stormwatch/stormwatch.conf" ] &&
      ok "$what: $unit ExecStart runs the installed binary on the installed configuration" ||
      fail "$what: $unit ExecStart=$exec_start"
    grep -qx "Restart=on-failure" "$u" && ok "$what: $unit Restart=on-failure" || fail "$what: $unit lacks Restart=on-failure"
    t=$(sed -n 's/^TimeoutStopSec=\([0-9]*\)$/\1/p' "$u")
    ms=$(shutdown_ms "$conf")
    if [ -n "$t" ] && [ -n "$ms" ] && [ $((t * 1000)) -gt "$ms" ] && [ $((t * 1000)) -le $((ms + 60000)) ]; then
      ok "$what: $unit TimeoutStopSec=$t > shutdown.timeout.ms ($ms ms)"
    else
      fail "$what: $unit TimeoutStopSec=$t against shutdown.timeout.ms $ms"
    fi
    # The configuration with the unit's own environment, as the daemon reads it.
    envs=$(sed -n 's/^Environment=//p' "$u")
    # shellcheck disable=SC2086
    check "$what: $unit: stormwatch $cmd accepts the installed configuration" \
      env -i $envs "$b" "$cmd" -c "$conf" -X dump
    if have systemd-analyze; then
      sed "s|^ExecStart=$prefix/bin/stormwatch|ExecStart=$b|" "$u" >"$tmp/$unit.service"
      if systemd-analyze verify --man=no "$tmp/$unit.service" >"$tmp/sa.out" 2>&1 && [ ! -s "$tmp/sa.out" ]; then
        ok "$what: systemd-analyze verify $unit.service"
      else
        fail "$what: systemd-analyze verify $unit.service: $(cat "$tmp/sa.out")"
      fi
    else
      missing systemd-analyze "$what: unit verification"
    fi
  done
  # The shipper's unit: runs the installed binary's ship, keeps its
  # checkpoint in its state directory, restarts on failure, verifies.
  u="$d$prefix/lib/systemd/system/stormwatch-ship.service"
  if [ -f "$u" ]; then
    exec_start=$(sed -n 's/^ExecStart=//p' "$u")
    case $exec_start in
    "$prefix/bin/stormwatch ship "*"--checkpoint \${STATE_DIRECTORY}/checkpoint"*) ok "$what: stormwatch-ship ExecStart runs ship with its checkpoint in the state directory" ;;
    *) fail "$what: stormwatch-ship ExecStart=$exec_start" ;;
    esac
    grep -qx "Restart=on-failure" "$u" && grep -qx "StateDirectory=stormwatch-ship" "$u" &&
      ok "$what: stormwatch-ship Restart=on-failure, StateDirectory" || fail "$what: stormwatch-ship lacks Restart=on-failure or StateDirectory"
    if have systemd-analyze; then
      sed "s|^ExecStart=$prefix/bin/stormwatch|ExecStart=$b|" "$u" >"$tmp/stormwatch-ship.service"
      if systemd-analyze verify --man=no "$tmp/stormwatch-ship.service" >"$tmp/sa.out" 2>&1 && [ ! -s "$tmp/sa.out" ]; then
        ok "$what: systemd-analyze verify stormwatch-ship.service"
      else
        fail "$what: systemd-analyze verify stormwatch-ship.service: $(cat "$tmp/sa.out")"
      fi
    fi
  else
    fail "$what: stormwatch-ship.service is missing"
  fi
  # The two daemons' ports do not clash when both run from the one file.
  grep -q "STORMWATCH_METRICS_LISTEN=127.0.0.1:9466" "$d$prefix/lib/systemd/system/stormwatch-notify.service" &&
    ! grep -q "metrics.listen=127.0.0.1:9466" "$conf" && ok "$what: notify's unit has its own metrics port" ||
    fail "$what: notify's unit and run share a metrics port"
}

# ---- 1. cmake --install into a DESTDIR ---------------------------------------
prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build/CMakeCache.txt")
sanitized=$(sed -n 's/^SW_SANITIZE:BOOL=//p' "$build/CMakeCache.txt")
etc=$prefix/etc
[ "$prefix" = /usr ] && etc=/etc
if DESTDIR="$tmp/root" "$cmake" --install "$build" >"$tmp/install.out" 2>&1; then
  ok "cmake --install $build (prefix $prefix) into a DESTDIR: $(grep -c Installing "$tmp/install.out") files"
  check_tree "$tmp/root" "$prefix" "$etc" "make install"
else
  fail "cmake --install: $(cat "$tmp/install.out")"
fi

# ---- 2. the .deb ---------------------------------------------------------------
if [ "${SW_INSTALL_DEB:-1}" = 0 ]; then
  echo "SKIP the Debian package (SW_INSTALL_DEB=0)"
elif ! have dpkg-deb || ! have cpack; then
  missing "dpkg-deb and cpack" "the Debian package"
else
  deb_build="$tmp/build-deb"
  build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$build/CMakeCache.txt")
  reuse=0
  if [ "$ci" != true ] && [ "${SW_INSTALL_DEB_BUILD:-0}" != 1 ] && [ "$sanitized" != ON ] &&
    [ -x "$build/stormwatch" ] && if have help2man; then [ "$build/stormwatch.1" -nt "$build/stormwatch" ]; fi; then
    case $build_type in RelWithDebInfo | Release) reuse=1 ;; esac
  fi
  # deb_binary: the package tree's binary (and man page), built there or
  # taken from BUILD_DIR; with the latter, `install` does not build `all`.
  deb_binary() {
    if [ $reuse = 1 ]; then
      cp "$build/stormwatch" "$deb_build/stormwatch" &&
        { [ ! -f "$build/stormwatch.1" ] || cp "$build/stormwatch.1" "$deb_build/stormwatch.1"; }
    else
      nice "$cmake" --build "$deb_build" -j "${JOBS:-2}" --target stormwatch &&
        { ! have help2man || nice "$cmake" --build "$deb_build" --target man; }
    fi
  }
  [ $reuse = 1 ] && echo "note: the .deb's binary and man page are $build's (SW_INSTALL_DEB_BUILD=1 builds them again)"
  if nice "$cmake" -S "$root" -B "$deb_build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSW_BUILD_TESTS=OFF \
    -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_SKIP_INSTALL_ALL_DEPENDENCY=$([ $reuse = 1 ] && echo ON || echo OFF) \
    >"$tmp/deb.out" 2>&1 && deb_binary >>"$tmp/deb.out" 2>&1 &&
    (cd "$deb_build" && cpack -G DEB) >>"$tmp/deb.out" 2>&1; then
    [ $reuse = 1 ] && grep -q "^Scanning dependencies\|Building C object" "$tmp/deb.out" &&
      fail "the .deb from $build's binary compiled something: $(grep -m3 'Building C object' "$tmp/deb.out")"
    deb=$(ls "$deb_build"/stormwatch_*.deb 2>/dev/null | head -1)
    [ -n "$deb" ] && ok "cpack -G DEB: $(basename "$deb")" || fail "cpack made no .deb: $(tail -5 "$tmp/deb.out")"
  else
    fail "building the .deb: $(tail -20 "$tmp/deb.out")"
    deb=""
  fi
  if [ -n "$deb" ]; then
    dpkg-deb --info "$deb" >"$tmp/info.txt"
    grep -q "^ Package: stormwatch$" "$tmp/info.txt" && ok "dpkg-deb --info: Package stormwatch" || fail "dpkg-deb --info: $(cat "$tmp/info.txt")"
    depends=$(sed -n 's/^ Depends: //p' "$tmp/info.txt")
    case "$depends" in
      *librdkafka1*libc6* | *libc6*librdkafka1* | *librdkafka1*) ok "Depends from the binary's libraries: $depends" ;;
      *) fail "Depends lacks librdkafka1: '$depends'" ;;
    esac
    dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles 2>/dev/null >"$tmp/conffiles"
    grep -qx "/etc/stormwatch/stormwatch.conf" "$tmp/conffiles" && ok "conffiles: /etc/stormwatch/stormwatch.conf" ||
      fail "conffiles: $(cat "$tmp/conffiles")"
    dpkg-deb --contents "$deb" >"$tmp/contents.txt"
    for f in ./usr/bin/stormwatch ./usr/lib/systemd/system/stormwatch.service ./lib/systemd/system/stormwatch.service \
      ./etc/stormwatch/stormwatch.conf ./usr/share/man/man1/stormwatch.1; do
      case $f in
        ./lib/*) continue ;; # either /usr/lib or /lib: the first is checked
      esac
      if [ "$f" = ./usr/share/man/man1/stormwatch.1 ] && ! have help2man; then continue; fi
      grep -q " $f\(\.gz\)\?\$" "$tmp/contents.txt" && ok "dpkg-deb --contents: $f" || fail "dpkg-deb --contents lacks $f"
    done
    # Every dependency exists in the configured Debian release (when apt knows it).
    if have apt-cache; then
      for p in $(echo "$depends" | tr ',' '\n' | sed 's/(.*//; s/|.*//; s/ //g'); do
        apt-cache show "$p" >/dev/null 2>&1 || fail "dependency $p is not a package of this release"
      done
      ok "every dependency is a package of this release"
    fi
    # A real dpkg -i into a temporary root.
    r="$tmp/dpkg-root"
    mkdir -p "$r/var/lib/dpkg/info" "$r/var/lib/dpkg/updates" "$r/var/lib/dpkg/triggers"
    : >"$r/var/lib/dpkg/status"
    # --path-include: a slim container's dpkg.cfg.d may exclude man pages and docs.
    dpkg_r() {
      dpkg --root="$r" --log=/dev/null --force-not-root --force-depends --force-script-chrootless \
        --path-include='*' "$@"
    }
    if dpkg_r -i "$deb" >"$tmp/dpkg.out" 2>&1; then
      st=$(dpkg-query --root="$r" -W -f='${Status}' stormwatch 2>/dev/null)
      [ "$st" = "install ok installed" ] && ok "dpkg -i into a temporary root: $st" || fail "dpkg status: $st"
      check_tree "$r" /usr /etc "dpkg -i"
      dpkg_r -r stormwatch >"$tmp/dpkg.out" 2>&1
      [ ! -e "$r/usr/bin/stormwatch" ] && [ -f "$r/etc/stormwatch/stormwatch.conf" ] &&
        ok "dpkg -r removes the binary, keeps the conffile" || fail "dpkg -r: $(cat "$tmp/dpkg.out")"
      dpkg_r -P stormwatch >"$tmp/dpkg.out" 2>&1
      [ ! -e "$r/etc/stormwatch/stormwatch.conf" ] && ok "dpkg -P removes the conffile" || fail "dpkg -P: $(cat "$tmp/dpkg.out")"
    else
      fail "dpkg -i into a temporary root: $(cat "$tmp/dpkg.out")"
    fi
  fi
fi

if [ "$fails" -gt 0 ]; then
  echo "test_install: FAILED ($fails failing check(s))"
  exit 1
fi
[ "$skips" -gt 0 ] && echo "test_install: passed ($skips step(s) skipped)" || echo "test_install: passed"
exit 0
