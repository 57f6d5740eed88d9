#!/bin/bash
# The last step of `make demo`: the paging path with a real Alertmanager,
# when one is installed (Debian: prometheus-alertmanager). Starts, on
# loopback and in a scratch directory, an Alertmanager (own config and
# storage, no clustering), a mock Kafka cluster, `stormwatch run` and
# `stormwatch notify`, produces telemetry with injected storms, and shows
# the alerts as Alertmanager holds them (GET /api/v2/alerts): one firing
# alert per open episode, with notify's labels. Without Alertmanager it
# says how to see them. Stops only the processes it started.
# Usage: scripts/demo-alertmanager.sh [path/to/stormwatch]
set -eu
bin=${1:-build/stormwatch}
am=$(command -v prometheus-alertmanager || command -v alertmanager || true)
if [ -z "$am" ]; then
  cat <<EOF
stormwatch demo: to see the alerts as Alertmanager holds them, install it
(apt-get install prometheus-alertmanager, or scripts/install-deps.sh test) and run
make demo again, or point notify at yours:
  stormwatch notify -b BROKERS -X alertmanager.url=http://ALERTMANAGER:9093
  curl -s http://ALERTMANAGER:9093/api/v2/alerts
EOF
  exit 0
fi
tmp=$(mktemp -d)
pids=""
cleanup() {
  for p in $pids; do kill "$p" 2>/dev/null || true; done
  for p in $pids; do wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

# GET http://127.0.0.1:$1$2 (bash /dev/tcp: no curl needed); body on stdout.
http_get() {
  exec 3<>"/dev/tcp/127.0.0.1/$1" || return 1
  printf 'GET %s HTTP/1.0\r\nHost: localhost\r\n\r\n' "$2" >&3
  sed '1,/^\r$/d' <&3
  exec 3<&-
}
free_port() {
  for p in $(seq 19093 19193); do
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return; fi
  done
  return 1
}

port=$(free_port)
cat > "$tmp/alertmanager.yml" <<'EOF'
route:
  receiver: demo
  group_wait: 1s
receivers:
  - name: demo
EOF
"$am" --config.file="$tmp/alertmanager.yml" --storage.path="$tmp/am" \
  --web.listen-address="127.0.0.1:$port" --cluster.listen-address= >"$tmp/am.log" 2>&1 &
pids="$pids $!"
"$bin" mock --brokers 1 --topic stormwatch.telemetry:4 --topic stormwatch.alerts:4 \
  --topic stormwatch.dlq:1 --topic stormwatch.state:1 --topic stormwatch.notify.dlq:1 \
  --bootstrap-file "$tmp/boot" >/dev/null 2>"$tmp/mock.log" &
pids="$pids $!"
for _ in $(seq 100); do [ -s "$tmp/boot" ] && break; sleep 0.1; done
boot=$(cat "$tmp/boot")
echo "stormwatch demo: Alertmanager $("$am" --version 2>&1 | head -1 | awk '{print $3}') at http://127.0.0.1:$port, Kafka at $boot"
# Jobs stay open (no idle summary) so that their episodes are still firing.
"$bin" run -b "$boot" -X job.idle.ms=600000 -X kafka.consumer.session.timeout.ms=6000 \
  >/dev/null 2>"$tmp/run.log" &
pids="$pids $!"
"$bin" notify -b "$boot" -X "alertmanager.url=http://127.0.0.1:$port" \
  -X alertmanager.labels=cluster=make-demo -X kafka.consumer.session.timeout.ms=6000 \
  >/dev/null 2>"$tmp/notify.log" &
pids="$pids $!"
"$bin" gen --jobs 3 --ranks 16 --samples 400 --seed 7 2>/dev/null |
  "$bin" produce -t stormwatch.telemetry -b "$boot" >/dev/null 2>&1
echo "stormwatch demo: telemetry of 3 jobs with a storm each -> run -> stormwatch.alerts -> notify -> Alertmanager"
alerts=""
for _ in $(seq 60); do
  alerts=$(http_get "$port" /api/v2/alerts 2>/dev/null || true)
  [ "$(printf '%s' "$alerts" | grep -o '"alertname":"GPUMemoryStorm"' | wc -l)" -ge 3 ] && break
  sleep 1
done
echo "stormwatch demo: the alerts as Alertmanager holds them (GET /api/v2/alerts):"
if command -v python3 >/dev/null 2>&1; then
  printf '%s' "$alerts" | python3 -c '
import json, sys
for a in sorted(json.load(sys.stdin), key=lambda a: a["labels"].get("job_id", "")):
    l, s = a["labels"], a["annotations"]
    print("  %-8s %-9s job %s episode %s severity %s (cluster=%s) until %s" % (
        a["status"]["state"], l["alertname"], l.get("job_id"), l.get("episode"),
        l.get("severity"), l.get("cluster"), a["endsAt"]))
    print("           " + s.get("summary", ""))'
else
  printf '  %s\n' "$alerts"
fi
echo "stormwatch demo: notify re-sends each open episode every alertmanager.resend.ms, so it stays firing until its resolve"
