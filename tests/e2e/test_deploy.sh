#!/bin/sh
# Deployment files: docker/ and deploy/ validated without a container engine
# or a cluster. Registered in CTest as `test_deploy.sh <repo-root>`.
#
#  1. docker-compose -f docker/docker-compose.yml config -q   (Compose file)
#  2. kubectl kustomize deploy/base and every deploy/overlays/*/
#  3. structural checks (python3 + PyYAML) on the Dockerfile, its ignore
#     file, the healthcheck script (run against a loopback HTTP server), the
#     compose file and every rendered kustomization: probes, non-root,
#     grace period > the daemon's flush budget, replicas <= partitions, the
#     KEDA ScaledObject's target and consumer group, topics, ports, and every
#     stormwatch.conf + STORMWATCH_* environment checked by the daemon
#     itself (`stormwatch run -c FILE -X dump`) when a binary is built; the
#     notify side too (compose's Alertmanager and notify services, the
#     stormwatch-notify Deployment, `stormwatch notify -c FILE -X dump`).
#
# A missing tool (docker-compose, kubectl, python3 with yaml) fails the test
# when CI=true and is skipped with a "SKIP ..." line otherwise.
# Environment: DOCKER_COMPOSE, KUBECTL, PYTHON (commands to use); SW_BIN
# (stormwatch binary; default <repo-root>/build/stormwatch when present).
# Exit status: 0 passed (or skipped outside CI), 1 failed, 2 usage.
set -u

