#!/bin/bash
# Container HEALTHCHECK for `stormwatch run`: GET /healthz on the metrics
# endpoint with bash's /dev/tcp (the runtime image has no curl or wget).
# Exit 0 when the answer's status is 200, 1 otherwise.
#
# Usage: stormwatch-healthcheck [HOST:PORT] [PATH]
#   HOST:PORT  default: $STORMWATCH_METRICS_LISTEN (as the daemon reads it),
#              else 127.0.0.1:9464; a wildcard host (0.0.0.0, ::, empty)
#              is probed on loopback
#   PATH       default /healthz (use /readyz for readiness)
# Environment: HEALTHCHECK_TIMEOUT seconds to wait for the status line (default 3).
set -u

listen=${1:-${STORMWATCH_METRICS_LISTEN:-127.0.0.1:9464}}
path=${2:-/healthz}
timeout=${HEALTHCHECK_TIMEOUT:-3}

port=${listen##*:}
host=${listen%:*}
host=${host#[}
host=${host%]}
case "$host" in
  ''|0.0.0.0|'*') host=127.0.0.1 ;;
  ::) host=::1 ;;
esac
case "$port" in
  ''|*[!0-9]*) echo "stormwatch-healthcheck: no port in '$listen'" >&2; exit 1 ;;
esac

# Connect, send a minimal HTTP/1.0 request, read the status line.
if ! exec 3<>"/dev/tcp/$host/$port"; then
  echo "stormwatch-healthcheck: cannot connect to $host:$port" >&2
  exit 1
fi
printf 'GET %s HTTP/1.0\r\nHost: %s\r\nConnection: close\r\n\r\n' "$path" "$host" >&3
status=""
if ! IFS=' ' read -r -t "$timeout" _proto status _rest <&3; then
  echo "stormwatch-healthcheck: no answer from $host:$port$path within ${timeout}s" >&2
  exec 3<&-
  exit 1
fi
exec 3<&-
if [ "$status" = 200 ]; then
  exit 0
fi
echo "stormwatch-healthcheck: $host:$port$path answered ${status:-nothing}" >&2
exit 1
