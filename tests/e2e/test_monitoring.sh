#!/bin/sh
# The shipped monitoring, checked with the tools that will read it.
# Registered in CTest as `test_monitoring.sh <repo-root>` (SW_BIN: the
# stormwatch binary).
#
#  1. promtool check rules deploy/monitoring/stormwatch-rules.yml
#  2. promtool test rules deploy/monitoring/stormwatch-rules.test.yml, and
#     every alert rule has a test in which it fires
#  3. the Grafana dashboard (deploy/monitoring/stormwatch-dashboard.json)
#     against Grafana's documented dashboard JSON model (no Grafana server
#     runs here): unique panel ids, grid positions, datasource through the
#     ${datasource} variable, refIds; every panel query and variable query,
#     with Grafana's variables expanded, parsed by promtool (as recording
#     rules of a generated file)
#  4. the compose stack's Prometheus configuration (promtool check config,
#     with the rules where the compose file mounts them) and Alertmanager
#     configuration (amtool check-config); the alert-log receiver given a
#     real Alertmanager webhook payload
#  5. a live scrape: `stormwatch run` (on its embedded mock cluster, with a
#     schema registry configured, while telemetry flows) and `stormwatch
#     notify` against it; both scrapes pass `promtool check metrics`, every
#     metric a rule or a panel names is a family of one of them (kube_*
#     come from kube-state-metrics, in Kubernetes only), and notify exports
#     only its own families; run's repeat offenders by host
#     (stormwatch_first_cause_host_total) count the generated jobs' storms
#     on the hosts gen put their storm ranks on
#
# A missing tool (promtool: Debian package prometheus; amtool:
# prometheus-alertmanager; python3 with yaml) fails the test when CI=true
# and skips that step otherwise.
# Exit status: 0 passed (or skipped outside CI), 1 failed, 2 usage.
set -u