if [ $# -ne 1 ] || [ ! -d "$1" ]; then
  echo "usage: test_deploy.sh REPO_ROOT" >&2
  exit 2
fi
root=$(cd "$1" && pwd)
ci=${CI:-false}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_deploy.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

fails=0
skips=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
missing() {
  # missing TOOL WHAT
  if [ "$ci" = true ]; then
    fail "$1 is not installed (needed for $2; CI=true)"
  else
    echo "SKIP $2: $1 is not installed"
    skips=$((skips + 1))
  fi
}

# ---- 1. Compose ------------------------------------------------------------
compose=${DOCKER_COMPOSE:-docker-compose}
compose_file="$root/docker/docker-compose.yml"
compose_out=""
if [ ! -f "$compose_file" ]; then
  fail "docker/docker-compose.yml is missing"
elif command -v "$compose" >/dev/null 2>&1; then
  echo "using $($compose version --short 2>/dev/null || $compose --version 2>/dev/null | head -1)"
  if (cd "$root" && "$compose" -f docker/docker-compose.yml config -q) >"$tmp/compose.err" 2>&1; then
    ok "docker-compose config -q"
    if (cd "$root" && "$compose" -f docker/docker-compose.yml config) >"$tmp/compose.yml" 2>"$tmp/compose.err"; then
      compose_out="$tmp/compose.yml"
    else
      fail "docker-compose config: $(cat "$tmp/compose.err")"
    fi
  else
    fail "docker-compose config -q: $(cat "$tmp/compose.err")"
  fi
else
  missing "$compose" "compose validation (docker-compose config -q)"
fi

# ---- 2. Kustomize ----------------------------------------------------------
kubectl=${KUBECTL:-kubectl}
kdirs=""
[ -f "$root/deploy/base/kustomization.yaml" ] || fail "deploy/base/kustomization.yaml is missing"
for d in "$root"/deploy/base "$root"/deploy/overlays/*/; do
  d=${d%/}
  [ -f "$d/kustomization.yaml" ] || continue
  kdirs="$kdirs ${d#"$root"/}"
done
rendered=""
if [ -z "$kdirs" ]; then
  :
elif command -v "$kubectl" >/dev/null 2>&1; then
  echo "using $("$kubectl" version --client 2>/dev/null | head -1)"
  for rel in $kdirs; do
    out="$tmp/$(echo "$rel" | tr / _).yaml"
    if "$kubectl" kustomize "$root/$rel" >"$out" 2>"$tmp/kustomize.err"; then
      ok "kubectl kustomize $rel"
      rendered="$rendered $rel=$out"
      # kustomize 5 warns on deprecated fields (bases, patchesStrategicMerge,
      # patchesJson6902, commonLabels, vars): none may be left.
      if grep -qi "warning" "$tmp/kustomize.err"; then
        fail "kubectl kustomize $rel warns: $(cat "$tmp/kustomize.err")"
      else
        ok "kubectl kustomize $rel: no deprecation warning"
      fi
    else
      fail "kubectl kustomize $rel: $(grep -v '^# Warning' "$tmp/kustomize.err")"
    fi
  done
  # The shipper's DaemonSet is not part of the detector's renders (its
  # structural checks are below, in section 3).
  if "$kubectl" kustomize "$root/deploy/ship" >"$tmp/ship.yaml" 2>"$tmp/kustomize.err" &&
    ! grep -qi "warning" "$tmp/kustomize.err"; then
    ok "kubectl kustomize deploy/ship (no warning)"
  else
    fail "kubectl kustomize deploy/ship: $(cat "$tmp/kustomize.err")"
  fi
else
  missing "$kubectl" "kustomize validation (kubectl kustomize)"
fi

# ---- 3. Structural checks --------------------------------------------------
py=""
for cand in ${PYTHON:-} python3 /usr/bin/python3; do
  if command -v "$cand" >/dev/null 2>&1 && "$cand" -c 'import yaml' >/dev/null 2>&1; then
    py=$cand
    break
  fi
done
bin=${SW_BIN:-}
if [ -z "$bin" ] && [ -x "$root/build/stormwatch" ]; then bin="$root/build/stormwatch"; fi
case "$bin" in ''|/*) ;; *) bin="$(pwd)/$bin" ;; esac
if [ -n "$bin" ] && ! "$bin" --version >/dev/null 2>&1; then
  echo "note: $bin does not run; the daemon's own configuration checks are skipped"
  bin=""
fi
[ -n "$bin" ] || echo "note: no stormwatch binary (SW_BIN or build/stormwatch): configuration files are checked without the daemon"

if [ -z "$py" ]; then
  missing "python3 with PyYAML" "structural checks"
else
  # shellcheck disable=SC2086
  "$py" - "$root" "$compose_out" "$bin" $rendered <<'PYEOF'
import fnmatch, glob, http.server, json, os, re, shlex, subprocess, sys, threading
import yaml

root, compose_out, sw_bin = sys.argv[1], sys.argv[2], sys.argv[3]
renders = [a.split("=", 1) for a in sys.argv[4:]]
fails = 0
checks = 0

def check(cond, what):
    global fails, checks
    checks += 1
    if cond:
        print("ok: " + what)
    else:
        fails += 1
        print("FAIL: " + what)
    return cond

def read(rel):
    with open(os.path.join(root, rel)) as f:
        return f.read()

# ---- facts from the sources ----
# The daemon's stop budget: shutdown.timeout.ms (its default in the
# configuration table, or the value the shipped configuration sets).
conf_src = read("src/conf/sw_conf_table.c")
m = re.search(r'INT_PROP\("shutdown\.timeout\.ms",\s*(?:[A-Za-z_][\w.]*,\s*)?\d+,\s*\d+,\s*"(\d+)"',
              conf_src)
flush_ms = [int(m.group(1))] if m else []
for rel in ("deploy/base/stormwatch.conf",):
    m2 = re.search(r"^\s*shutdown\.timeout\.ms\s*=\s*(\d+)", read(rel), re.M)
    if m2:
        flush_ms.append(int(m2.group(1)))
flush_s = max(flush_ms) / 1000.0 if flush_ms else 30.0
if not flush_ms:
    print("FAIL: no shutdown.timeout.ms default found in src/conf/sw_conf_table.c")
    fails += 1
DEFAULTS = {"group.id": "stormwatch", "input.topics": "stormwatch.telemetry",
            "output.topic": "stormwatch.alerts", "dlq.topic": "stormwatch.dlq",
            "bootstrap.servers": "", "metrics.listen": ""}

def parse_props(text):
    props = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        k, v = line.split("=", 1)
        props[k.strip()] = v.strip()
    return props

def env_to_prop(name):
    # STORMWATCH_<NAME>: '_' -> '.', lower case (kafka.* pass-through likewise).
    return name[len("STORMWATCH_"):].lower().replace("_", ".")

def effective(props, env):
    eff = dict(DEFAULTS)
    eff.update(props)
    for k, v in env.items():
        if k.startswith("STORMWATCH_"):
            eff[env_to_prop(k)] = v
    return eff

def daemon_dump(conf_text, env, what):
    """stormwatch run -c CONF -X dump with exactly ENV: the daemon rejects
    unknown properties and STORMWATCH_* names (exit 2)."""
    if not sw_bin:
        return None
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), "test_deploy_%d.conf" % os.getpid())
    with open(path, "w") as f:
        f.write(conf_text or "")
    try:
        r = subprocess.run([sw_bin, "run", "-c", path, "-X", "dump"], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
    finally:
        os.unlink(path)
    check(r.returncode == 0, "%s: the daemon accepts the configuration (run -X dump)%s"
          % (what, "" if r.returncode == 0 else ": " + r.stderr.strip()))
    return parse_props(r.stdout) if r.returncode == 0 else None

def port_of(hostport):
    m = re.search(r":(\d+)$", hostport or "")
    return int(m.group(1)) if m else None

# ---- Dockerfile ----
dockerfile = read("docker/Dockerfile")
lines, cur = [], ""
for raw in dockerfile.splitlines():
    s = raw.strip()
    if not cur and (not s or s.startswith("#")):
        continue
    if cur and s.startswith("#"):
        continue
    if s.endswith("\\"):
        cur += s[:-1] + " "
        continue
    lines.append((cur + s).strip())
    cur = ""
args = {}
stages = []  # [name, base, [instructions]]
for ins in lines:
    word, _, rest = ins.partition(" ")
    word = word.upper()
    if word == "ARG" and not stages:
        k, _, v = rest.partition("=")
        args[k.strip()] = v.strip()
    if word == "FROM":
        base = re.sub(r"\$\{(\w+)\}", lambda m: args.get(m.group(1), ""), rest.split()[0])
        name = rest.split()[2] if len(rest.split()) > 2 else ""
        stages.append([name, base, []])
    elif stages:
        stages[-1][2].append((word, rest))
check(len(stages) >= 2, "Dockerfile: multi-stage (%d stages)" % len(stages))
builder, runtime = stages[0], stages[-1]
check(builder[1] == "debian:bookworm", "Dockerfile: builder FROM debian:bookworm (%s)" % builder[1])
check(runtime[1] == "debian:bookworm-slim", "Dockerfile: runtime FROM debian:bookworm-slim (%s)" % runtime[1])
brun = " ".join(r for w, r in builder[2] if w == "RUN")
check("scripts/install-deps.sh build" in brun, "Dockerfile: builder installs deps with scripts/install-deps.sh build")
check(re.search(r"\bmake install\b[^&]*\bDESTDIR=/out\b", brun) is not None and "INSTALL_STRIP=1" in brun,
      "Dockerfile: builder installs with `make install` (stripped) into a staging root")
mk = read("Makefile")
check(re.search(r"^install:.*\n(\t.*\n)*\t\$\(BUILD_SH\)", mk, re.M) is not None and "--install $(BUILD)" in mk,
      "Makefile: install builds with scripts/build.sh, then cmake --install")
rcopies = [r for w, r in stages[-1][2] if w == "COPY" and "--from=builder" in r]
check(any("/out/usr/local/bin/" in r for r in rcopies), "Dockerfile: runtime takes the binary `make install` installed")

ignore_file = os.path.join(root, "docker", "Dockerfile.dockerignore")
allow = []
if os.path.exists(ignore_file):
    with open(ignore_file) as f:
        pats = [l.strip() for l in f if l.strip() and not l.startswith("#")]
    check(pats[:1] == ["*"], "Dockerfile.dockerignore: allow-list (starts with '*')")
    allow = [p[1:].rstrip("/") for p in pats if p.startswith("!")]
def allowed(path):
    return any(path == a or path.startswith(a + "/") or fnmatch.fnmatch(path, a) for a in allow)
for _, _, instrs in stages:
    for word, rest in instrs:
        if word not in ("COPY", "ADD"):
            continue
        toks = shlex.split(rest)
        if any(t.startswith("--from") for t in toks):
            continue
        toks = [t for t in toks if not t.startswith("--")]
        for srcp in toks[:-1]:
            hits = glob.glob(os.path.join(root, srcp.rstrip("/")))
            check(bool(hits), "Dockerfile: COPY source %s exists" % srcp)
            if allow:
                rels = [os.path.relpath(h, root) for h in hits] or [srcp]
                check(all(allowed(r) for r in rels),
                      "Dockerfile.dockerignore: COPY source %s is in the build context" % srcp)
rt = dict()
for word, rest in runtime[2]:
    rt.setdefault(word, []).append(rest)
user = rt.get("USER", ["root"])[-1].split(":")[0]
check(user.isdigit() and int(user) == 10001, "Dockerfile: runtime runs as uid 10001 (USER %s)" % user)
rrun = " ".join(rt.get("RUN", []))
check(re.search(r"useradd[^&]*--uid 10001", rrun) is not None, "Dockerfile: creates user uid 10001")
check(bool(rt.get("WORKDIR")), "Dockerfile: WORKDIR set")
check("9464" in " ".join(rt.get("EXPOSE", [])), "Dockerfile: EXPOSE 9464")
check(any(re.search(r"STORMWATCH_METRICS_LISTEN=0\.0\.0\.0:9464", e) for e in rt.get("ENV", [])),
      "Dockerfile: ENV STORMWATCH_METRICS_LISTEN=0.0.0.0:9464")
check(rt.get("ENTRYPOINT", [""])[-1].replace(" ", "") == '["stormwatch"]', "Dockerfile: ENTRYPOINT [\"stormwatch\"]")
check(rt.get("CMD", [""])[-1].replace(" ", "") == '["run"]', "Dockerfile: CMD [\"run\"]")
check(rt.get("STOPSIGNAL", [""])[-1] == "SIGTERM", "Dockerfile: STOPSIGNAL SIGTERM")
check(any("org.opencontainers.image.title" in l for l in rt.get("LABEL", [])), "Dockerfile: OCI labels")
hc = " ".join(rt.get("HEALTHCHECK", []))
check("stormwatch-healthcheck" in hc, "Dockerfile: HEALTHCHECK runs stormwatch-healthcheck")
m = re.search(r"apt-get install[^&]*", rrun)
pkgs = [t for t in (m.group(0).split() if m else []) if not t.startswith("-") and t not in ("apt-get", "install")]
pkgs = [p for p in pkgs if re.match(r"^[a-z0-9][a-z0-9.+-]+$", p) and not p.startswith(">")]
print("runtime packages: " + " ".join(pkgs))
check("librdkafka1" in pkgs and "libmicrohttpd12" in pkgs, "Dockerfile: runtime installs librdkafka1 and libmicrohttpd12")
check(not [p for p in pkgs if p.endswith("-dev") or p in ("curl", "wget", "build-essential", "gcc")],
      "Dockerfile: no -dev packages, compilers or curl in the runtime stage")
# Every shared library the built binary needs comes from a listed package.
if sw_bin and os.path.exists("/usr/bin/dpkg"):
    try:
        dyn = subprocess.run(["readelf", "-d", sw_bin], stdout=subprocess.PIPE, text=True, timeout=30).stdout
        needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dyn)
    except (OSError, subprocess.SubprocessError):
        needed = []
    base_pkgs = {"libc6", "libgcc-s1"}
    for lib in needed:
        if re.match(r"lib(asan|ubsan|lsan|tsan)\.", lib):
            continue
        r = subprocess.run(["dpkg", "-S", "*/" + lib], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        owners = {l.split(":")[0] for l in r.stdout.splitlines() if l}
        check(bool(owners & (set(pkgs) | base_pkgs)),
              "Dockerfile: %s (NEEDED by the binary) comes from a runtime package (%s)" % (lib, ", ".join(sorted(owners)) or "no package"))
# The runtime packages exist in the configured Debian release (when apt lists are there).
osrel = open("/etc/os-release").read() if os.path.exists("/etc/os-release") else ""
if "VERSION_CODENAME=bookworm" in osrel and glob.glob("/var/lib/apt/lists/*_Packages") and pkgs:
    r = subprocess.run(["apt-cache", "policy"] + pkgs, stdout=subprocess.PIPE, text=True)
    cands = re.findall(r"^(\S+):\n\s+Installed: .*\n\s+Candidate: (.*)$", r.stdout, re.M)
    for name, cand in cands:
        check(cand.strip() != "(none)", "Dockerfile: runtime package %s exists in bookworm (%s)" % (name, cand.strip()))

# ---- healthcheck script, against a loopback HTTP server ----
hc_script = os.path.join(root, "docker", "healthcheck.sh")
hc_text = read("docker/healthcheck.sh")
check(hc_text.startswith("#!/bin/bash") and "/dev/tcp/" in hc_text and "/healthz" in hc_text,
      "healthcheck.sh: bash /dev/tcp probe of /healthz")
if os.path.exists("/bin/bash"):
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200 if self.path == "/healthz" else 503)
            self.end_headers()
            self.wfile.write(b"x\n")
        def log_message(self, *a):
            pass
    class S(http.server.HTTPServer):
        def handle_error(self, request, client_address):
            pass  # the probe closes after the status line: a reset is fine
    srv = S(("127.0.0.1", 0), H)
    srv.timeout = 5
    port = srv.server_address[1]
    t = threading.Thread(target=lambda: [srv.handle_request() for _ in range(2)], daemon=True)
    t.start()
    def run_hc(*a, env=None):
        e = {"PATH": "/usr/bin:/bin"}
        e.update(env or {})
        return subprocess.run(["/bin/bash", hc_script] + list(a), env=e, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=20).returncode
    check(run_hc(env={"STORMWATCH_METRICS_LISTEN": "0.0.0.0:%d" % port}) == 0,
          "healthcheck.sh: exit 0 on 200 from /healthz (listen 0.0.0.0:%d)" % port)
    check(run_hc("127.0.0.1:%d" % port, "/readyz") == 1, "healthcheck.sh: exit 1 on 503")
    t.join(10)
    srv.server_close()
    check(run_hc("127.0.0.1:%d" % port) == 1, "healthcheck.sh: exit 1 when nothing listens")

