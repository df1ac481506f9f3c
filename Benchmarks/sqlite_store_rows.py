#!/usr/bin/env python3
"""Multi-process rows of the SQLite engine (issue 24), each with python-diskcache beside it in the same run.

wal:   N processes (default 4) run a 90 % get / 9 % set / 1 % remove mix of 4 KiB values on one store for
       --seconds (60); the store's -wal is sampled every 100 ms; reported: its maximum against the limit
       (journal_size_limit, 4 MiB, plus one transaction), then its size after --idle seconds (5) during which
       the processes keep the store open and do nothing (so the idle checkpoint, not the last close, empties it).
mix:   8 processes, the same mix, 100,000 operations each: errors surfaced (target 0) and the p99 get latency
       (worst process's p99, and the median of the 8) against python-diskcache's p99 in the same mix.

Usage: python3 Benchmarks/sqlite_store_rows.py --strata-bench PATH [--rows wal,mix] [--seconds S] [--idle S]
       [--processes N] [--operations N] [--json FILE]
python-diskcache comes from Benchmarks/.build/peer-venv (made by diskcache_peer.py).
"""

import argparse
import json
import os
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PEER_PYTHON = os.path.join(HERE, ".build", "peer-venv", "bin", "python3")
LIMIT = 4 << 20
ONE_TRANSACTION = 2 * (4096 + 24)  # a set of one 4 KiB value: its row's pages, its totals' page

PEER_WORKER = r"""
import json, random, sys, time, diskcache
directory, operations, seconds, idle, seed = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
cache = diskcache.Cache(directory)
rng = random.Random(seed)
value = bytes(rng.getrandbits(8) for _ in range(4096))
gets, errors, samples, done = [], 0, [], 0
start = time.perf_counter(); end = start + seconds
while done < operations:
    if done % 64 == 0 and time.perf_counter() >= end: break
    key = "key-%d" % rng.randrange(10000); roll = rng.randrange(100)
    try:
        if roll < 90:
            t = time.perf_counter(); cache.get(key); gets.append((time.perf_counter() - t) * 1e6)
        elif roll < 99: cache.set(key, value)
        else: cache.delete(key)
    except Exception as error:
        errors += 1
        if len(samples) < 5: samples.append(repr(error))
    done += 1
elapsed = time.perf_counter() - start
print("LOAD-DONE", flush=True)
time.sleep(idle)
gets.sort()
pick = lambda p: gets[min(len(gets) - 1, int(len(gets) * p))] if gets else 0
print(json.dumps({"operations": done, "seconds": elapsed, "errors": errors, "errorSamples": samples, "gets": len(gets),
                  "p50GetMicros": pick(0.5), "p99GetMicros": pick(0.99), "maxGetMicros": gets[-1] if gets else 0}))
"""