if [ $# -ne 1 ] || [ ! -d "$1" ]; then
  echo "usage: test_monitoring.sh REPO_ROOT" >&2
  exit 2
fi
root=$(cd "$1" && pwd)
ci=${CI:-false}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_monitoring.XXXXXX") || exit 1
pids=""
cleanup() {
  for p in $pids; do kill "$p" 2>/dev/null; done
  for p in $pids; do wait "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fails=0
skips=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
missing() {
  if [ "$ci" = true ]; then
    fail "$1 is not installed (needed for $2; CI=true)"
  else
    echo "SKIP $2: $1 is not installed"
    skips=$((skips + 1))
  fi
}

mon="$root/deploy/monitoring"
rules="$mon/stormwatch-rules.yml"
dash="$mon/stormwatch-dashboard.json"
promtool=${PROMTOOL:-promtool}
amtool=${AMTOOL:-amtool}
py=""
for cand in ${PYTHON:-} python3; do
  if command -v "$cand" >/dev/null 2>&1 && "$cand" -c 'import yaml' >/dev/null 2>&1; then
    py=$cand
    break
  fi
done
bin=${SW_BIN:-}
if [ -z "$bin" ] && [ -x "$root/build/stormwatch" ]; then bin="$root/build/stormwatch"; fi

have_promtool=false
if command -v "$promtool" >/dev/null 2>&1; then
  have_promtool=true
  echo "using $("$promtool" --version 2>&1 | head -1)"
else
  missing promtool "rule and query checks (promtool)"
fi

# ---- 1, 2: the rules --------------------------------------------------------
if $have_promtool; then
  if "$promtool" check rules "$rules" >"$tmp/out" 2>&1; then
    ok "promtool check rules: $(grep -o '[0-9]* rules found' "$tmp/out")"
  else
    fail "promtool check rules: $(cat "$tmp/out")"
  fi
  if (cd "$mon" && "$promtool" test rules stormwatch-rules.test.yml) >"$tmp/out" 2>&1; then
    ok "promtool test rules stormwatch-rules.test.yml"
  else
    fail "promtool test rules: $(cat "$tmp/out")"
  fi
fi

# ---- 3: the dashboard (and, in Python, the coverage of the rule tests) ------
if [ -z "$py" ]; then
  missing "python3 with PyYAML" "dashboard and coverage checks"
else
  "$py" - "$rules" "$mon/stormwatch-rules.test.yml" "$dash" "$tmp/dashboard-queries.yml" \
    "$tmp/names.txt" <<'PYEOF'
import json, re, sys
import yaml

rules_path, tests_path, dash_path, out_rules, out_names = sys.argv[1:6]
fails = 0
def check(cond, what):
    global fails
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        fails += 1

with open(rules_path) as f:
    rules = yaml.safe_load(f)
with open(tests_path) as f:
    tests = yaml.safe_load(f)
alerts = [r for g in rules["groups"] for r in g["rules"] if "alert" in r]
fired = {t["alertname"] for case in tests["tests"] for t in case.get("alert_rule_test", [])
         if t.get("exp_alerts")}
for a in alerts:
    check(a["alert"] in fired, "rule %s has a unit test in which it fires" % a["alert"])
    check(a.get("labels", {}).get("severity") in ("warning", "critical"),
          "rule %s has a severity" % a["alert"])
    check(bool(a.get("annotations", {}).get("summary")), "rule %s has a summary" % a["alert"])
check(len(alerts) >= 10, "%d alert rules" % len(alerts))

with open(dash_path) as f:
    d = json.load(f)
check(isinstance(d.get("uid"), str) and 0 < len(d["uid"]) <= 40, "dashboard uid %r" % d.get("uid"))
check(bool(d.get("title")) and isinstance(d.get("schemaVersion"), int), "dashboard title and schemaVersion")
tvars = {v["name"]: v for v in d.get("templating", {}).get("list", [])}
check(tvars.get("datasource", {}).get("type") == "datasource" and tvars["datasource"].get("query") == "prometheus",
      "dashboard variable datasource selects a Prometheus datasource")
panels = d.get("panels", [])
ids = [p.get("id") for p in panels]
check(len(ids) == len(set(ids)) and all(isinstance(i, int) for i in ids), "panel ids unique integers")
KINDS = {"row", "timeseries", "stat", "heatmap", "gauge", "bargauge", "table"}
exprs = []
titles = []
for p in panels:
    t = p.get("title", "")
    gp = p.get("gridPos", {})
    check(p.get("type") in KINDS, "panel %r: type %s" % (t, p.get("type")))
    check(all(isinstance(gp.get(k), int) for k in ("x", "y", "w", "h")) and gp["x"] + gp["w"] <= 24,
          "panel %r: gridPos within 24 columns" % t)
    if p.get("type") == "row":
        continue
    titles.append(t)
    check(p.get("datasource") == {"type": "prometheus", "uid": "${datasource}"},
          "panel %r: datasource is the ${datasource} variable" % t)
    targets = p.get("targets", [])
    refs = [x.get("refId") for x in targets]
    check(bool(targets) and len(refs) == len(set(refs)) and all(refs), "panel %r: targets with unique refIds" % t)
    for x in targets:
        exprs.append((t, x.get("refId"), x.get("expr", "")))
        check(bool(x.get("expr")), "panel %r %s: has a query" % (t, x.get("refId")))
# What the issue asks of the dashboard, panel by panel.
want = {"events in/s by stage": r"events in/s by stage", "lag by partition": r"lag by partition",
        "alert records by action": r"alert records by action", "dead letters by kind": r"dead letters by kind",
        "engine memory vs budget": r"engine memory vs budget", "jobs tracked and evicted": r"jobs tracked and evicted",
        "alert latency histogram": r"latency histogram", "notify by sink": r"notify .*by sink",
        "schema registry": r"schema registry", "repeat offenders": r"repeat offenders"}
for what, rx in want.items():
    check(any(re.search(rx, t, re.I) for t in titles), "dashboard has a panel: %s" % what)
for v in tvars.values():
    q = v.get("query")
    if isinstance(q, dict):
        q = q.get("query")
    if v.get("type") == "query":
        m = re.match(r"^label_values\((.*),\s*(\w+)\)$", q or "")
        check(m is not None, "variable %s: label_values(SELECTOR, LABEL)" % v["name"])
        if m:
            exprs.append(("variable " + v["name"], "", m.group(1)))

# Grafana's variables, as Grafana expands them for Prometheus.
def expand(e):
    e = e.replace("$__rate_interval", "5m").replace("$__interval", "1m").replace("$__range", "1h")
    e = re.sub(r"\$\{?(job|instance)\}?", ".*", e)
    return e
recs = []
names = set()
for i, (t, ref, e) in enumerate(exprs):
    x = expand(e)
    check("$" not in x, "%s %s: every variable expanded" % (t, ref))
    recs.append({"record": "stormwatch_dashboard:query_%d" % i, "expr": x})
    names.update(re.findall(r"\b((?:stormwatch|process|kube)_[a-z0-9_]+)\b", x))
for a in alerts:
    names.update(re.findall(r"\b((?:stormwatch|process|kube)_[a-z0-9_]+)\b", a["expr"]))
with open(out_rules, "w") as f:
    yaml.safe_dump({"groups": [{"name": "dashboard-queries", "rules": recs}]}, f)
with open(out_names, "w") as f:
    f.write("\n".join(sorted(names)) + "\n")
print("dashboard: %d panels, %d queries; rules and panels name %d metrics" % (len(titles), len(recs), len(names)))
sys.exit(1 if fails else 0)
PYEOF
  [ $? -eq 0 ] || fails=$((fails + 1))
  if $have_promtool && [ -f "$tmp/dashboard-queries.yml" ]; then
    if "$promtool" check rules "$tmp/dashboard-queries.yml" >"$tmp/out" 2>&1; then
      ok "promtool parses every dashboard query ($(grep -o '[0-9]* rules found' "$tmp/out"))"
    else
      fail "dashboard queries promtool does not parse: $(cat "$tmp/out")"
    fi
  fi
fi

# ---- 4: the compose stack's Prometheus and Alertmanager ---------------------
if $have_promtool; then
  mkdir -p "$tmp/prom/rules"
  cp "$root/docker/prometheus/prometheus.yml" "$tmp/prom/prometheus.yml"
  cp "$rules" "$tmp/prom/rules/stormwatch-rules.yml" # where compose mounts it
  if "$promtool" check config "$tmp/prom/prometheus.yml" >"$tmp/out" 2>&1; then
    ok "promtool check config docker/prometheus/prometheus.yml (with the rules mounted)"
  else
    fail "promtool check config: $(cat "$tmp/out")"
  fi
fi
if command -v "$amtool" >/dev/null 2>&1; then
  if "$amtool" check-config "$root/docker/alertmanager/alertmanager.yml" >"$tmp/out" 2>&1; then
    ok "amtool check-config docker/alertmanager/alertmanager.yml"
  else
    fail "amtool check-config: $(cat "$tmp/out")"
  fi
else
  missing amtool "Alertmanager configuration check (amtool)"
fi
if [ -n "$py" ]; then
  "$py" - "$root/docker/alert-log.py" "$tmp" <<'PYEOF'
import json, socket, subprocess, sys, time, urllib.request, urllib.error
script, tmp = sys.argv[1], sys.argv[2]
s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
log = open(tmp + "/alert-log.out", "w+")
p = subprocess.Popen([sys.executable, script, str(port)], stdout=log, stderr=subprocess.STDOUT)
fails = 0
try:
    for _ in range(50):
        try:
            urllib.request.urlopen("http://127.0.0.1:%d/healthz" % port, timeout=1)
            break
        except Exception:
            time.sleep(0.1)
    # An Alertmanager webhook payload (version 4), as Alertmanager 0.25 posts it.
    payload = {"version": "4", "groupKey": "{}:{alertname=\"GPUMemoryStorm\"}", "truncatedAlerts": 0,
               "status": "firing", "receiver": "alert-log",
               "groupLabels": {"alertname": "GPUMemoryStorm"},
               "commonLabels": {"alertname": "GPUMemoryStorm"}, "commonAnnotations": {},
               "externalURL": "http://alertmanager:9093",
               "alerts": [{"status": "firing", "labels": {"alertname": "GPUMemoryStorm", "job_id": "train-1-0", "rank": "3"},
                           "annotations": {"summary": "storm"}, "startsAt": "2026-11-27T00:00:00Z",
                           "endsAt": "0001-01-01T00:00:00Z", "generatorURL": "", "fingerprint": "0123456789abcdef"}]}
    r = urllib.request.urlopen(urllib.request.Request("http://127.0.0.1:%d/alerts" % port,
                                                      data=json.dumps(payload).encode(),
                                                      headers={"Content-Type": "application/json"}), timeout=5)
    ok1 = r.status == 200
    try:
        urllib.request.urlopen(urllib.request.Request("http://127.0.0.1:%d/alerts" % port, data=b"not json"), timeout=5)
        ok2 = False
    except urllib.error.HTTPError as e:
        ok2 = e.code == 400
    time.sleep(0.3)
finally:
    p.terminate(); p.wait(5)
log.seek(0)
lines = [json.loads(l) for l in log.read().splitlines() if l.startswith("{")]
good = ok1 and ok2 and len(lines) == 1 and lines[0]["status"] == "firing" and \
    lines[0]["alerts"][0]["labels"]["job_id"] == "train-1-0"
print(("ok: " if good else "FAIL: ") + "alert-log.py logs an Alertmanager webhook as one JSON line, refuses garbage (%s)" % lines)
sys.exit(0 if good else 1)
PYEOF
  [ $? -eq 0 ] || fails=$((fails + 1))
fi

# ---- 5: a live scrape of run and notify ---------------------------------------
scrape() { # PORT FILE
  "$py" -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=5).read().decode())' "$1" >"$2"
}
wait_for() { # FILE SED-EXPR -> the first match within 30 s
  i=0
  while [ $i -lt 300 ]; do
    v=$(sed -n "$2" "$1" 2>/dev/null | head -1)
    if [ -n "$v" ]; then echo "$v"; return 0; fi
    sleep 0.1
    i=$((i + 1))
  done
  return 1
}
if [ -z "$bin" ] || ! "$bin" --version >/dev/null 2>&1; then
  missing "a stormwatch binary (SW_BIN)" "the live scrape"