# ---- Compose ----
if compose_out:
    with open(compose_out) as f:
        c = yaml.safe_load(f)
    svcs = c.get("services", {})
    for name in ("kafka", "kafka-init", "stormwatch", "telemetry-gen", "alerts"):
        check(name in svcs, "compose: service %s" % name)
    k = svcs.get("kafka", {})
    check(re.match(r"^apache/kafka:\d+\.\d+\.\d+$", k.get("image", "")) is not None,
          "compose: kafka image pinned (%s)" % k.get("image"))
    kenv = k.get("environment", {}) or {}
    check("broker" in str(kenv.get("KAFKA_PROCESS_ROLES", "")) and "controller" in str(kenv.get("KAFKA_PROCESS_ROLES", "")),
          "compose: kafka in KRaft combined mode")
    check(bool(kenv.get("CLUSTER_ID")) and bool(kenv.get("KAFKA_CONTROLLER_QUORUM_VOTERS")),
          "compose: CLUSTER_ID and controller quorum set")
    check("kafka:9092" in str(kenv.get("KAFKA_ADVERTISED_LISTENERS", "")), "compose: kafka advertises kafka:9092")
    check(bool(k.get("healthcheck", {}).get("test")), "compose: kafka has a healthcheck")
    init = svcs.get("kafka-init", {})
    check((init.get("depends_on") or {}).get("kafka", {}).get("condition") == "service_healthy",
          "compose: kafka-init waits for kafka to be healthy")
    init_cmd = " ".join(init.get("entrypoint") or []) + " " + " ".join(init.get("command") or [])
    created = dict(re.findall(r"--create --if-not-exists --topic (\S+) --partitions (\d+)", init_cmd))
    sw = svcs.get("stormwatch", {})
    build = sw.get("build", {})
    check(os.path.realpath(build.get("context", "")) == os.path.realpath(root) and build.get("dockerfile") == "docker/Dockerfile",
          "compose: stormwatch builds docker/Dockerfile with the repository root as context")
    check((sw.get("depends_on") or {}).get("kafka-init", {}).get("condition") == "service_completed_successfully",
          "compose: stormwatch starts after kafka-init completed")
    senv = {k2: str(v) for k2, v in (sw.get("environment") or {}).items()}
    eff = effective({}, senv)
    check(eff["bootstrap.servers"] == "kafka:9092", "compose: stormwatch bootstrap.servers=kafka:9092")
    topics = {"input": eff["input.topics"], "output": eff["output.topic"], "dlq": eff["dlq.topic"]}
    for role, tname in topics.items():
        check(tname in created, "compose: %s topic %s is created by kafka-init" % (role, tname))
    check(any(str(p.get("target", p)) .startswith("9464") for p in sw.get("ports", [])) if sw.get("ports") else False,
          "compose: stormwatch publishes 9464")
    check(port_of(eff["metrics.listen"]) == 9464, "compose: stormwatch metrics.listen on 9464")
    grace = str(sw.get("stop_grace_period", "10s"))
    gm = re.match(r"^(\d+)(s|m)?$", grace)
    grace_s = int(gm.group(1)) * (60 if gm.group(2) == "m" else 1) if gm else 0
    check(grace_s > flush_s, "compose: stormwatch stop_grace_period %s > flush budget %gs" % (grace, flush_s))
    daemon_dump("", senv, "compose stormwatch environment")
    gen = svcs.get("telemetry-gen", {})
    gen_cmd = " ".join(gen.get("entrypoint") or []) + " " + " ".join(gen.get("command") or [])
    check(re.search(r"stormwatch gen .*\| *stormwatch produce -t %s -b kafka:9092" % re.escape(topics["input"]), gen_cmd) is not None,
          "compose: telemetry-gen produces to %s" % topics["input"])
    al = svcs.get("alerts", {})
    al_cmd = " ".join(al.get("command") or [])
    check(re.search(r"tail -t %s -b kafka:9092" % re.escape(topics["output"]), al_cmd) is not None,
          "compose: alerts tails %s" % topics["output"])
    for name in ("telemetry-gen", "alerts"):
        check((svcs.get(name, {}).get("healthcheck") or {}).get("test") == ["NONE"],
              "compose: %s disables the daemon's HEALTHCHECK" % name)

# ---- Kustomize renders ----
def labels_match(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())

