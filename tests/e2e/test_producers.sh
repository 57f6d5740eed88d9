#!/bin/sh
# Real producers side by side (issue 34, docs/producing.md): the same
# stormlog telemetry file produced keyed by job_id by three producers users
# run, each into a topic of its own on the mock cluster (`stormwatch mock`),
# each analysed by `stormwatch run` at its defaults (repartition=auto,
# repartition.partitioner=auto) in a group of its own:
#   kcat -P -K (librdkafka's default partitioner: CRC-32),
#   kafka-python's KafkaProducer (murmur2, as the Java client),
#   rsyslog tailing the file with imfile, job_id parsed by mmjsonparse and
#   sent by omkafka as the key (dynaKey, partitions.auto: librdkafka's
#   partitioner, CRC-32).
# For each: nothing forwarded (stormwatch_forwarded_messages_total, every
# reason), the partitioner the group detected is the producer's, and every
# job's records equal `stormwatch replay` of the same file (summaries aside).
# Each run starts once its topic holds the whole file (a backlog) and
# prints its throughput: the events over the time from the first analysed
# to the last, as its metrics saw them (0.1 s polls; indicative: the mock
# shares the machine). SW_PRODUCERS_SAMPLES sets the samples per rank; the
# mock keeps ~5 MiB per partition and a job's events share one partition,
# so beyond ~250 (~1.2 MB a job, several jobs in a partition) the oldest
# input is deleted before a run starts and the run never sees it all.
# Registered in CTest as `test_producers.sh` (SW_BIN: the stormwatch binary).
# Needs kcat, rsyslog + rsyslog-kafka and python3-kafka (scripts/install-deps.sh
# test); without them it skips (exit 77) outside CI and fails in CI.
set -u
bin=${SW_BIN:?SW_BIN: the stormwatch binary}
py=/usr/bin/python3
[ -x "$py" ] || py=python3
missing=""
command -v kcat >/dev/null 2>&1 || missing="$missing kcat"
command -v rsyslogd >/dev/null 2>&1 || [ -x /usr/sbin/rsyslogd ] || missing="$missing rsyslog"
rsyslogd=$(command -v rsyslogd 2>/dev/null || echo /usr/sbin/rsyslogd)
[ -e /usr/lib/x86_64-linux-gnu/rsyslog/omkafka.so ] || ls /usr/lib/*/rsyslog/omkafka.so >/dev/null 2>&1 ||
  missing="$missing rsyslog-kafka"
"$py" -c 'import kafka' 2>/dev/null || missing="$missing python3-kafka"
if [ -n "$missing" ]; then
  echo "test_producers: not installed:$missing (scripts/install-deps.sh test)"
  [ "${CI:-}" = true ] && exit 1
  exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sw_producers.XXXXXX")
pids=""
cleanup() {
  rev=""
  for p in $pids; do rev="$p $rev"; done # the mock last
  for p in $rev; do kill "$p" 2>/dev/null; done
  for p in $pids; do wait "$p" 2>/dev/null; done
  [ "${KEEP_TMP:-}" = 1 ] || rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fails=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# 15 s of event time: 12 jobs x 8 ranks x 150 samples, one storm each.
# SW_PRODUCERS_SAMPLES: samples per rank (more for a throughput measurement).
"$bin" gen --jobs 12 --ranks 8 --samples "${SW_PRODUCERS_SAMPLES:-150}" --storms 1 --seed 34 >"$tmp/telemetry.jsonl" 2>/dev/null
total=$(wc -l <"$tmp/telemetry.jsonl")
"$bin" replay "$tmp/telemetry.jsonl" >"$tmp/want.jsonl" 2>"$tmp/replay.err" ||
  { echo "FAIL: replay: $(cat "$tmp/replay.err")"; exit 1; }

# Every topic made up front (the mock has no controller for the Admin API).
topics=""
for t in kcat kpy rsys; do
  topics="$topics --topic in.$t:8 --topic out.$t:8 --topic dlq.$t:8 --topic g.$t.repartition:8"
  topics="$topics --topic state.$t:1"
done
# shellcheck disable=SC2086
"$bin" mock --brokers 1 $topics --bootstrap-file "$tmp/bootstrap" >/dev/null 2>"$tmp/mock.err" &
pids="$pids $!"
i=0
while [ ! -s "$tmp/bootstrap" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
[ -s "$tmp/bootstrap" ] || { echo "FAIL: the mock did not start: $(cat "$tmp/mock.err")"; exit 1; }
bs=$(cat "$tmp/bootstrap")

# ---- the analysers: one at a time, once its input is all there (a backlog) -------
port_of() {
  sed -n 's/.*metrics on http.*(port \([0-9]*\)).*/\1/p' "$tmp/run.$1.err" | head -n 1
}
scrape() {
  "$py" -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=5).read().decode())' "$1" 2>/dev/null
}