elif [ -z "$py" ] || ! $have_promtool; then
  missing "python3 and promtool" "the live scrape"
else
  # run on its embedded mock cluster; a registry configured (none answers:
  # the input is JSON, so none is asked) so that its families are exported;
  # repartition=on so that both stages the dashboard shows are counted.
  "$bin" run -X metrics.listen=127.0.0.1:0 -X schema.registry.url=http://127.0.0.1:9 \
    -X worker.threads=1 -X repartition=on >"$tmp/run.out" 2>"$tmp/run.err" &
  pids="$pids $!"
  boot=$(wait_for "$tmp/run.out" 's/^embedded Kafka cluster .* at \(.*\)$/\1/p')
  rport=$(wait_for "$tmp/run.err" 's/.*metrics on http.*(port \([0-9]*\)).*/\1/p')
  if [ -z "$boot" ] || [ -z "$rport" ]; then
    fail "stormwatch run did not start: $(cat "$tmp/run.err")"
  else
    "$bin" gen --jobs 2 --ranks 8 --samples 300 --quiet >"$tmp/telemetry.jsonl"
    "$bin" notify -b "$boot" -X metrics.listen=127.0.0.1:0 -X alertmanager.url=http://127.0.0.1:9 \
      -X commit.interval.ms=200 >"$tmp/notify.out" 2>"$tmp/notify.err" &
    pids="$pids $!"
    nport=$(wait_for "$tmp/notify.err" 's/.*metrics on http.*(port \([0-9]*\)).*/\1/p')
    # The group must have its partitions before the telemetry counts.
    wait_for "$tmp/run.err" 's/.*\(assigned stormwatch.repartition\).*/\1/p' >/dev/null
    "$bin" produce -b "$boot" -t stormwatch.telemetry "$tmp/telemetry.jsonl" >/dev/null 2>"$tmp/produce.err" ||
      fail "produce: $(cat "$tmp/produce.err")"
    want=$(wc -l <"$tmp/telemetry.jsonl")
    i=0
    got=0
    while [ $i -lt 150 ]; do
      scrape "$rport" "$tmp/run.metrics" 2>/dev/null
      got=$(sed -n 's/^stormwatch_events_in_total{.*stage="engine"} \([0-9]*\)$/\1/p' "$tmp/run.metrics" | awk '{ s += $1 } END { print s + 0 }')
      [ "$got" -ge "$want" ] && break
      sleep 0.2
      i=$((i + 1))
    done
    [ "$got" -ge "$want" ] && ok "run analysed the $want events produced" || fail "run analysed $got of $want events"
    # gen's two jobs start their storms on rank 3: job-0 on node-000, job-1
    # on node-001 (gen --help: 8 ranks per host, hosts of their own per job).
    i=0
    fc=""
    while [ $i -lt 150 ]; do
      scrape "$rport" "$tmp/run.metrics" 2>/dev/null
      fc=$(grep -c '^stormwatch_first_cause_host_total{host="node-00[01]",kind="storm"} 1$' "$tmp/run.metrics")
      [ "$fc" -eq 2 ] && break
      sleep 0.2
      i=$((i + 1))
    done
    if [ "$fc" -eq 2 ] && ! grep -q '^stormwatch_first_cause_host_total{host="_other"' "$tmp/run.metrics"; then
      ok "run counts one storm first cause on node-000 and one on node-001"
    else
      fail "repeat offenders by host: $(grep '^stormwatch_first_cause_host' "$tmp/run.metrics")"
    fi
    if [ -z "$nport" ] || ! scrape "$nport" "$tmp/notify.metrics"; then
      fail "stormwatch notify did not start: $(cat "$tmp/notify.err")"
    else
      for who in run notify; do
        if "$promtool" check metrics <"$tmp/$who.metrics" >"$tmp/out" 2>&1; then
          ok "promtool check metrics: $who's /metrics"
        else
          fail "promtool check metrics ($who): $(cat "$tmp/out")"
        fi
      done
      "$py" - "$tmp/names.txt" "$tmp/run.metrics" "$tmp/notify.metrics" <<'PYEOF'
