#!/usr/bin/env python3
"""The Kubernetes manifests (deploy/k8s/) and the image (deploy/Containerfile)
agree with each other and with msld.

- kinds and apiVersions; the kustomization lists every manifest;
- the StatefulSet's serviceName is a headless Service; the Services select
  the pod template's labels and their targetPorts are container ports;
- the container's --listen/--metrics-listen ports are its containerPorts
  (bound to 0.0.0.0), the probes use them (grpc on the gRPC port, HTTP on
  the metrics port), --data-dir is the PersistentVolumeClaim's mount;
- resources have requests and limits; runAsNonRoot with a non-zero uid,
  no privilege escalation, capabilities dropped;
- terminationGracePeriodSeconds exceeds --drain-timeout-s;
- the Containerfile's final USER is numeric, non-root and the manifest's
  runAsUser; its VOLUME is the data dir, EXPOSE the ports, its CMD's flags
  the same ports; a HEALTHCHECK on the metrics port;
- with --msld: every flag of the manifest and the CMD is one msld --help
  lists, and the runtime stage installs the Debian package of every shared
  library the built binaries load (ldd, dpkg -S);
- where kubectl is installed, `kubectl kustomize deploy/k8s` renders.

Exit status: 0 pass, 1 fail, 77 skipped (no python3-yaml).
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys

try:
    import yaml
except ImportError:
    print("SKIP: python3-yaml is not installed (Debian package python3-yaml; scripts/setup.sh installs it)")
    sys.exit(77)

API = {"Service": "v1", "StatefulSet": "apps/v1", "Kustomization": "kustomize.config.k8s.io/v1beta1"}
problems = []


def check(cond, message):
    if not cond:
        problems.append(message)
    return cond


def flag_values(args):
    """{'--listen': '0.0.0.0:8980', ...} from ['--listen', 'X', '--flag=Y', ...]."""
    out = {}
    i = 0
    while i < len(args):
        a = str(args[i])
        if a.startswith("--"):
            if "=" in a:
                k, v = a.split("=", 1)
                out[k] = v
            elif i + 1 < len(args) and not str(args[i + 1]).startswith("--"):
                out[a] = str(args[i + 1])
                i += 1
            else:
                out[a] = ""
        i += 1
    return out


def host_port(value, flag):
    m = re.fullmatch(r"(.*):(\d+)", value or "")
    if not check(m, f"{flag} '{value}' is not HOST:PORT"):
        return None, None
    return m.group(1), int(m.group(2))


def containerfile(path):
    """The final stage's instructions: [(INSTRUCTION, argument text)]."""
    text = open(path).read().replace("\\\n", " ")
    stages, current = [], []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        word, _, rest = line.partition(" ")
        word = word.upper()
        if word == "FROM":
            current = []
            stages.append(current)
        current.append((word, rest.strip()))
    return stages


BINARIES = ["msld", "msld-compile-worker", "msld-exec-worker", "msld-cuda-worker", "mslc"]
# In debian:12-slim already (Essential, or what apt needs).
BASE_PACKAGES = {"libc6", "libgcc-s1", "libstdc++6"}


