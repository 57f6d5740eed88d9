#!/bin/sh
# Installs the Debian packages stormwatch needs to build and test, only
# those that are missing. Uses apt-get as root, or through sudo.
# Usage: scripts/install-deps.sh [build|test|demo|bench|all]
set -eu
what=${1:-test}
pkgs="build-essential cmake pkg-config librdkafka-dev libavro-dev zlib1g-dev"
case "$what" in
  build|demo) ;;
  test|all|bench) pkgs="$pkgs libcmocka-dev libjansson-dev" ;;
  *) echo "install-deps.sh: unknown target '$what' (expected build, test, demo, bench or all)" >&2; exit 2 ;;
esac
missing=""
for p in $pkgs; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done
[ -z "$missing" ] && exit 0
echo "install-deps: installing:$missing"
if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1; then
  SUDO="sudo"
else
  echo "install-deps: need root or sudo to install:$missing" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
