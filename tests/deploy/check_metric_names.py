#!/usr/bin/env python3
"""Every metric the Grafana dashboard and the Prometheus alerts use exists.

Starts a real msld (free ports, a fresh data directory), scrapes its
/metrics over HTTP, and checks each metric name in the PromQL of
deploy/grafana/msld-dashboard.json (targets, template queries) and of
deploy/prometheus/alerts.yml against the scrape. A family prometheus-cpp
leaves out of a scrape until its first series exists (e.g.
msld_cuda_module_load_seconds on a machine without a GPU) counts when
service/Metrics.cpp declares it. Names listed in tests/deploy/pending-metrics.txt
(metrics being added right now) are reported, not failed.

Also checks the dashboard's structure: unique panel ids, every target with
an expr and the ${datasource} variable.

Exit status: 0 pass, 1 fail, 77 skipped (no python3-yaml, no msld binary).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

try:
    import yaml
except ImportError:
    print("SKIP: python3-yaml is not installed (Debian package python3-yaml; scripts/setup.sh installs it)")
    sys.exit(77)

# Names in PromQL that are metrics msld exports: these prefixes. Others in
# ALLOWED come from Prometheus itself.
PREFIXES = ("msld_", "exposer_")
ALLOWED = {"up"}
NAME = re.compile(r"(?<![A-Za-z0-9_:\"$])([a-zA-Z_:][a-zA-Z0-9_:]*)")


def metric_names(expr):
    """The metric-like names of an expression: msld_*/exposer_* and `up`."""
    # Drop string literals (label values, e.g. job="msld") first.
    expr = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    names = set()
    for m in NAME.finditer(expr):
        word = m.group(1)
        if word.startswith(PREFIXES):
            names.add(word)
        elif word in ALLOWED:
            # `up` as a metric, not a label name (followed by `{`, space, `==`...).
            names.add(word)
    return names


def dashboard_exprs(dashboard, problems):
    exprs = []
    ids = set()

    def panels(items):
        for p in items:
            yield p
            yield from panels(p.get("panels", []))

    for p in panels(dashboard.get("panels", [])):
        pid = p.get("id")
        if pid in ids:
            problems.append(f"dashboard: panel id {pid} used twice")
        ids.add(pid)
        if p.get("type") == "row":
            continue
        if not p.get("targets"):
            problems.append(f"dashboard: panel '{p.get('title')}' has no targets")
        if p.get("datasource", {}).get("uid") != "${datasource}":
            problems.append(f"dashboard: panel '{p.get('title')}' does not use the ${{datasource}} variable")
        for t in p.get("targets", []):
            if not t.get("expr"):
                problems.append(f"dashboard: panel '{p.get('title')}' has a target without expr")
            else:
                exprs.append((f"panel '{p.get('title')}'", t["expr"]))
    for v in dashboard.get("templating", {}).get("list", []):
        q = v.get("query")
        if isinstance(q, dict):
            q = q.get("query")
        if v.get("type") == "query" and q:
            exprs.append((f"variable '{v.get('name')}'", q))
    return exprs


def alert_exprs(rules, problems):
    exprs = []
    for group in rules.get("groups", []):
        for rule in group.get("rules", []):
            name = rule.get("alert") or rule.get("record")
            if "expr" not in rule:
                problems.append(f"alerts: rule {name} has no expr")
                continue
            exprs.append((f"alert {name}", str(rule["expr"])))
    return exprs


def scrape(msld, tmp):
    ready = os.path.join(tmp, "ready.json")
    log = open(os.path.join(tmp, "msld.log"), "wb")
    args = [msld, "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0",
            "--data-dir", os.path.join(tmp, "data"), "--ready-file", ready,
            "--compile-workers", "1", "--cuda", "off"]
    args += os.environ.get("MSLD_TEST_DAEMON_ARGS", "").split()
    proc = subprocess.Popen(args, stdout=log, stderr=log)
    try:
        port = None
        for _ in range(600):  # up to 60 s: workers load LLVM
            if proc.poll() is not None:
                break
            try:
                with open(ready) as f:
                    port = json.load(f)["metrics_port"]
                break
            except (OSError, ValueError, KeyError):
                time.sleep(0.1)
        if not port:
            log.close()
            sys.exit("FAIL: msld did not start:\n" + open(os.path.join(tmp, "msld.log")).read())
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as r:
            return r.read().decode()
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def exported_names(text):
    names = set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            parts = line.split()
            names.add(parts[2])
            if parts[3] in ("histogram", "summary"):
                names.update(parts[2] + s for s in ("_bucket", "_sum", "_count"))
        elif line and not line.startswith("#"):
            names.add(re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line).group(0))
    return names


def declared_names(metrics_cpp):
    """Families service/Metrics.cpp declares (histograms with their series)."""
    text = open(metrics_cpp).read()
    names = set()
    for m in re.finditer(r'"(msld_[a-z0-9_]+)"', text):
        names.add(m.group(1))
    for m in re.finditer(r'BuildHistogram\(\)\s*\.Name\("(msld_[a-z0-9_]+)"\)', text):
        names.update(m.group(1) + s for s in ("_bucket", "_sum", "_count"))
    return names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--msld", required=True)
    a = ap.parse_args()
    src = a.source_dir
    problems = []

    with open(os.path.join(src, "deploy/grafana/msld-dashboard.json")) as f:
        dashboard = json.load(f)
    with open(os.path.join(src, "deploy/prometheus/alerts.yml")) as f:
        rules = yaml.safe_load(f)
    exprs = dashboard_exprs(dashboard, problems) + alert_exprs(rules, problems)
    pending = set()
    with open(os.path.join(src, "tests/deploy/pending-metrics.txt")) as f:
        for line in f:
            line = line.split("#")[0].strip()
            if line:
                pending.add(line)

    if not os.access(a.msld, os.X_OK):
        print(f"SKIP: {a.msld} is not built")
        sys.exit(77)
    with tempfile.TemporaryDirectory(prefix="msld-names-") as tmp:
        text = scrape(a.msld, tmp)
    scraped = exported_names(text)
    declared = declared_names(os.path.join(src, "service/Metrics.cpp"))

    used = {}
    for where, expr in exprs:
        names = metric_names(expr)
        if not names:
            problems.append(f"{where}: no metric in '{expr}'")
        for n in names:
            used.setdefault(n, []).append(where)

    pending_used = []
    for name in sorted(used):
        if name in ALLOWED or name in scraped:
            continue
        if name in declared:
            print(f"note: {name}: declared in service/Metrics.cpp, no series in a fresh msld's scrape")
            continue
        if name in pending or any(name == p + s for p in pending for s in ("_bucket", "_sum", "_count")):
            pending_used.append(name)
            continue
        problems.append(f"{name} (used by {', '.join(sorted(set(used[name])))}) is not exported by msld")
    for name in pending_used:
        print(f"PENDING: {name} is not exported yet (tests/deploy/pending-metrics.txt); used by "
              + ", ".join(sorted(set(used[name]))))
    for name in sorted(pending):
        if name in scraped:
            print(f"note: {name} is exported now: remove it from tests/deploy/pending-metrics.txt")

    print(f"{len(exprs)} expressions, {len(used)} metric names checked against a scrape of "
          f"{len([n for n in scraped if n.startswith('msld_')])} msld series names")
    if problems:
        for p in problems:
            print("FAIL: " + p)
        sys.exit(1)
    print("PASS")


if __name__ == "__main__":
    main()