# ---- the producers --------------------------------------------------------------
# kcat: "job_id<TAB>line" per message, -K splitting the key off.
"$py" - "$tmp/telemetry.jsonl" >"$tmp/keyed.tsv" <<'PYEOF'
import json, sys
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    sys.stdout.write("%s\t%s\n" % (json.loads(line)["job_id"], line))
PYEOF
t0=$(date +%s.%N)
kcat -b "$bs" -t in.kcat -P -K "$(printf '\t')" -l "$tmp/keyed.tsv" 2>"$tmp/kcat.err" ||
  fail "kcat -P: $(cat "$tmp/kcat.err")"
t1=$(date +%s.%N)
# kafka-python: KafkaProducer's default partitioner (murmur2).
"$py" - "$bs" "$tmp/telemetry.jsonl" 2>"$tmp/kpy.err" <<'PYEOF' || fail "kafka-python: $(cat "$tmp/kpy.err")"
import json, sys
from kafka import KafkaProducer
p = KafkaProducer(bootstrap_servers=sys.argv[1].split(","), api_version=(2, 0, 0), linger_ms=5)
for line in open(sys.argv[2], "rb"):
    line = line.rstrip(b"\n")
    p.send("in.kpy", key=json.loads(line)["job_id"].encode(), value=line)
p.flush(60)
p.close()
PYEOF
t2=$(date +%s.%N)
# rsyslog: imfile follows a stormlog sink file that grows while it runs.
mkdir -p "$tmp/rs" "$tmp/sink"
: >"$tmp/sink/telemetry.jsonl"
modir=$(dirname "$(ls /usr/lib/*/rsyslog/omkafka.so | head -n 1)")
cat >"$tmp/rsyslog.conf" <<EOF
global(workDirectory="$tmp/rs" maxMessageSize="64k")
module(load="$modir/imfile.so" mode="polling" PollingInterval="1")
module(load="$modir/mmjsonparse.so")
module(load="$modir/omkafka.so")
template(name="sw_value" type="string" string="%rawmsg%")
template(name="sw_key" type="string" string="%\$!job_id%")
input(type="imfile" File="$tmp/sink/telemetry.jsonl" Tag="stormlog" ruleset="sw")
ruleset(name="sw") {
  action(type="mmjsonparse" cookie="" useRawMsg="on")
  action(type="omkafka" broker=["$bs"] topic="in.rsys" template="sw_value"
         dynaKey="on" key="sw_key" partitions.auto="on"
         confParam=["queue.buffering.max.ms=5"])
}
EOF
"$rsyslogd" -n -f "$tmp/rsyslog.conf" -i "$tmp/rs/rsyslogd.pid" >"$tmp/rsyslog.out" 2>&1 &
rspid=$!
pids="$pids $rspid"
half=$((total / 2))
head -n "$half" "$tmp/telemetry.jsonl" >>"$tmp/sink/telemetry.jsonl"
sleep 1
tail -n +"$((half + 1))" "$tmp/telemetry.jsonl" >>"$tmp/sink/telemetry.jsonl"

# ---- wait for every run to analyse every event, then judge ----------------------
# (stage="engine": with repartition=auto each input message once, analysed
# or forwarded, and each copy once more.)
engine_in() {
  sed -n 's/^stormwatch_events_in_total{.*stage="engine"} \([0-9]*\)$/\1/p' "$1" |
    awk '{ s += $1 } END { print s + 0 }'
}
# Summaries come when a job has been idle for job.idle.ms: not waited for.
nrec=$(grep -vc '"action": *"summary"' "$tmp/want.jsonl")
# rsyslog has shipped the file when in.rsys ends at $total messages.
ends() {
  kcat -b "$bs" -C -t "$1" -o -1 -e -q -f '%p %o\n' 2>/dev/null |
    awk '{ if ($2 + 1 > e[$1]) e[$1] = $2 + 1 } END { for (p in e) s += e[p]; print s + 0 }'
}
# Progress-based: gives up after 30 s without a new line shipped.
i=0
shipped=0
while [ "$shipped" -lt "$total" ] && [ $i -lt 150 ]; do
  sleep 0.2
  now=$(ends in.rsys)
  if [ "$now" -gt "$shipped" ]; then i=0; else i=$((i + 1)); fi
  shipped=$now