def env_list(pod):
    return [e for c in pod.get("containers", []) if c["name"] == "stormwatch" for e in c.get("env", [])]

STATIC_ENV = ("STORMWATCH_KAFKA_CONSUMER_GROUP_INSTANCE_ID", "STORMWATCH_KAFKA_CONSUMER_SESSION_TIMEOUT_MS")

def check_statefulset(rel, ss, by_kind):
    """Static membership: group.instance.id is the pod's own name, the
    session outlasts a restart, pods start in parallel, a headless Service
    governs them, and the pod is the base Deployment's but for that."""
    spec, pod = ss["spec"], ss["spec"]["template"]["spec"]
    env = {e["name"]: e for e in env_list(pod)}
    names = [e["name"] for e in env_list(pod)]
    pn = (env.get("POD_NAME", {}).get("valueFrom") or {}).get("fieldRef", {}).get("fieldPath")
    gid = env.get(STATIC_ENV[0], {}).get("value")
    check(pn == "metadata.name" and gid == "$(POD_NAME)" and names.index("POD_NAME") < names.index(STATIC_ENV[0]),
          "%s: group.instance.id = the pod's name (%s from %s)" % (rel, gid, pn))
    st = env.get(STATIC_ENV[1], {}).get("value", "")
    check(st.isdigit() and 30000 <= int(st) <= 1800000 and int(st) > 1000 * flush_s,
          "%s: session.timeout.ms %s outlasts a restart (> the %gs stop budget) and is within the "
          "brokers' default group.max.session.timeout.ms (30 min)" % (rel, st, flush_s))
    check(spec.get("podManagementPolicy") == "Parallel",
          "%s: podManagementPolicy Parallel (readiness needs the whole group)" % rel)
    hl = [s for s in by_kind.get("Service", []) if s["metadata"]["name"] == spec.get("serviceName")]
    check(len(hl) == 1 and hl[0]["spec"].get("clusterIP") == "None",
          "%s: serviceName %s is a headless Service of the render" % (rel, spec.get("serviceName")))
    # Drift: the rendered base Deployment's pod template, plus the static
    # variables; images are pinned alike (test below).
    base = None
    for brel, bpath in renders:
        if brel == "deploy/base":
            with open(bpath) as f:
                base = [d for d in yaml.safe_load_all(f) if d and d.get("kind") == "Deployment"
                        and d["metadata"]["name"] == "stormwatch"]
    if not check(bool(base), "%s: the base Deployment renders (to compare pod templates)" % rel):
        return
    mine = json.loads(json.dumps(ss["spec"]["template"]))
    for c in mine["spec"].get("containers", []):
        c["env"] = [e for e in c.get("env", []) if e["name"] not in STATIC_ENV]
    theirs = base[0]["spec"]["template"]
    check(mine == theirs, "%s: the StatefulSet's pod template is the base Deployment's plus %s"
          % (rel, ", ".join(STATIC_ENV)))

