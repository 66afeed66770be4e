#!/usr/bin/env python3
"""mslc as a whole process, as a build runs it: wall time of `mslc -c` on a
cache hit beside a cold compile, start-up alone (`mslc --help`) and the cost
of spawning any process (/bin/true).

Starts its own msld (BIN/msld, a fresh data directory, loopback ports),
spawns each command RUNS times with posix_spawn (stdout and stderr to
/dev/null), and prints a table of min / p50 / p90 / mean wall times.

  bench/mslc-bench.py [--bin build/bin] [--runs 200] [--compare LABEL=MSLC]...

--compare adds hit rows for other mslc binaries (e.g. a dynamically linked
one) against the same msld.
"""
import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def spawn_ms(argv, env):
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        start = time.perf_counter_ns()
        pid = os.posix_spawn(argv[0], argv, env, file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1),
                                                                (os.POSIX_SPAWN_DUP2, devnull, 2)])
        _, status = os.waitpid(pid, 0)
        elapsed = (time.perf_counter_ns() - start) / 1e6
    finally:
        os.close(devnull)
    return elapsed, os.waitstatus_to_exitcode(status)


def measure(argv, runs, env, check=0):
    times = []
    for i in range(runs):
        a = [x.replace("{i}", str(i)) for x in argv]
        t, rc = spawn_ms(a, env)
        if rc != check:
            sys.exit(f"mslc-bench: {' '.join(a)} exited {rc}")
        times.append(t)
    times.sort()
    q = lambda p: times[min(len(times) - 1, int(p * len(times)))]
    return times[0], q(0.5), q(0.9), statistics.fmean(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--cold-runs", type=int, default=10)
    ap.add_argument("--compare", action="append", default=[], metavar="LABEL=MSLC")
    args = ap.parse_args()
    mslc = os.path.join(args.bin, "mslc")
    work = tempfile.mkdtemp(prefix="mslc-bench.")
    msld = subprocess.Popen(
        [os.path.join(args.bin, "msld"), "--listen", "127.0.0.1:0", "--metrics-listen", "",
         "--data-dir", os.path.join(work, "data"), "--compile-workers", "1", "--exec-workers", "0",
         "--cuda", "off", "--ready-file", os.path.join(work, "ready.json")],
        stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "msld.log"), "w"))
    try:
        ready = os.path.join(work, "ready.json")
        for _ in range(600):
            if os.path.exists(ready) and os.path.getsize(ready) > 0:
                break
            time.sleep(0.05)
        else:
            sys.exit("mslc-bench: msld did not start")
        port = json.load(open(ready))["grpc_port"]
        env = dict(os.environ, MSLD_ADDRESS=f"127.0.0.1:{port}")
        os.chdir(work)
        shutil.copy(os.path.join(ROOT, "examples", "saxpy.metal"), work)
        src = "saxpy.metal"  # relative: older mslc took sources under the current directory only
        hit = [mslc, "-c", src, "-o", os.path.join(work, "saxpy.air")]
        measure(hit, 3, env)  # fills the action cache, warms the page cache
        rows = [
            ("spawn /bin/true (any process)", measure(["/bin/true"], args.runs, env)),
            ("mslc --help (start-up alone)", measure([mslc, "--help"], args.runs, env)),
            ("mslc -c saxpy.metal, cache hit", measure(hit, args.runs, env)),
            ("  the same through gRPC's client (MSLC_NO_FAST_PATH)",
             measure(hit, args.runs, dict(env, MSLC_NO_FAST_PATH="1"))),
        ]
        for spec in args.compare:
            label, path = spec.split("=", 1)
            measure([path] + hit[1:], 3, env)
            rows.append((f"{label}: mslc -c, cache hit", measure([path] + hit[1:], args.runs, env)))
        cold = [mslc, "-c", src, "-o", os.path.join(work, "cold.air"), "-D", "MSLC_BENCH_NONCE={i}"]
        rows.append(("mslc -c saxpy.metal, cold (unique -D)", measure(cold, args.cold_runs, env)))
        with open("/proc/loadavg") as f:
            load = " ".join(f.read().split()[:3])
        print(f"mslc wall time per process ({args.runs} runs, cold {args.cold_runs}; "
              f"{os.cpu_count()} CPUs, load average {load})\n")
        print(f"| {'what':<52} | {'min':>8} | {'p50':>8} | {'p90':>8} | {'mean':>8} |")
        print(f"|{'-' * 54}|{'-' * 10}|{'-' * 10}|{'-' * 10}|{'-' * 10}|")
        for label, (mn, p50, p90, mean) in rows:
            print(f"| {label:<52} | {mn:6.2f} ms | {p50:6.2f} ms | {p90:6.2f} ms | {mean:6.2f} ms |")
    finally:
        msld.send_signal(signal.SIGTERM)
        msld.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
