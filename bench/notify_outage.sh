#!/usr/bin/env bash
# stormwatch notify against an Alertmanager that answers 500 for OUTAGE_S
# seconds (default 600: issue 28, point 8), at notify's defaults (retry
# backoff 500 ms doubling to 60 s, re-sends of open episodes every 60 s).
# Alert records keep arriving during the outage: one job's 4 records
# (trigger, resolve, trigger, summary: tests/fixtures/gen14.jsonl replayed)
# every JOB_EVERY_S (default 20 s). Measured: notify's RSS at the start and
# the end of the outage and its peak (VmHWM), the records accepted after
# the recovery (each once; re-sends of open episodes counted apart) and how
# long they took, nothing dead-lettered; then Alertmanager down again with
# one job waiting, and how long SIGTERM takes to stop notify (exit status)
# and whether the next start delivers what waited.
#
#   bench/notify_outage.sh [build/stormwatch]    OUTAGE_S=600 JOB_EVERY_S=20
set -Eeuo pipefail
bin=$(realpath "${1:-build/stormwatch}")
root=$(cd "$(dirname "$0")/.." && pwd)
outage=${OUTAGE_S:-600}
every=${JOB_EVERY_S:-20}
dir=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT

# The stub Alertmanager: 500 unless $dir/up exists; accepted bodies logged.
cat > "$dir/am.py" <<'PY'
import http.server, json, os, sys
d = sys.argv[1]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get('Content-Length', 0)))
        up = os.path.exists(os.path.join(d, 'up'))
        with open(os.path.join(d, 'requests'), 'a') as f:
            f.write('200\n' if up else '500\n')
        if up:
            a = json.loads(body)[0]
            with open(os.path.join(d, 'accepted'), 'a') as f:
                f.write('%s/%s/%s/%s\n' % (a['labels']['job_id'], a['labels']['episode'],
                                           a['annotations']['action'], a['annotations']['revision']))
        self.send_response(200 if up else 500)
        self.send_header('Content-Length', '2')
        self.end_headers()
        self.wfile.write(b'{}')
    def log_message(self, *a):
        pass
s = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)
open(os.path.join(d, 'am.port.tmp'), 'w').write(str(s.server_address[1]))
os.rename(os.path.join(d, 'am.port.tmp'), os.path.join(d, 'am.port'))
s.serve_forever()
PY
python3 "$dir/am.py" "$dir" &
"$bin" mock --brokers 1 --topic alerts:2 --topic ndlq:1 --bootstrap-file "$dir/boot" \
    > /dev/null 2> "$dir/mock.err" &
for _ in $(seq 100); do [ -s "$dir/boot" ] && [ -s "$dir/am.port" ] && break; sleep 0.1; done
boot=$(cat "$dir/boot")
port=$(cat "$dir/am.port")
"$bin" replay --window-samples 32 --stale-ms 0 "$root/tests/fixtures/gen14.jsonl" > "$dir/records"
per_job=$(wc -l < "$dir/records")
produce_job() { # job name
    sed "s/job-14/$1/g" "$dir/records" > "$dir/job.jsonl"
    "$bin" produce --raw -q -b "$boot" -t alerts "$dir/job.jsonl" 2> /dev/null
}
rss() { awk '/VmRSS/{print $2}' "/proc/$1/status"; }
start_notify() { # log
    "$bin" notify -b "$boot" -X output.topic=alerts -X notify.dlq.topic=ndlq \
        -X notify.group.id=bench -X "alertmanager.url=http://127.0.0.1:$port" \
        -X log.level=info 2> "$1" &
    notify=$!
}
start_notify "$dir/notify.err"
produce_job out-0
jobs_made=1
for _ in $(seq 300); do grep -q retrying "$dir/notify.err" && break; sleep 0.1; done
t0=$(date +%s)
rss0=$(rss $notify)
samples=$dir/rss
while [ $(( $(date +%s) - t0 )) -lt "$outage" ]; do
    sleep "$every"
    produce_job "out-$jobs_made"
    jobs_made=$((jobs_made + 1))
    rss $notify >> "$samples"
done
rss1=$(rss $notify)
hwm=$(awk '/VmHWM/{print $2}' "/proc/$notify/status")
requests_down=$(wc -l < "$dir/requests")
want=$((jobs_made * per_job))
touch "$dir/up"
t1=$(date +%s.%N)
got=0
while :; do
    got=$( (sort -u "$dir/accepted" 2> /dev/null || true) | grep -c '^out-' || true)
    [ "$got" -ge "$want" ] && break
    [ "$(echo "$(date +%s.%N) - $t1 > 300" | bc)" = 1 ] && break
    sleep 0.2
done
drain=$(echo "$(date +%s.%N) - $t1" | bc)
accepted_all=$(wc -l < "$dir/accepted")
# Down again, one job waiting: the stop.
rm -f "$dir/up"
produce_job stop-0
sleep 5
t2=$(date +%s.%N)
kill -TERM $notify
rc=0
wait $notify || rc=$?
stop_s=$(echo "$(date +%s.%N) - $t2" | bc)
touch "$dir/up"
start_notify "$dir/notify2.err"
for _ in $(seq 1200); do
    [ "$(grep -c '^stop-0/' "$dir/accepted" || true)" -ge "$per_job" ] && break
    sleep 0.1
done
next=$(sort -u "$dir/accepted" | grep -c '^stop-0/' || true)
kill -TERM $notify
wait $notify || true
dlq=$("$bin" tail -b "$boot" -t ndlq -e 2> /dev/null | wc -l || true)
printf 'notify, Alertmanager answering 500 for %d s (%d requests, all refused), %d jobs x %d records arriving meanwhile:\n' \
    "$outage" "$requests_down" "$jobs_made" "$per_job"
printf '  RSS %d KiB at the start of the outage, %d KiB at its end, peak (VmHWM) %d KiB; samples min %d max %d KiB\n' \
    "$rss0" "$rss1" "$hwm" "$(sort -n "$samples" | head -1)" "$(sort -n "$samples" | tail -1)"
printf '  after the recovery: %d of %d distinct records accepted in %.1f s; %d requests accepted in all (re-sends of open episodes included)\n' \
    "$got" "$want" "$drain" "$accepted_all"
printf '  down again, one job waiting: SIGTERM stopped notify in %.2f s (exit %d); the next start delivered %d of its %d records; dead letters: %s\n' \
    "$stop_s" "$rc" "$next" "$per_job" "$dlq"
