#!/usr/bin/env python3
"""Issue 28's two `--redis` rows of the `strata` tool, whole processes against a real redis-server.

- redis-get-current-writes-nothing: after a `set --redis`, 20 `get --redis` of the unchanged key leave the
  store's insertions counter where it was (the MultiCache authority writes a local copy only when it is
  missing or differs). Beside it, the median whole-process time of those gets and of the same `get` without
  `--redis` (the Redis round trip and connection set-up are the difference).
- redis-outage-set-replayed: with the server frozen (SIGSTOP), a `set` exits 0 with one warning and leaves
  one pending write; once the server runs again (SIGCONT), the same store's next `get` and another store's
  `get` (same Redis, same master key) both read the value, and nothing is pending.

Usage: python3 Benchmarks/cli_redis_rows.py [--strata-bin PATH] [--json FILE]
Needs redis-server (Debian's package). Builds `strata` in release when no binary is given and none exists.
"""

import argparse
import base64
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(port):
    server = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(1000):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return server
        except OSError:
            time.sleep(0.01)
    server.kill()
    sys.exit("cli_redis_rows: redis-server did not start")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--strata-bin", default=str(ROOT / ".build/release/strata"))
    parser.add_argument("--json")
    args = parser.parse_args()
    binary = Path(args.strata_bin)
    if not binary.exists():
        subprocess.run(["swift", "build", "-c", "release", "--product", "strata"], cwd=ROOT, check=True)

    port = free_port()
    server = start_server(port)
    folder = Path(tempfile.mkdtemp(prefix="strata-cli-redis-"))
    env = dict(os.environ, STRATA_MASTER_KEY=base64.b64encode(os.urandom(32)).decode())
    url = f"redis://127.0.0.1:{port}/bench"

    def strata(store, *arguments, redis=True):
        command = [str(binary), "--store", str(folder / store)] + (["--redis", url] if redis else []) + list(arguments)
        started = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True)
        return done, time.perf_counter() - started

    def stats(store):
        done, _ = strata(store, "stats", "--json")
        return json.loads(done.stdout)

    rows = {}
    try:
        strata("a", "set", "k", "value")
        before = stats("a")["insertions"]
        redis_times = [strata("a", "get", "k")[1] for _ in range(20)]
        local_times = [strata("a", "get", "k", redis=False)[1] for _ in range(20)]
        after = stats("a")["insertions"]
        rows["redis-get-current-writes-nothing"] = {
            "insertionsBefore": before, "insertionsAfter": after, "met": before == after,
            "medianMsWithRedis": round(statistics.median(redis_times) * 1000, 2),
            "medianMsLocalOnly": round(statistics.median(local_times) * 1000, 2),
        }

        os.kill(server.pid, signal.SIGSTOP)
        offline, _ = strata("a", "set", "outage", "kept")
        pending_during = stats("a")["redis"]["pendingWrites"]
        os.kill(server.pid, signal.SIGCONT)
        own, _ = strata("a", "get", "outage")
        other, _ = strata("b", "get", "outage")
        pending_after = stats("a")["redis"]["pendingWrites"]
        rows["redis-outage-set-replayed"] = {
            "setStatus": offline.returncode, "warningLines": len(offline.stderr.splitlines()),
            "pendingDuringOutage": pending_during, "ownStoreReads": own.stdout.decode(errors="replace"),
            "otherStoreReads": other.stdout.decode(errors="replace"), "pendingAfter": pending_after,
            "met": offline.returncode == 0 and pending_during == 1 and own.stdout == b"kept"
            and other.stdout == b"kept" and pending_after == 0,
        }
    finally:
        os.kill(server.pid, signal.SIGCONT)
        server.kill()
        server.wait()

    for name, row in rows.items():
        print(f"{name}: {'met' if row['met'] else 'MISSED'}  {json.dumps(row)}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    return 0 if all(row["met"] for row in rows.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