for rel, path in renders:
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    by_kind = {}
    for d in docs:
        by_kind.setdefault(d.get("kind"), []).append(d)
    # The daemon's workload: the base Deployment, or the statefulset
    # overlay's StatefulSet (static membership) in its place.
    deps = [d for k in ("Deployment", "StatefulSet") for d in by_kind.get(k, [])
            if d["metadata"]["name"] == "stormwatch"]
    if not check(len(deps) == 1, "%s: one Deployment or StatefulSet stormwatch" % rel):
        continue
    dep = deps[0]
    if dep["kind"] == "StatefulSet":
        check_statefulset(rel, dep, by_kind)
    spec, pod = dep["spec"], dep["spec"]["template"]["spec"]
    pod_labels = dep["spec"]["template"]["metadata"].get("labels", {})
    check(labels_match(spec["selector"].get("matchLabels"), pod_labels), "%s: selector matches the pod labels" % rel)
    ctrs = [x for x in pod.get("containers", []) if x["name"] == "stormwatch"]
    if not check(len(ctrs) == 1, "%s: container stormwatch" % rel):
        continue
    ctr = ctrs[0]
    image = ctr.get("image", "")
    check(re.match(r"^(.+/)?stormwatch:[\w.-]+$", image) is not None and not image.endswith(":latest"),
          "%s: image stormwatch:TAG pinned (%s)" % (rel, image))
    cargs = ctr.get("args", [])
    check(cargs[:2] == ["run", "-c"] and len(cargs) >= 3, "%s: args run -c FILE (%s)" % (rel, cargs))
    conf_path = cargs[2] if len(cargs) >= 3 else ""
    # env: literal values; $(VAR) references only to earlier entries.
    env, seen = {}, set()
    for e in ctr.get("env", []):
        for ref in re.findall(r"\$\((\w+)\)", str(e.get("value", ""))):
            check(ref in seen, "%s: env %s refers to $(%s) defined before it" % (rel, e["name"], ref))
        seen.add(e["name"])
        if "value" in e:
            env[e["name"]] = str(e["value"])
        elif "secretKeyRef" in (e.get("valueFrom") or {}):
            env[e["name"]] = "redacted-secret"
        else:
            env[e["name"]] = "from-field"
    sec_env = [e for e in ctr.get("env", []) if "secretKeyRef" in (e.get("valueFrom") or {})]
    check(any(e["name"] == "STORMWATCH_KAFKA_SASL_PASSWORD" for e in sec_env),
          "%s: kafka.sasl.password comes from a Secret (STORMWATCH_KAFKA_SASL_PASSWORD)" % rel)
    if rel == "deploy/base":
        check(all(e["valueFrom"]["secretKeyRef"].get("optional") is True for e in sec_env),
              "%s: the SASL Secret is optional" % rel)
    # The ConfigMap behind -c FILE.
    conf_text = None
    mounts = {m["name"]: m for m in ctr.get("volumeMounts", [])}
    for v in pod.get("volumes", []):
        if "configMap" in v and v["name"] in mounts:
            mdir = mounts[v["name"]]["mountPath"].rstrip("/")
            if os.path.dirname(conf_path) == mdir:
                cms = [d for d in by_kind.get("ConfigMap", []) if d["metadata"]["name"] == v["configMap"]["name"]]
                if check(len(cms) == 1, "%s: ConfigMap %s is in the render" % (rel, v["configMap"]["name"])):
                    conf_text = cms[0].get("data", {}).get(os.path.basename(conf_path))
    if not check(conf_text is not None, "%s: %s comes from a ConfigMap" % (rel, conf_path)):
        conf_text = ""
    props = parse_props(conf_text)
    eff = effective(props, {k2: v for k2, v in env.items() if not v.startswith(("redacted", "from-field"))})
    check(eff["bootstrap.servers"] != "", "%s: bootstrap.servers is set (empty would start the mock cluster)" % rel)
    dumped = daemon_dump(conf_text, {k2: v for k2, v in env.items() if k2.startswith("STORMWATCH_")}, rel)
    # Kubernetes service links: enableServiceLinks is off in the pod, and
    # should a cluster inject them anyway (older controllers, a copied
    # manifest), the variables of every Service of the render are passed
    # over, not fatal.
    check(pod.get("enableServiceLinks") is False, "%s: enableServiceLinks: false" % rel)
    links = {}
    for svc in by_kind.get("Service", []):
        up = svc["metadata"]["name"].upper().replace("-", "_")
        ip = "10.96.0.17"
        links[up + "_SERVICE_HOST"] = ip
        for i, sp in enumerate(svc["spec"].get("ports", [])):
            port, proto = sp.get("port"), sp.get("protocol", "TCP")
            if i == 0:
                links[up + "_SERVICE_PORT"] = str(port)
                links[up + "_PORT"] = "%s://%s:%s" % (proto.lower(), ip, port)
            if sp.get("name"):
                links[up + "_SERVICE_PORT_" + sp["name"].upper().replace("-", "_")] = str(port)
            base = "%s_PORT_%s_%s" % (up, port, proto)
            links[base] = "%s://%s:%s" % (proto.lower(), ip, port)
            links[base + "_PROTO"] = proto.lower()
            links[base + "_PORT"] = str(port)
            links[base + "_ADDR"] = ip
    sw_links = {k2: v for k2, v in links.items() if k2.startswith("STORMWATCH_")}
    check(len(sw_links) > 0, "%s: the render has a stormwatch-* Service (service links to test)" % rel)
    daemon_dump(conf_text, dict({k2: v for k2, v in env.items() if k2.startswith("STORMWATCH_")},
                                **sw_links), rel + " with Kubernetes service-link variables")
    if dumped is not None:
        for k2, v in env.items():
            if k2.startswith("STORMWATCH_") and not v.startswith(("redacted", "from-field")):
                check(dumped.get(env_to_prop(k2)) == v, "%s: %s reaches %s" % (rel, k2, env_to_prop(k2)))
    # Ports and probes.
    cports = {p.get("name"): p["containerPort"] for p in ctr.get("ports", [])}
    check(cports.get("http-metrics") == 9464, "%s: containerPort http-metrics 9464" % rel)
    check(port_of(eff["metrics.listen"]) == 9464, "%s: metrics.listen (%s) on 9464" % (rel, eff["metrics.listen"]))
    check(cports.get("http-health") == 9465, "%s: containerPort http-health 9465" % rel)
    check(port_of(eff.get("health.listen", "")) == 9465,
          "%s: health.listen (%s) on 9465, the probes' own listener" % (rel, eff.get("health.listen")))
    def probe(name, path):
        p = ctr.get(name) or {}
        g = p.get("httpGet") or {}
        port = g.get("port")
        port = cports.get(port, port)
        check(g.get("path") == path and port == 9465, "%s: %s GET %s on 9465 (health.listen)" % (rel, name, path))
    probe("readinessProbe", "/readyz")
    probe("livenessProbe", "/healthz")
    probe("startupProbe", "/healthz")
    # Security.
    psc, csc = pod.get("securityContext", {}), ctr.get("securityContext", {})
    uid = csc.get("runAsUser", psc.get("runAsUser"))
    check((csc.get("runAsNonRoot", psc.get("runAsNonRoot")) is True) and uid not in (None, 0),
          "%s: runs as non-root (runAsNonRoot, uid %s)" % (rel, uid))
    check(csc.get("readOnlyRootFilesystem") is True, "%s: read-only root filesystem" % rel)
    check(csc.get("allowPrivilegeEscalation") is False, "%s: no privilege escalation" % rel)
    check("ALL" in (csc.get("capabilities", {}).get("drop") or []), "%s: drops ALL capabilities" % rel)
    tgps = pod.get("terminationGracePeriodSeconds", 30)
    check(tgps > flush_s, "%s: terminationGracePeriodSeconds %s > flush budget %gs" % (rel, tgps, flush_s))
    res = ctr.get("resources", {})
    check(bool(res.get("requests", {}).get("memory")) and bool(res.get("limits", {}).get("memory")),
          "%s: memory requests and limits" % rel)
    aa = (((pod.get("affinity") or {}).get("podAntiAffinity") or {}).get("preferredDuringSchedulingIgnoredDuringExecution") or [])
    check(any(labels_match(t["podAffinityTerm"]["labelSelector"].get("matchLabels"), pod_labels) for t in aa),
          "%s: pod anti-affinity selects its own pods" % rel)
    # Replicas vs partitions.
    parts = dep["metadata"].get("annotations", {}).get("stormwatch/input-partitions")
    if check(parts is not None and parts.isdigit(), "%s: stormwatch/input-partitions annotation" % rel):
        parts = int(parts)
        if "replicas" in spec:
            check(1 <= spec["replicas"] <= parts, "%s: replicas %d <= %d partitions" % (rel, spec["replicas"], parts))
    else:
        parts = None
    # Service and PDB.
    svcs_k = [s for s in by_kind.get("Service", []) if labels_match(s["spec"].get("selector"), pod_labels)]
    if check(len(svcs_k) >= 1, "%s: a Service selects the pods" % rel):
        s = svcs_k[0]
        sp = [p for p in s["spec"].get("ports", []) if p.get("name") == "http-metrics"]
        check(bool(sp) and sp[0]["port"] == 9464 and cports.get(sp[0].get("targetPort"), sp[0].get("targetPort")) == 9464,
              "%s: Service port http-metrics 9464 -> the container's 9464" % rel)
        ann = s["metadata"].get("annotations", {})
        check(ann.get("prometheus.io/scrape") == "true" and ann.get("prometheus.io/port") == "9464",
              "%s: Service has Prometheus scrape annotations" % rel)
    # The rollout (docs/operating.md, Upgrading): one new pod beside the old
    # ones, an old one stopped only once a new one is ready.
    if dep["kind"] == "Deployment":
        st = spec.get("strategy", {})
        ru = st.get("rollingUpdate", {})
        check(st.get("type") == "RollingUpdate" and ru.get("maxSurge") == 1 and ru.get("maxUnavailable") == 0,
              "%s: RollingUpdate with maxSurge 1, maxUnavailable 0" % rel)
    pdbs = [p for p in by_kind.get("PodDisruptionBudget", []) if labels_match(p["spec"]["selector"].get("matchLabels"), pod_labels)]
    check(len(pdbs) == 1 and pdbs[0]["spec"].get("maxUnavailable") == 1, "%s: PodDisruptionBudget maxUnavailable 1" % rel)
    # KEDA.
    for so in by_kind.get("ScaledObject", []):
        n = so["metadata"]["name"]
        check(so.get("apiVersion") == "keda.sh/v1alpha1", "%s: ScaledObject %s is keda.sh/v1alpha1" % (rel, n))
        ref = so["spec"].get("scaleTargetRef", {})
        check(ref.get("name") == dep["metadata"]["name"] and ref.get("kind", "Deployment") == "Deployment",
              "%s: ScaledObject %s targets Deployment %s" % (rel, n, ref.get("name")))
        check("replicas" not in spec, "%s: the Deployment leaves replicas to KEDA (no spec.replicas)" % rel)
        mn, mx = so["spec"].get("minReplicaCount", 0), so["spec"].get("maxReplicaCount", 100)
        check(mn >= 1, "%s: minReplicaCount %s >= 1 (state is per consumer)" % (rel, mn))
        if parts is not None:
            check(mx <= parts, "%s: maxReplicaCount %s <= %d partitions" % (rel, mx, parts))
        kt = [t for t in so["spec"].get("triggers", []) if t.get("type") == "kafka"]
        if check(len(kt) >= 1, "%s: ScaledObject %s has a kafka trigger" % (rel, n)):
            md = kt[0].get("metadata", {})
            check(md.get("consumerGroup") == eff["group.id"], "%s: consumerGroup %s == group.id %s" % (rel, md.get("consumerGroup"), eff["group.id"]))
            # repartition=on (default): two stages (input, repartition topic),
            # so no topic: KEDA then takes the lag of every topic of the group.
            if eff.get("repartition", "on") == "on":
                check(md.get("topic") is None, "%s: no topic in the kafka trigger (lag of both stages with repartition=on), got %s" % (rel, md.get("topic")))
            else:
                check(md.get("topic") in eff["input.topics"].split(","), "%s: topic %s in input.topics" % (rel, md.get("topic")))
            check(md.get("bootstrapServers") == eff["bootstrap.servers"], "%s: bootstrapServers == bootstrap.servers" % rel)
            check(str(md.get("lagThreshold", "")).isdigit(), "%s: lagThreshold set" % rel)