done
[ "$shipped" -eq "$total" ] || fail "rsyslog shipped $shipped of $total lines: $(tail -n 3 "$tmp/rsyslog.out")"
for t in kcat kpy rsys; do
  "$bin" run -b "$bs" -X input.topics=in.$t -X group.id=g.$t -X output.topic=out.$t \
    -X dlq.topic=dlq.$t -X state.topic=state.$t -X metrics.listen=127.0.0.1:0 \
    >"$tmp/run.$t.out" 2>"$tmp/run.$t.err" &
  rpid=$!
  port=""
  got=0
  out=0
  i=0
  first=""
  # Progress-based: every event in, and the replay's records out.
  while [ $i -lt 1200 ]; do
    [ -n "$port" ] || port=$(port_of $t)
    if [ -n "$port" ] && scrape "$port" >"$tmp/m.$t"; then
      got=$(engine_in "$tmp/m.$t")
      [ -z "$first" ] && [ "$got" -gt 0 ] && first=$(date +%s.%N)
      out=$(sed -n '/action="summary"/d; s/^stormwatch_records_out_total{[^}]*} \([0-9]*\)$/\1/p' "$tmp/m.$t" |
        awk '{ s += $1 } END { print s + 0 }')
      [ "$got" -ge "$total" ] && [ "$out" -ge "$nrec" ] && break
    fi
    sleep 0.1
    i=$((i + 1))
  done
  last=$(date +%s.%N)
  if [ "$got" -lt "$total" ]; then
    fail "$t: run analysed $got of $total events: $(tail -n 5 "$tmp/run.$t.err")"
    kill "$rpid" 2>/dev/null
    wait "$rpid" 2>/dev/null
    continue
  fi
  # From the first event analysed to the last (0.1 s polls: indicative).
  awk -v a="$first" -v b="$last" -v n="$total" -v t=$t 'BEGIN {
    printf "%s: %d events analysed in %.2f s after the first (%.0f/s)\n", t, n, b - a, n / (b - a) }' 
  fwd=$(sed -n 's/^stormwatch_forwarded_messages_total{reason="\([a-z_]*\)"} \([0-9]*\)$/\1=\2/p' "$tmp/m.$t" | tr '\n' ' ')
  nfwd=$(sed -n 's/^stormwatch_forwarded_messages_total{[^}]*} \([0-9]*\)$/\1/p' "$tmp/m.$t" |
    awk '{ s += $1 } END { print s + 0 }')
  [ "$nfwd" -eq 0 ] && ok "$t: $got events analysed, none forwarded" ||
    fail "$t: $nfwd of $total forwarded ($fwd)"
  grep -o 'producers place job_id keys with [a-z0-9]*' "$tmp/run.$t.err" | head -n 1 | sed "s/^/$t: /"
  if grep -q ' WARN ' "$tmp/run.$t.err"; then fail "$t: run warned: $(grep ' WARN ' "$tmp/run.$t.err" | head -n 3)"; fi
  kcat -b "$bs" -C -t out.$t -e -q -f '%s\n' >"$tmp/got.$t.jsonl" 2>/dev/null
  if "$py" - "$tmp/want.jsonl" "$tmp/got.$t.jsonl" $t <<'PYEOF'; then ok "$t: every job's records equal the replay's"; else fail "$t: records differ from the replay"; fi
import json, sys
def by_job(path):
    d = {}
    for line in open(path):
        if not line.strip():
            continue
        r = json.loads(line)
        if r.get("action") == "summary":
            continue
        d.setdefault(r.get("job_id"), []).append(r)
    return d
want, got = by_job(sys.argv[1]), by_job(sys.argv[2])
bad = 0
for job in sorted(set(want) | set(got)):
    w, g = want.get(job, []), got.get(job, [])
    same = len(w) == len(g) and all(all(gr.get(k) == v for k, v in wr.items()) for wr, gr in zip(w, g))
    if not same:
        bad += 1
        print("%s %s: %d records, the replay %d" % (sys.argv[3], job, len(g), len(w)), file=sys.stderr)
print("%s: %d jobs, %d records compared" % (sys.argv[3], len(want), sum(len(v) for v in want.values())))
sys.exit(1 if bad else 0)
PYEOF
  kill "$rpid" 2>/dev/null
  wait "$rpid" 2>/dev/null
done
awk -v a="$t0" -v b="$t1" -v c="$t2" -v n="$total" 'BEGIN {
  printf "produced %d events: kcat %.2f s, kafka-python %.2f s\n", n, b - a, c - b }'

# The choice is the group's, recorded: a restarted member (a new process of
# the same group) takes it from the record without detecting again.
"$bin" run -b "$bs" -X input.topics=in.kcat -X group.id=g.kcat -X output.topic=out.kcat \
  -X dlq.topic=dlq.kcat -X state.topic=state.kcat >/dev/null 2>"$tmp/run.kcat2.err" &
pids="$pids $!"
i=0
while ! grep -q 'repartition=auto: a message keyed' "$tmp/run.kcat2.err" && [ $i -lt 300 ]; do
  sleep 0.1
  i=$((i + 1))
done
if grep -q "analysed where it is when crc32 places its key there (the group's record" "$tmp/run.kcat2.err"; then
  ok "kcat: a restarted member takes crc32 from the group's record"
else
  fail "kcat: a restarted member did not take the record: $(grep 'repartition=auto' "$tmp/run.kcat2.err")"
fi
[ $fails -eq 0 ] && echo "test_producers: all passed" || echo "test_producers: $fails failed"
[ $fails -eq 0 ]
