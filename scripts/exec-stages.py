#!/usr/bin/env python3
"""Where an Execute call's time goes, per transport (bench/RESULTS.md).

usage: exec-stages.py CALLS EXEC_TIMING [WORKER_TIMING]

CALLS is msl-bench-gpu-exec's --call-log (one line per call, in order:
transport key, sent_at_ns, received_at_ns), EXEC_TIMING msld's
MSLD_EXEC_TIMING file and WORKER_TIMING the CUDA worker's
MSLD_CUDA_WORKER_TIMING file, each one line per call. The last lines of each
belong to the same calls (a worker may log more lines before: its probe).
The *_at_ns times are CLOCK_MONOTONIC on one host, so the client's send and
receive line up with msld's arrival and answer:

  client_to_msld  sent -> the RPC's handler in msld (gRPC, both sides)
  msld_total      handler -> answered (msld's own stages, then Finish)
  msld_to_client  answered -> the client has the response (gRPC, both sides)
"""
import statistics
import sys


def pairs(line):
    words = line.split()
    if words and not words[0].endswith(("_us", "_ns")):
        words = words[1:]
    return {words[i]: float(words[i + 1]) for i in range(0, len(words) - 1, 2)}


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    calls = []
    for line in open(sys.argv[1]):
        key, rest = line.split(None, 1)
        calls.append((key, pairs(rest)))
    msld = [pairs(l) for l in open(sys.argv[2]) if l.strip()]
    worker = [pairs(l) for l in open(sys.argv[3]) if l.strip()] if len(sys.argv) > 3 else []
    n = len(calls)
    if len(msld) < n:
        sys.exit("exec-stages: %d calls but %d msld lines" % (n, len(msld)))
    msld = msld[-n:]
    worker = worker[-n:] if len(worker) >= n else []
    keys = list(dict.fromkeys(k for k, _ in calls))
    warm = 1 + 10 * len(keys)  # bench/ExecCopyTiming.cpp: one compile, 10 warm-ups per transport
    for key in keys:
        rows = []
        for i in range(warm, n):
            k, c = calls[i]
            if k != key:
                continue
            m = msld[i]
            row = {
                "rpc": (c["received_at_ns"] - c["sent_at_ns"]) / 1e3,
                "client_to_msld": (m["arrived_at_ns"] - c["sent_at_ns"]) / 1e3,
                "msld_total": (m["answered_at_ns"] - m["arrived_at_ns"]) / 1e3,
                "msld_to_client": (c["received_at_ns"] - m["answered_at_ns"]) / 1e3,
            }
            for s in ("arrival_us", "prepare_us", "queue_us", "worker_us", "response_us", "answer_us"):
                row["msld_" + s[:-3]] = m.get(s, 0.0)
            if worker:
                for s in ("execute_us", "copy_in_us", "launch_us", "sync_us", "copy_out_us"):
                    row["worker_" + s[:-3]] = worker[i].get(s, 0.0)
            rows.append(row)
        if not rows:
            continue
        med = {f: statistics.median(r[f] for r in rows) for f in rows[0]}
        print("%s, median of %d calls (us): %s" % (key, len(rows), ", ".join("%s %.1f" % kv for kv in med.items())))


if __name__ == "__main__":
    main()