# ---- kustomize fields, KEDA with SASL, NetworkPolicy, monitoring ----
def svc_port(url):
    m = re.match(r"^https?://([\w.-]+):(\d+)", url or "")
    return (m.group(1), int(m.group(2))) if m else (None, None)

DEPRECATED = ("bases", "patchesStrategicMerge", "patchesJson6902", "commonLabels", "vars", "imageTags")
for kf in sorted(glob.glob(os.path.join(root, "deploy", "**", "kustomization.yaml"), recursive=True)):
    with open(kf) as f:
        kd = yaml.safe_load(f) or {}
    rel_k = os.path.relpath(kf, root)
    old_fields = [k for k in DEPRECATED if k in kd]
    check(not old_fields, "%s: no deprecated kustomize fields (%s)" % (rel_k, ", ".join(old_fields) or "none"))

def env_of(ctr):
    return {e["name"]: e for e in ctr.get("env", [])}

conf_props = parse_props(read("deploy/base/stormwatch.conf"))
for rel, path in renders:
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    by = {}
    for d in docs:
        by.setdefault(d["kind"], []).append(d)
    wl = {}
    for d in by.get("Deployment", []) + by.get("StatefulSet", []):
        wl[d["spec"]["template"]["metadata"]["labels"].get("app.kubernetes.io/component")] = d
    det = wl.get("detector")
    det_ctr = [c for c in det["spec"]["template"]["spec"]["containers"] if c["name"] == "stormwatch"][0] if det else {}
    denv = env_of(det_ctr)
    boot = denv.get("STORMWATCH_BOOTSTRAP_SERVERS", {}).get("value") or conf_props.get("bootstrap.servers", "")
    sasl = denv.get("STORMWATCH_KAFKA_SECURITY_PROTOCOL", {}).get("value", "").startswith("SASL")
    # KEDA: a scaler that reaches the brokers the way the pods do.
    for so in by.get("ScaledObject", []):
        for t in [t for t in so["spec"].get("triggers", []) if t.get("type") == "kafka"]:
            md = t.get("metadata", {})
            check(md.get("bootstrapServers") == boot,
                  "%s: KEDA's bootstrapServers %s == the pods' %s" % (rel, md.get("bootstrapServers"), boot))
            ref = (t.get("authenticationRef") or {}).get("name")
            if not sasl:
                check(ref is None, "%s: no TriggerAuthentication without SASL" % rel)
                continue
            tas = [x for x in by.get("TriggerAuthentication", []) if x["metadata"]["name"] == ref]
            if not check(len(tas) == 1, "%s: SASL pods, so the kafka trigger authenticates (authenticationRef %s in the render)" % (rel, ref)):
                continue
            params = {r["parameter"]: r for r in tas[0]["spec"].get("secretTargetRef", [])}
            check({"sasl", "username", "password", "tls", "ca"} <= set(params),
                  "%s: TriggerAuthentication gives sasl, username, password, tls, ca (%s)" % (rel, sorted(params)))
            pod_refs = {(e["valueFrom"]["secretKeyRef"]["name"], e["valueFrom"]["secretKeyRef"]["key"])
                        for e in det_ctr.get("env", []) if "secretKeyRef" in (e.get("valueFrom") or {})}
            for v in det["spec"]["template"]["spec"].get("volumes", []):
                for it in (v.get("secret") or {}).get("items", []):
                    pod_refs.add((v["secret"]["secretName"], it["key"]))
            gen = {s2["metadata"]["name"]: s2 for s2 in by.get("Secret", [])}
            for pname in ("username", "password", "ca"):
                r = params.get(pname, {})
                check((r.get("name"), r.get("key")) in pod_refs,
                      "%s: KEDA's %s is the pods' own Secret %s/%s" % (rel, pname, r.get("name"), r.get("key")))
            import base64
            for pname, want in (("sasl", "scram_sha512"), ("tls", "enable")):
                r = params.get(pname, {})
                sec = gen.get(r.get("name"))
                val = base64.b64decode(sec["data"][r["key"]]).decode() if sec and r.get("key") in (sec.get("data") or {}) else None
                check(val == want, "%s: KEDA's %s is %s (%s)" % (rel, pname, want, val))
            mech = denv.get("STORMWATCH_KAFKA_SASL_MECHANISMS", {}).get("value", "")
            check(mech.lower().replace("-", "_") == "scram_sha_512" and params.get("sasl"),
                  "%s: the pods' SASL mechanism %s is KEDA's scram_sha512" % (rel, mech))
    # NetworkPolicy: each component's pods are selected; ingress only the
    # metrics and probe ports; egress to DNS, Kafka, and the component's
    # own endpoints.
    def port_allowed(rules, port, proto="TCP"):
        return any(any(pp.get("port") == port and pp.get("protocol", "TCP") == proto for pp in r.get("ports", []))
                   for r in rules)
    kafka_ports = sorted({port_of(b) for b in boot.split(",") if port_of(b)})
    am_port = svc_port(conf_props.get("alertmanager.url", ""))[1]
    for comp in ("detector", "notifier"):
        if comp not in wl:
            continue
        labels = wl[comp]["spec"]["template"]["metadata"]["labels"]
        nps = [n for n in by.get("NetworkPolicy", []) if labels_match(n["spec"]["podSelector"].get("matchLabels"), labels)]
        if not check(len(nps) == 1, "%s: one NetworkPolicy selects the %s pods" % (rel, comp)):
            continue
        np = nps[0]["spec"]
        check(set(np.get("policyTypes", [])) == {"Ingress", "Egress"}, "%s: %s policy restricts ingress and egress" % (rel, comp))
        iports = sorted({pp.get("port") for r in np.get("ingress", []) for pp in r.get("ports", [])})
        check(iports == [9464, 9465] and all(r.get("ports") for r in np.get("ingress", [])),
              "%s: %s ingress only to metrics and probes (%s)" % (rel, comp, iports))
        eg = np.get("egress", [])
        check(port_allowed(eg, 53, "UDP") and port_allowed(eg, 53, "TCP"), "%s: %s egress to DNS" % (rel, comp))
        for kp in kafka_ports:
            check(port_allowed(eg, kp), "%s: %s egress to Kafka port %s (bootstrap.servers %s)" % (rel, comp, kp, boot))
        if comp == "detector":
            check(port_allowed(eg, 8081), "%s: detector egress to a schema registry (8081)" % rel)
        else:
            check(am_port is not None and port_allowed(eg, am_port), "%s: notifier egress to Alertmanager (%s)" % (rel, am_port))
            check(port_allowed(eg, 443), "%s: notifier egress to pagers and webhooks (443)" % rel)
    # The monitoring overlay: a PodMonitor over both daemons, the shipped rules.
    for pm in by.get("PodMonitor", []):
        eps = pm["spec"].get("podMetricsEndpoints", [])
        for comp, d in wl.items():
            lab = d["spec"]["template"]["metadata"]["labels"]
            ports = {p2.get("name") for c in d["spec"]["template"]["spec"]["containers"] for p2 in c.get("ports", [])}
            check(labels_match(pm["spec"]["selector"].get("matchLabels"), lab) and any(e.get("port") in ports for e in eps),
                  "%s: PodMonitor scrapes the %s pods' %s" % (rel, comp, [e.get("port") for e in eps]))
    for pr in by.get("PrometheusRule", []):
        with open(os.path.join(root, "deploy/monitoring/stormwatch-rules.yml")) as f:
            shipped = yaml.safe_load(f)
        check(pr["spec"].get("groups") == shipped.get("groups"),
              "%s: PrometheusRule has exactly deploy/monitoring/stormwatch-rules.yml (scripts/gen-prometheusrule.sh)" % rel)
