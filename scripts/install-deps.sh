#!/bin/sh
# Installs the Debian packages stormwatch needs to build and test, only
# those that are missing. Uses apt-get as root, or through sudo.
# Usage: scripts/install-deps.sh [build|test|demo|bench|all]
#   build, demo        compiler, CMake, pkg-config, ccache (scripts/build.sh
#                      compiles through it: a new clone builds from the
#                      cache) and the libraries the
#                      binary links (librdkafka, libmicrohttpd, zlib, libcurl
#                      for notify's HTTP sinks; libssl-dev: libcrypto for
#                      the webhook signature; Avro C)
#   test, bench, all   also what the tests link and call: cmocka and jansson
#                      (unit tests), python3 + python3-yaml and docker-compose
#                      (tests/e2e/test_deploy.sh: compose and structural checks),
#                      kubectl (kubernetes-client, only when no kubectl is on
#                      PATH: kustomize rendering), clang + libclang-rt-14-dev
#                      (libFuzzer: test_fuzz_short runs scripts/fuzz.sh),
#                      chromium (test_report_browser: the report, headless),
#                      prometheus-alertmanager (test_notify_e2e: a real
#                      Alertmanager 0.25 that notify delivers to; amtool), kcat
#                      (test_tools: tail -J/-f/-o/-G side by side with kcat),
#                      rsyslog, rsyslog-kafka and python3-kafka
#                      (test_producers: kcat, omkafka and kafka-python keying
#                      by job_id into the mock),
#                      prometheus (promtool: test_monitoring checks the
#                      shipped rules, dashboard queries and scrapes),
#                      help2man, dpkg-dev, man-db and systemd (test_install:
#                      the man page and `man --warnings`, `cpack -G DEB` with
#                      dpkg-shlibdeps, `systemd-analyze verify` of the units)
#   bench, all         also linux-perf (bench/profile.sh: cpu-clock profiles)
#                      and valgrind (callgrind instruction counts)
set -eu
what=${1:-test}
pkgs="build-essential cmake pkg-config ccache librdkafka-dev libavro-dev zlib1g-dev libmicrohttpd-dev libcurl4-openssl-dev libssl-dev"
case "$what" in
  build|demo) ;;
  test|all|bench) pkgs="$pkgs libcmocka-dev libjansson-dev python3 python3-yaml python3-avro docker-compose clang libclang-rt-14-dev chromium prometheus-alertmanager prometheus help2man dpkg-dev man-db systemd kcat clang-format rsyslog rsyslog-kafka python3-kafka"
    # Debian 12's kubectl, unless one (e.g. a newer upstream build) is on PATH.
    command -v kubectl >/dev/null 2>&1 || pkgs="$pkgs kubernetes-client" ;;
  *) echo "install-deps.sh: unknown target '$what' (expected build, test, demo, bench or all)" >&2; exit 2 ;;
esac
case "$what" in
  bench|all) pkgs="$pkgs linux-perf valgrind" ;;
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