def run_load(kind, args, directory, processes, operations, seconds, idle, wal_path):
    """Starts the processes, samples the WAL every 100 ms until each has printed LOAD-DONE, then after `idle`."""
    commands = []
    for index in range(processes):
        seed = str(1000 + index)
        if kind == "strata":
            commands.append([args.strata_bench, "--load-worker", directory, str(operations), str(seconds), str(idle), seed])
        else:
            commands.append([args.peer_python, "-c", PEER_WORKER, directory, str(operations), str(seconds), str(idle), seed])
    workers = [subprocess.Popen(c, stdout=subprocess.PIPE, text=True) for c in commands]
    samples = []
    waiting = list(workers)
    while waiting:
        samples.append(os.path.getsize(wal_path) if os.path.exists(wal_path) else 0)
        for worker in list(waiting):
            ready, _, _ = select.select([worker.stdout], [], [], 0)
            if ready and worker.stdout.readline().strip() == "LOAD-DONE":
                waiting.remove(worker)
        time.sleep(0.1)
    loaded_at = time.time()
    time.sleep(max(0, idle - 0.5))
    idle_size = os.path.getsize(wal_path) if os.path.exists(wal_path) else 0
    reports = []
    for worker in workers:
        out, _ = worker.communicate()
        if worker.returncode != 0:
            raise SystemExit("%s worker failed (%d)" % (kind, worker.returncode))
        reports.append(json.loads(out.strip().splitlines()[-1]))
    return {"walMax": max(samples) if samples else 0, "walSamples": len(samples), "walAfterIdle": idle_size,
            "idleSeconds": round(time.time() - loaded_at, 1), "reports": reports}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--strata-bench", required=True)
    parser.add_argument("--rows", default="wal,mix")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--idle", type=float, default=5)
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--operations", type=int, default=100_000)
    parser.add_argument("--peer-python", default=PEER_PYTHON, help="a Python with diskcache 5.6.3")
    parser.add_argument("--json")
    args = parser.parse_args()
    rows = args.rows.split(",")
    out = {"load": os.getloadavg()}
    work = tempfile.mkdtemp(prefix="strata-sqlite-rows-")
    try:
        if "wal" in rows:
            for kind, wal in (("strata", "store.sqlite-wal"), ("python-diskcache", "cache.db-wal")):
                directory = os.path.join(work, "wal-" + kind)
                os.makedirs(directory)
                if kind == "strata":
                    # The store is made first by one process, so the others open it rather than race to create it.
                    subprocess.run([args.strata_bench, "--load-worker", directory, "1", "1", "0", "1"], check=True,
                                   stdout=subprocess.DEVNULL)
                result = run_load(kind, args, directory, args.processes, 10**9, args.seconds, args.idle,
                                  os.path.join(directory, wal))
                out["wal-" + kind] = result
                errors = sum(r["errors"] for r in result["reports"])
                print("WAL %-16s %d processes %.0f s: max %.2f MiB (limit %.2f MiB + one transaction), after %.1f s "
                      "idle %d bytes, %d ops, %d errors" % (
                          kind, args.processes, args.seconds, result["walMax"] / 2**20, LIMIT / 2**20,
                          result["idleSeconds"], result["walAfterIdle"], sum(r["operations"] for r in result["reports"]),
                          errors), flush=True)
        if "disk" in rows:
            # 100k × 4 KiB: database + WAL + large files over the sealed bytes (4,096 + 28 per value; the key's
            # keyed hash, expiry and sizes are row overhead, counted in the numerator).
            count = 100_000
            sealed = count * (4096 + 28)
            strata_dir = os.path.join(work, "disk-strata")
            subprocess.run([args.strata_bench, "--load-worker", strata_dir, str(count), "1000000", "0", "0"],
                           check=True, stdout=subprocess.DEVNULL)
            strata_bytes = os.path.getsize(os.path.join(strata_dir, "store.sqlite")) + (
                os.path.getsize(os.path.join(strata_dir, "store.sqlite-wal")) if os.path.exists(os.path.join(strata_dir, "store.sqlite-wal")) else 0) + (
                sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(os.path.join(strata_dir, "large")) for f in fs))
            peer_dir = os.path.join(work, "disk-peer")
            subprocess.run([args.peer_python, "-c",
                            "import diskcache,os,sys\nc=diskcache.Cache(sys.argv[1])\nv=os.urandom(4096)\n"
                            "[c.set('fill-%d'%i, v) for i in range(int(sys.argv[2]))]\nc.close()", peer_dir, str(count)],
                           check=True)
            peer_bytes = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(peer_dir) for f in fs)
            out["disk"] = {"strataBytes": strata_bytes, "peerBytes": peer_bytes, "sealedBytes": sealed,
                           "strataRatio": strata_bytes / sealed, "peerRatio": peer_bytes / (count * 4096)}
            print("DISK 100k × 4 KiB: Strata %.1f MiB = %.3f× sealed bytes (target ≤ 1.25); python-diskcache %.1f MiB "
                  "= %.3f× its value bytes" % (strata_bytes / 2**20, strata_bytes / sealed, peer_bytes / 2**20,
                                               peer_bytes / (count * 4096)), flush=True)
        if "mix" in rows:
            for kind in ("strata", "python-diskcache"):
                directory = os.path.join(work, "mix-" + kind)
                os.makedirs(directory)
                if kind == "strata":
                    subprocess.run([args.strata_bench, "--load-worker", directory, "1", "1", "0", "1"], check=True,
                                   stdout=subprocess.DEVNULL)
                wal = "store.sqlite-wal" if kind == "strata" else "cache.db-wal"
                result = run_load(kind, args, directory, 8, args.operations, 10**6, 0, os.path.join(directory, wal))
                out["mix-" + kind] = result
                p99s = [r["p99GetMicros"] for r in result["reports"]]
                print("MIX %-16s 8 × %d ops: errors %d, p99 get worst %.1f µs, median of 8 %.1f µs, p50 %.1f µs, "
                      "max %.0f µs" % (
                          kind, args.operations, sum(r["errors"] for r in result["reports"]), max(p99s),
                          statistics.median(p99s), statistics.median(r["p50GetMicros"] for r in result["reports"]),
                          max(r["maxGetMicros"] for r in result["reports"])), flush=True)
                for r in result["reports"]:
                    if r["errorSamples"]:
                        print("   errors:", r["errorSamples"])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out["loadAfter"] = os.getloadavg()
    print("load average before %s, after %s" % (out["load"], out["loadAfter"]))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(out, handle, indent=1)


if __name__ == "__main__":
    main()