rendered_dirs = {rel for rel, _ in renders}
for want in ("deploy/overlays/keda-sasl-tls", "deploy/overlays/monitoring"):
    if renders:
        check(want in rendered_dirs, "%s renders" % want)

# ---- compose: Alertmanager and notify ----
if compose_out:
    with open(compose_out) as f:
        csvcs = (yaml.safe_load(f) or {}).get("services", {})
    check("alertmanager" in csvcs and "notify" in csvcs, "compose: services alertmanager and notify")
    nsvc = csvcs.get("notify", {})
    ncmd = nsvc.get("command")
    check(ncmd == ["notify"] or ncmd == "notify", "compose: notify runs stormwatch notify (%s)" % ncmd)
    nenv = {k: str(v) for k, v in (nsvc.get("environment") or {}).items()}
    check(nenv.get("STORMWATCH_ALERTMANAGER_URL", "").startswith("http://alertmanager:"),
          "compose: notify delivers to the alertmanager service")
    init_cmd = str(csvcs.get("kafka-init", {}).get("command", ""))
    check(nenv.get("STORMWATCH_NOTIFY_DLQ_TOPIC", "stormwatch.notify.dlq") in init_cmd,
          "compose: kafka-init creates notify.dlq.topic")
    if sw_bin:
        r = subprocess.run([sw_bin, "notify", "-X", "dump"], env={k: v for k, v in nenv.items()
                           if k.startswith("STORMWATCH_")}, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=30)
        check(r.returncode == 0, "compose: notify accepts its environment (notify -X dump)%s"
              % ("" if r.returncode == 0 else ": " + r.stderr.strip()))

# ---- compose: the monitoring, the registry, live telemetry ----
def vol_map(svc):
    """Bind mounts of a rendered service: container path -> host path."""
    out = {}
    for v in svc.get("volumes") or []:
        if isinstance(v, dict) and v.get("type") == "bind":
            out[v["target"]] = v["source"]
        elif isinstance(v, str) and ":" in v:
            parts = v.split(":")
            out[parts[1]] = parts[0]
    return out

if compose_out:
    with open(compose_out) as f:
        csvcs = (yaml.safe_load(f) or {}).get("services", {})
    for name in ("prometheus", "grafana", "karapace", "alert-log"):
        check(name in csvcs, "compose: service %s" % name)
    for name, svc in csvcs.items():
        img = svc.get("image", "")
        check(img and not img.endswith(":latest") and (":" in img.split("/")[-1]),
              "compose: %s image pinned (%s)" % (name, img))
    # Alertmanager: its configuration is mounted, every receiver exists,
    # and a webhook receiver points at a service of the stack.
    am = csvcs.get("alertmanager", {})
    amv = vol_map(am)
    am_host = amv.get("/etc/alertmanager/alertmanager.yml")
    if check(am_host is not None and os.path.isfile(am_host),
             "compose: alertmanager mounts its configuration (%s)" % am_host):
        with open(am_host) as f:
            amc = yaml.safe_load(f)
        names = {r["name"] for r in amc.get("receivers", [])}
        def route_receivers(r):
            yield r.get("receiver")
            for sub in r.get("routes", []) or []:
                yield from route_receivers(sub)
        used = [x for x in route_receivers(amc.get("route", {})) if x]
        check(bool(used) and all(x in names for x in used),
              "compose: every Alertmanager route's receiver exists (%s of %s)" % (used, sorted(names)))
        for r in amc.get("receivers", []):
            for w in r.get("webhook_configs", []) or []:
                host, port = svc_port(w.get("url"))
                check(host in csvcs, "compose: receiver %s posts to service %s" % (r["name"], host))
                if host == "alert-log":
                    cmd = [str(x) for x in csvcs["alert-log"].get("command") or []]
                    check(str(port) in cmd, "compose: alert-log listens on %s (%s)" % (port, cmd))
    # The schema registry: the daemon and the generator use it.
    sw_env = {k: str(v) for k, v in (csvcs.get("stormwatch", {}).get("environment") or {}).items()}
    reg = sw_env.get("STORMWATCH_SCHEMA_REGISTRY_URL", "")
    host, port = svc_port(reg)
    kenv = {k: str(v) for k, v in (csvcs.get("karapace", {}).get("environment") or {}).items()}
    check(host == "karapace" and str(port) == kenv.get("KARAPACE_PORT"),
          "compose: stormwatch schema.registry.url=%s is the karapace service's port" % reg)
    check(kenv.get("KARAPACE_BOOTSTRAP_URI") == "kafka:9092" and kenv.get("KARAPACE_KARAPACE_REGISTRY") == "true",
          "compose: karapace is a registry on kafka:9092")
    check(re.match(r"^ghcr\.io/aiven-open/karapace:\d+\.\d+\.\d+$", csvcs.get("karapace", {}).get("image", "")) is not None,
          "compose: karapace (Apache-2.0, Confluent API) pinned to a release")
    gen = csvcs.get("telemetry-gen", {})
    gen_cmd = " ".join(gen.get("entrypoint") or []) + " " + " ".join(gen.get("command") or [])
    check(re.search(r"stormwatch produce [^\n]*--rate \d+", gen_cmd) is not None,
          "compose: telemetry-gen produces at a live rate (--rate)")
    check("--format avro" in gen_cmd and "schema.registry.url=" + reg in gen_cmd,
          "compose: telemetry-gen produces Avro registered in %s" % reg)
    check(re.search(r"while :; do", gen_cmd) is not None and "--start-ns" in gen_cmd and gen.get("restart") != "no",
          "compose: telemetry-gen keeps producing rounds that start now")
    check((gen.get("depends_on") or {}).get("karapace", {}).get("condition") == "service_healthy"
          and bool((csvcs.get("karapace", {}).get("healthcheck") or {}).get("test")),
          "compose: telemetry-gen waits for a healthy karapace")
    # Prometheus: the shipped rules and a configuration scraping run and notify.
    pv = vol_map(csvcs.get("prometheus", {}))
    rules_host = pv.get("/etc/prometheus/rules/stormwatch-rules.yml")
    check(rules_host is not None and os.path.realpath(rules_host) ==
          os.path.realpath(os.path.join(root, "deploy/monitoring/stormwatch-rules.yml")),
          "compose: prometheus loads deploy/monitoring/stormwatch-rules.yml")
    pconf = pv.get("/etc/prometheus/prometheus.yml")
    if check(pconf is not None and os.path.isfile(pconf), "compose: prometheus mounts its configuration"):
        with open(pconf) as f:
            pc = yaml.safe_load(f)
        check("rules/*.yml" in (pc.get("rule_files") or []), "compose: prometheus.yml loads rules/*.yml")
        targets = {t for sc in pc.get("scrape_configs", []) for st in sc.get("static_configs", [])
                   for t in st.get("targets", [])}
        nenv = {k: str(v) for k, v in (csvcs.get("notify", {}).get("environment") or {}).items()}
        for svc, env in (("stormwatch", sw_env), ("notify", nenv)):
            want = "%s:%s" % (svc, port_of(env.get("STORMWATCH_METRICS_LISTEN", "")))
            check(want in targets, "compose: prometheus scrapes %s (%s)" % (svc, want))
        ams = [t for a in (pc.get("alerting") or {}).get("alertmanagers", []) for st in a.get("static_configs", [])
               for t in st.get("targets", [])]
        check("alertmanager:9093" in ams, "compose: prometheus alerts to alertmanager:9093")
    # Grafana: the shipped dashboard and the provisioning that loads it.
    gv = vol_map(csvcs.get("grafana", {}))
    dash_in = [c for c, h in gv.items() if os.path.realpath(h) ==
               os.path.realpath(os.path.join(root, "deploy/monitoring/stormwatch-dashboard.json"))]
    prov = gv.get("/etc/grafana/provisioning")
    if check(len(dash_in) == 1 and prov and os.path.isdir(prov),
             "compose: grafana mounts the dashboard and docker/grafana/provisioning"):
        with open(os.path.join(prov, "dashboards", "stormwatch.yml")) as f:
            dp = yaml.safe_load(f)
        paths = [p["options"]["path"] for p in dp.get("providers", []) if p.get("type") == "file"]
        check(dp.get("apiVersion") == 1 and any(os.path.dirname(dash_in[0]) == x.rstrip("/") for x in paths),
              "compose: a file dashboard provider reads %s" % os.path.dirname(dash_in[0]))
        with open(os.path.join(prov, "datasources", "prometheus.yml")) as f:
            ds = yaml.safe_load(f)
        proms = [d for d in ds.get("datasources", []) if d.get("type") == "prometheus"]
        host, port = svc_port(proms[0].get("url") if proms else "")
        check(ds.get("apiVersion") == 1 and len(proms) == 1 and host == "prometheus" and port == 9090,
              "compose: grafana's datasource is the prometheus service")