def runtime_packages(final, bin_dir):
    installed = set()
    for w, arg in final:
        if w == "RUN" and "apt-get install" in arg:
            installed.update(t for t in arg.split() if re.fullmatch(r"[a-z0-9][a-z0-9+.-]+", t))
    check(installed, "the final stage installs no packages")
    try:
        subprocess.run(["dpkg-query", "--version"], capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        print("note: no dpkg: the runtime packages are not checked against the binaries' libraries")
        return
    libs = set()
    for b in BINARIES:
        path = os.path.join(bin_dir, b)
        if not os.access(path, os.X_OK):
            print(f"note: {path} is not built: its libraries are not checked")
            continue
        out = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
        libs.update(m.group(1) for m in re.finditer(r"=> (/\S+)", out))
    for lib in sorted(libs):
        name = os.path.basename(lib)
        owner = None
        # The multiarch directories first: a RUNPATH may resolve a library
        # through a -dev package's symlink (/usr/lib/llvm-19/lib/libLLVM.so.19.1).
        for cand in (f"/usr/lib/x86_64-linux-gnu/{name}", f"/lib/x86_64-linux-gnu/{name}", lib,
                     os.path.realpath(lib)):
            r = subprocess.run(["dpkg", "-S", cand], capture_output=True, text=True)
            if r.returncode == 0:
                pkg = r.stdout.split(":")[0]
                if not pkg.endswith("-dev"):
                    owner = pkg
                    break
                owner = owner or pkg
        if owner is None:
            print(f"note: {lib}: no Debian package owns it (not checked)")
            continue
        check(owner in installed or owner in BASE_PACKAGES,
              f"deploy/Containerfile's runtime stage lacks {owner} ({name}, loaded by the built binaries)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--msld", help="msld binary: check the flags against its --help")
    a = ap.parse_args()
    k8s = os.path.join(a.source_dir, "deploy/k8s")

    docs = {}
    for path in sorted(glob.glob(os.path.join(k8s, "*.yaml"))):
        with open(path) as f:
            for d in yaml.safe_load_all(f):
                if d is None:
                    continue
                kind = d.get("kind")
                where = f"{os.path.basename(path)}: {kind} {d.get('metadata', {}).get('name', '')}".strip()
                check(kind in API, f"{where}: unexpected kind")
                check(d.get("apiVersion") == API.get(kind), f"{where}: apiVersion {d.get('apiVersion')}, "
                                                             f"want {API.get(kind)}")
                docs.setdefault(kind, []).append((os.path.basename(path), d))

    # The kustomization names every other manifest, and they exist.
    kust = docs.get("Kustomization", [])
    if check(len(kust) == 1, "want one kustomization.yaml"):
        resources = set(kust[0][1].get("resources", []))
        files = {os.path.basename(p) for p in glob.glob(os.path.join(k8s, "*.yaml"))} - {"kustomization.yaml"}
        check(resources == files, f"kustomization resources {sorted(resources)} != manifests {sorted(files)}")

    sts_list = docs.get("StatefulSet", [])
    if not check(len(sts_list) == 1, "want one StatefulSet"):
        return
    sts = sts_list[0][1]
    spec = sts["spec"]
    pod = spec["template"]["spec"]
    labels = spec["template"]["metadata"].get("labels", {})
    sel = spec["selector"].get("matchLabels", {})
    check(sel and all(labels.get(k) == v for k, v in sel.items()),
          f"StatefulSet selector {sel} does not match the template labels {labels}")

    containers = pod.get("containers", [])
    c = next((c for c in containers if c["name"] == "msld"), None)
    if not check(c, "no container named msld"):
        return
    flags = flag_values(c.get("args", []))
    ports = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
    gh, gport = host_port(flags.get("--listen"), "--listen")
    mh, mport = host_port(flags.get("--metrics-listen"), "--metrics-listen")
    check(gh == "0.0.0.0", f"--listen {flags.get('--listen')}: bind 0.0.0.0 (the kubelet and the Service "
                           "reach the pod IP)")
    check(mh == "0.0.0.0", f"--metrics-listen {flags.get('--metrics-listen')}: bind 0.0.0.0")
    check(ports.get("grpc") == gport, f"containerPort grpc {ports.get('grpc')} != --listen port {gport}")
    check(ports.get("metrics") == mport, f"containerPort metrics {ports.get('metrics')} != --metrics-listen "
                                         f"port {mport}")
    check(flags.get("--log-format") == "json", "the container should log JSON (--log-format json)")

    def resolve(port):
        return ports.get(port, port) if isinstance(port, str) else port

    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        p = c.get(probe)
        if not check(p, f"container msld has no {probe}"):
            continue
        if "grpc" in p:
            check(resolve(p["grpc"]["port"]) == gport, f"{probe}: grpc port {p['grpc']['port']} is not the "
                                                       f"gRPC port {gport}")
        elif "httpGet" in p:
            check(resolve(p["httpGet"]["port"]) == mport and p["httpGet"].get("path") == "/metrics",
                  f"{probe}: httpGet {p['httpGet']} is not /metrics on port {mport}")
        else:
            check(False, f"{probe}: want a grpc or httpGet probe")

    res = c.get("resources", {})
    for kind in ("requests", "limits"):
        check(all(k in res.get(kind, {}) for k in ("cpu", "memory")), f"resources.{kind} needs cpu and memory")

    psc = pod.get("securityContext", {})
    csc = c.get("securityContext", {})
    uid = csc.get("runAsUser", psc.get("runAsUser"))
    check(csc.get("runAsNonRoot", psc.get("runAsNonRoot")) is True, "runAsNonRoot must be true")
    check(isinstance(uid, int) and uid != 0, f"runAsUser {uid}: want a non-zero uid")
    check(csc.get("allowPrivilegeEscalation") is False, "allowPrivilegeEscalation must be false")
    check("ALL" in csc.get("capabilities", {}).get("drop", []), "capabilities must drop ALL")
    check(not csc.get("privileged", False), "the container must not be privileged")
    check(not csc.get("capabilities", {}).get("add"), "the container should add no capabilities (the worker "
                                                      "sandbox needs none)")

    # The data dir is the PersistentVolumeClaim.
    claims = {t["metadata"]["name"] for t in spec.get("volumeClaimTemplates", [])}
    mounts = {m["mountPath"]: m["name"] for m in c.get("volumeMounts", [])}
    data_dir = flags.get("--data-dir")
    check(data_dir in mounts and mounts[data_dir] in claims,
          f"--data-dir {data_dir} is not mounted from a volumeClaimTemplate ({mounts}, claims {claims})")

    drain = int(flags.get("--drain-timeout-s", "30"))
    check(pod.get("terminationGracePeriodSeconds", 30) > drain,
          f"terminationGracePeriodSeconds {pod.get('terminationGracePeriodSeconds', 30)} must exceed "
          f"--drain-timeout-s {drain}")

    # Services: select the pods, target the container's ports; the
    # StatefulSet's serviceName is headless.
    services = {d["metadata"]["name"]: d for _, d in docs.get("Service", [])}
    gov = services.get(spec.get("serviceName"))
    check(gov and gov["spec"].get("clusterIP") == "None",
          f"serviceName {spec.get('serviceName')} must be a headless Service (clusterIP: None)")
    check(any(s["spec"].get("clusterIP") != "None" for s in services.values()), "no client Service")
    for name, s in services.items():
        ssel = s["spec"].get("selector", {})
        check(ssel and all(labels.get(k) == v for k, v in ssel.items()),
              f"Service {name} selector {ssel} does not select the pods ({labels})")
        names = set()
        for p in s["spec"].get("ports", []):
            names.add(p["name"])
            target = resolve(p.get("targetPort", p["port"]))
            check(target in (gport, mport), f"Service {name} port {p['name']}: targetPort {p.get('targetPort')} "
                                            "is not a container port")
        check({"grpc", "metrics"} <= names, f"Service {name} should expose grpc and metrics")

    # The image.
    stages = containerfile(os.path.join(a.source_dir, "deploy/Containerfile"))
    if check(stages, "deploy/Containerfile has no FROM"):
        final = stages[-1]
        check(final[0][1].startswith("debian:12"), f"final stage FROM {final[0][1]}: want Debian 12")
        check(stages[0][0][1].startswith("debian:12"), f"build stage FROM {stages[0][0][1]}: want Debian 12")
        users = [arg for w, arg in final if w == "USER"]
        if check(users, "the final stage sets no USER (the image would run as root)"):
            user = users[-1].split(":")[0]
            check(user.isdigit() and int(user) != 0, f"USER {users[-1]}: want a numeric non-root uid "
                                                      "(runAsNonRoot checks numbers)")
            check(user.isdigit() and int(user) == uid, f"USER {user} != runAsUser {uid}")
        volumes = " ".join(arg for w, arg in final if w == "VOLUME")
        check(data_dir and data_dir in volumes, f"VOLUME {volumes} does not hold --data-dir {data_dir}")
        exposed = {int(p.split("/")[0]) for w, arg in final if w == "EXPOSE" for p in arg.split()}
        check({gport, mport} <= exposed, f"EXPOSE {sorted(exposed)} lacks {gport} or {mport}")
        health = [arg for w, arg in final if w == "HEALTHCHECK"]
        check(health and f":{mport}/metrics" in health[-1], f"HEALTHCHECK {health} does not ask :{mport}/metrics")
        cmd = [json.loads(arg) for w, arg in final if w == "CMD"]
        if check(cmd, "the final stage has no CMD"):
            cflags = flag_values(cmd[-1])
            check(host_port(cflags.get("--listen"), "CMD --listen")[1] == gport, "CMD --listen port differs")
            check(host_port(cflags.get("--metrics-listen"), "CMD --metrics-listen")[1] == mport,
                  "CMD --metrics-listen port differs")
            check(cflags.get("--data-dir") == data_dir, "CMD --data-dir differs from the manifest's")
            flags.update(cflags)

    # The runtime stage installs the package of every shared library the
    # built binaries load (where dpkg can say).
    if a.msld and stages:
        runtime_packages(stages[-1], os.path.dirname(a.msld))

    # Flags msld has.
    if a.msld:
        if os.access(a.msld, os.X_OK):
            out = subprocess.run([a.msld, "--help"], capture_output=True, text=True, timeout=60).stdout
            known = set(re.findall(r"--[a-z][a-z0-9-]*", out))
            for f in flags:
                check(f in known, f"msld has no flag {f} (msld --help)")
        else:
            print(f"note: {a.msld} is not built: flags not checked against msld --help")

    # Where kubectl is installed: the kustomization renders.
    kubectl = shutil.which("kubectl")
    if kubectl:
        r = subprocess.run([kubectl, "kustomize", k8s], capture_output=True, text=True, timeout=60)
        if check(r.returncode == 0, f"kubectl kustomize {k8s} failed: {r.stderr.strip()}"):
            kinds = sorted(d["kind"] for d in yaml.safe_load_all(r.stdout) if d)
            check(kinds == ["Service", "Service", "StatefulSet"], f"kubectl kustomize renders {kinds}")
            print("kubectl kustomize: " + ", ".join(kinds))
    else:
        print("note: no kubectl: the kustomization is not rendered")

    if problems:
        for p in problems:
            print("FAIL: " + p)
        sys.exit(1)
    print(f"PASS: {sum(len(v) for v in docs.values())} manifests, deploy/Containerfile")


if __name__ == "__main__":
    main()