import re, sys
names_path, run_path, notify_path = sys.argv[1:4]
def families(path):
    fam = {}
    for line in open(path):
        m = re.match(r"^# TYPE (\S+) (\w+)", line)
        if m:
            fam[m.group(1)] = m.group(2)
    return fam
run, notify = families(run_path), families(notify_path)
def exported(name, fam):
    if name in fam:
        return True
    for suf in ("_bucket", "_sum", "_count"):
        if name.endswith(suf) and fam.get(name[: -len(suf)]) == "histogram":
            return True
    return False
fails = 0
def check(cond, what):
    global fails
    print(("ok: " if cond else "FAIL: ") + what)
    fails += not cond
names = [n for n in open(names_path).read().split() if n]
# kube_* series come from kube-state-metrics (Kubernetes only).
external = [n for n in names if n.startswith("kube_")]
for n in names:
    if n in external:
        continue
    where = [w for w, fam in (("run", run), ("notify", notify)) if exported(n, fam)]
    check(bool(where), "%s (named by a rule or panel) is exported (%s)" % (n, ", ".join(where) or "by neither"))
print("external, not checked against stormwatch: %s" % ", ".join(external))
# notify exports its own families and the shared ones only.
shared = {"stormwatch_up", "stormwatch_build_info", "process_start_time_seconds",
          "stormwatch_rebalances_total", "stormwatch_commits_total", "stormwatch_commit_errors_total",
          "stormwatch_assigned_partitions", "stormwatch_consumer_total_lag",
          "stormwatch_input_skipped_messages_total"}
foreign = sorted(n for n in notify if not n.startswith("stormwatch_notify_") and n not in shared)
check(not foreign, "notify exports only its own and the shared families (foreign: %s)" % foreign)
check(not [n for n in run if n.startswith("stormwatch_notify_")], "run exports no notify family")
check("stormwatch_schema_registry_up" in run, "run with a registry configured exports stormwatch_schema_registry_up")
stages = set(re.findall(r'^stormwatch_events_in_total\{[^}]*stage="(\w+)"', open(run_path).read(), re.M))
check(stages == {"forward", "engine"}, "run (repartition=on) counts events by stage: %s" % sorted(stages))
sys.exit(1 if fails else 0)
PYEOF
      [ $? -eq 0 ] || fails=$((fails + 1))
    fi
  fi
fi

if [ "$fails" -gt 0 ]; then
  echo "test_monitoring: FAILED ($fails failing step(s))"
  exit 1
fi
if [ "$skips" -gt 0 ]; then
  echo "test_monitoring: passed ($skips step(s) skipped)"
else
  echo "test_monitoring: passed"
fi
exit 0