# ---- the notify Deployment (stormwatch notify on output.topic) ----
for rel, path in renders:
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    deps = [d for d in docs if d.get("kind") == "Deployment" and d["metadata"]["name"] == "stormwatch-notify"]
    if not check(len(deps) == 1, "%s: Deployment stormwatch-notify" % rel):
        continue
    pod = deps[0]["spec"]["template"]["spec"]
    ctrs = [x for x in pod.get("containers", []) if x["name"] == "notify"]
    if not check(len(ctrs) == 1, "%s: notify: container notify" % rel):
        continue
    ctr = ctrs[0]
    cargs = ctr.get("args", [])
    check(cargs[:2] == ["notify", "-c"] and len(cargs) >= 3, "%s: notify: args notify -c FILE (%s)" % (rel, cargs))
    check(pod.get("securityContext", {}).get("runAsNonRoot") is True, "%s: notify: runAsNonRoot" % rel)
    check(ctr.get("securityContext", {}).get("readOnlyRootFilesystem") is True, "%s: notify: read-only root" % rel)
    check(pod.get("enableServiceLinks") is False, "%s: notify: enableServiceLinks: false" % rel)
    for name, want in (("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")):
        g = (ctr.get(name) or {}).get("httpGet") or {}
        check(g.get("path") == want, "%s: notify: %s GET %s" % (rel, name, want))
    cms = [d for d in docs if d.get("kind") == "ConfigMap" and d["metadata"]["name"].startswith("stormwatch-config")]
    conf_text = cms[0].get("data", {}).get(os.path.basename(cargs[2] if len(cargs) >= 3 else "")) if cms else None
    check(conf_text is not None, "%s: notify: its -c FILE comes from the ConfigMap" % rel)
    env = {e["name"]: str(e["value"]) for e in ctr.get("env", []) if "value" in e and e["name"].startswith("STORMWATCH_")
           and "$(" not in str(e["value"])}
    if sw_bin and conf_text is not None:
        cpath = os.path.join(os.environ.get("TMPDIR", "/tmp"), "test_deploy_notify_%d.conf" % os.getpid())
        with open(cpath, "w") as f:
            f.write(conf_text)
        try:
            r = subprocess.run([sw_bin, "notify", "-c", cpath, "-X", "dump"], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
        finally:
            os.unlink(cpath)
        check(r.returncode == 0, "%s: notify accepts the configuration (notify -X dump)%s"
              % (rel, "" if r.returncode == 0 else ": " + r.stderr.strip()))
        if r.returncode == 0:
            d = parse_props(r.stdout)
            check(d.get("alertmanager.url", "") != "", "%s: notify: alertmanager.url is set" % rel)

# ---- deploy/ship: the shipper's DaemonSet ----
ship_docs = [d for d in yaml.safe_load_all(read("deploy/ship/daemonset.yaml")) if d]
ds = [d for d in ship_docs if d.get("kind") == "DaemonSet"]
if check(len(ds) == 1, "deploy/ship/daemonset.yaml: one DaemonSet"):
    pod = ds[0]["spec"]["template"]["spec"]
    ctr = [c for c in pod["containers"] if c["name"] == "ship"][0]
    args = ctr.get("args", [])
    check(args[:1] == ["ship"], "deploy/ship: the container runs stormwatch ship (%s)" % args[:1])
    mounts = {m["name"]: m for m in ctr.get("volumeMounts", [])}
    vols = {v["name"]: v for v in pod.get("volumes", [])}
    ck = args[args.index("--checkpoint") + 1] if "--checkpoint" in args else ""
    ck_mount = [m for m in mounts.values() if ck.startswith(m["mountPath"].rstrip("/") + "/")]
    check(len(ck_mount) == 1 and not ck_mount[0].get("readOnly") and "hostPath" in vols.get(ck_mount[0]["name"], {}),
          "deploy/ship: --checkpoint %s is on a writable hostPath (survives the pod)" % ck)
    sink = args[-1] if args else ""
    sink_mount = [m for m in mounts.values() if m["mountPath"].rstrip("/") == sink.rstrip("/")]
    check(len(sink_mount) == 1 and sink_mount[0].get("readOnly") is True and "hostPath" in vols.get(sink_mount[0]["name"], {}),
          "deploy/ship: the sink %s is a read-only hostPath" % sink)
    env = env_of(ctr)
    listen = env.get("STORMWATCH_METRICS_LISTEN", {}).get("value", "")
    ports = {p["name"]: p["containerPort"] for p in ctr.get("ports", [])}
    for probe in ("livenessProbe", "readinessProbe"):
        hg = (ctr.get(probe) or {}).get("httpGet", {})
        check(hg.get("path") in ("/healthz", "/readyz") and str(ports.get(hg.get("port"))) == listen.rsplit(":", 1)[-1],
              "deploy/ship: %s %s on the metrics port %s" % (probe, hg.get("path"), listen))
    check(int(pod.get("terminationGracePeriodSeconds", 30)) > 10,
          "deploy/ship: the grace period exceeds ship's --stop-timeout (10 s)")
    if sw_bin:
        r = subprocess.run([sw_bin, "ship", "--help"], stdout=subprocess.PIPE, text=True, timeout=30)
        known = set(re.findall(r"(--[a-z][a-z-]*)", r.stdout)) | {"-t", "-b", "-X"}
        used = [a for a in args if a.startswith("-")]
        check(all(a in known for a in used), "deploy/ship: ship knows every option used (%s)" % " ".join(used))

print("test_deploy: %d structural checks, %d failed" % (checks, fails))
sys.exit(1 if fails else 0)
PYEOF
  rc=$?
  [ "$rc" -eq 0 ] || fails=$((fails + 1))
fi

if [ "$fails" -gt 0 ]; then
  echo "test_deploy: FAILED ($fails failing step(s))"
  exit 1
fi
if [ "$skips" -gt 0 ]; then
  echo "test_deploy: passed ($skips step(s) skipped)"
else
  echo "test_deploy: passed"
fi
exit 0
