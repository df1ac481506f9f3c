#!/usr/bin/env python3
"""Strata's DiskCache (both engines) against python-diskcache on the same set/get workload, side by side.

The workload (the same in all): 10,000 keys ("key-0" ...), values of 100 bytes or 4 KiB of random
bytes; "set" stores every key once (after the warm-up round every set replaces an entry), "get" reads
every key once in a seeded random order. One untimed warm-up round, then 9 timed rounds (--quick: 500
keys, 3 rounds, as `strata-bench --quick`); the median round's operations per second is reported.
All stores run with their default durability (Strata: no fsync, and for the SQLite engine WAL with
synchronous=NORMAL; python-diskcache: SQLite in WAL mode with synchronous=NORMAL), in a fresh folder under
$TMPDIR.

Strata is measured with both of its engines: the file engine (one AES-256-GCM file per entry, the
"Strata" column, rows disk-peer-*) and the SQLite engine (`engine: .sqlite`, each entry sealed into a row
of one WAL database, the "SQLite" columns, rows disk-peer-sqlite-*), in the same strata-bench rounds.
Each engine's speed-up over python-diskcache is checked against its own targets: the file engine's
(set ≥ 2×, get ≥ 1.5×) and the SQLite engine's (get ≥ 1.5×, set 100 B ≥ 1.5×, set 4 KiB ≥ 1.2×).

Beside them the table prints, from the same strata-bench run, plain file I/O (one unencrypted file per
key, temp + rename) and the floor: plain file I/O plus only the cryptography any cache with one
AES-256-GCM-encrypted file per entry under a keyed-hash name must do (HMAC-SHA-256 name, random nonce,
encrypt or decrypt-and-verify, through libcrypto). "floor/peer" is the best speed-up over python-diskcache
that such a cache could reach on this machine: when it is below the target, no implementation of that
design meets it (it does not bound the SQLite engine, which keeps no file per entry). The SQLite engine has
its own floor, the "row floor": SQLite under the engine's rules (WAL, synchronous=NORMAL, no memory map, one
autocommit statement per operation) plus only the HMAC-SHA-256 row name and AES-256-GCM, in C with no Strata
code (strata-bench's SQLiteFloorStore); "row floor/peer" bounds any store of sealed rows under those rules.

The Strata side is `strata-bench --filter disk-peer --json FILE`, run by this script in the same
invocation after the python-diskcache side (built in release mode with `swift run -c release`, or an
existing binary via --strata-bin).

Usage: python3 Benchmarks/diskcache_peer.py [--quick] [--strata-bin PATH] [--json FILE]
(--json writes one object per table row (workload) in strata-bench's shape, for the file engine, plus `speedup` =
Strata ops/s over the peer's, `plain` and `floor` ops/s, and `floorSpeedup` = floor ops/s over the peer's;
and for the SQLite engine `sqlite` (its ops/s), `sqliteSpeedup` (over the peer's), `sqliteTarget`,
`sqliteMet`, `sqliteOverFiles` (its ops/s over the file engine's in the same strata-bench rounds),
`rowFloor` (the sealed-row floor's ops/s) and `rowFloorSpeedup` (over the peer's);
null where not measured.)
Exit status 0 unless something crashed; speed never fails the run.
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
VENV = os.path.join(HERE, ".build", "peer-venv")  # .build/ is ignored by git
TARGETS = {"set": 2.0, "get": 1.5}  # Strata ops/s at least this multiple of python-diskcache's
# The SQLite engine's targets, per workload (its ops/s at least this multiple of python-diskcache's).
SQLITE_TARGETS = {"set-100b": 1.5, "get-100b": 1.5, "set-4k": 1.2, "get-4k": 1.5}


def ensure_diskcache():
    """Imports diskcache, installing it into a private venv (or --user) first when it is missing."""
    try:
        import diskcache  # noqa: F401

        return
    except ImportError:
        pass
    if os.environ.get("STRATA_PEER_REEXEC"):
        sys.exit("diskcache_peer.py: diskcache is still missing after installing it")
    venv_python = os.path.join(VENV, "bin", "python3")
    try:
        if not os.path.exists(venv_python):
            subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
        subprocess.run([venv_python, "-m", "pip", "install", "--quiet", "diskcache"], check=True)
        python = venv_python
    except (subprocess.CalledProcessError, OSError) as error:
        print(f"venv install failed ({error}); trying pip --user", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--user", "diskcache"], check=True)
        python = sys.executable
    env = dict(os.environ, STRATA_PEER_REEXEC="1")
    os.execve(python, [python, os.path.abspath(__file__)] + sys.argv[1:], env)


def run_python_side(key_count, rounds, work):
    import diskcache

    keys = [f"key-{i}" for i in range(key_count)]
    lookups = keys[:]
    random.Random(0x9EE2).shuffle(lookups)
    results = {}
    for label, size in (("100b", 100), ("4k", 4096)):
        value = random.Random(size).randbytes(size)
        directory = os.path.join(work, f"diskcache-{label}")
        with diskcache.Cache(directory) as cache:

            def sets():
                start = time.perf_counter()
                for key in keys:
                    cache.set(key, value)
                return key_count / (time.perf_counter() - start)

            def gets():
                start = time.perf_counter()
                total = 0
                for key in lookups:
                    total += len(cache.get(key))
                elapsed = time.perf_counter() - start
                assert total == key_count * size, "python-diskcache missed"
                return key_count / elapsed

            for operation, body in (("set", sets), ("get", gets)):
                body()  # warm-up
                results[f"disk-peer-{operation}-{label}"] = statistics.median(body() for _ in range(rounds))
    return results


def run_strata_side(args, work):
    output = os.path.join(work, "strata.json")
    if args.strata_bin:
        command = [args.strata_bin]
    else:
        command = ["swift", "run", "-c", "release", "--package-path", HERE, "strata-bench"]
    command += ["--filter", "disk-peer", "--json", output] + (["--quick"] if args.quick else [])
    print("running:", " ".join(command), flush=True)
    completed = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if completed.returncode != 0 or not os.path.exists(output):
        print(completed.stdout)
        print(f"strata-bench exited with status {completed.returncode}; its column is n/a", file=sys.stderr)
        return {}
    with open(output) as file:
        return {row["name"]: row for row in json.load(file)}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="500 keys and 3 rounds instead of 10,000 and 9")
    parser.add_argument("--strata-bin", help="an already built strata-bench binary")
    parser.add_argument("--json", help="also write the table as JSON to this file")
    args = parser.parse_args()
    ensure_diskcache()
    import diskcache

    key_count = 500 if args.quick else 10_000
    rounds = 3 if args.quick else 9
    work = tempfile.mkdtemp(prefix="strata-peer-")
    try:
        python_side = run_python_side(key_count, rounds, work)
        strata_side = run_strata_side(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print(f"\npython-diskcache {diskcache.__version__} (Python {sys.version.split()[0]}) vs Strata DiskCache, "
          f"{key_count} keys, ops/s (median of {rounds} rounds)\n")
    print("Strata = the file engine (one file per entry); SQLite = the SQLite engine (engine: .sqlite)\n")
    header = (f"{'workload':<20}{'diskcache ops/s':>16}{'Strata ops/s':>14}{'Strata/peer':>13}"
              f"{'plain ops/s':>13}{'floor ops/s':>13}{'floor/peer':>12}  {'target':<10}{'result':<8}"
              f"{'SQLite ops/s':>14}{'SQLite/peer':>13}  {'target':<10}{'result':<8}"
              f"{'row floor ops/s':>17}{'row floor/peer':>16}")
    print(header)
    rows = []
    unreachable = []
    for name in ("disk-peer-set-100b", "disk-peer-get-100b", "disk-peer-set-4k", "disk-peer-get-4k"):
        peer = python_side[name]
        row = strata_side.get(name, {})
        strata = row.get("strata")
        plain = row.get("baseline")
        floor = row.get("extras", {}).get("floor ops/s")
        operation = name.split("-")[2]
        target = TARGETS[operation]
        speedup = strata / peer if strata else float("nan")
        floor_speedup = floor / peer if floor else None
        met = strata is not None and speedup >= target
        workload = name[len("disk-peer-"):]
        sqlite_row = strata_side.get(f"disk-peer-sqlite-{workload}", {})
        sqlite = sqlite_row.get("strata")
        row_floor = sqlite_row.get("extras", {}).get("floor ops/s")
        row_floor_speedup = row_floor / peer if row_floor else None
        sqlite_target = SQLITE_TARGETS[workload]
        sqlite_speedup = sqlite / peer if sqlite else None
        sqlite_met = sqlite_speedup >= sqlite_target if sqlite_speedup is not None else None
        sqlite_over_files = sqlite / strata if sqlite and strata else None
        # `ratio` keeps strata-bench's convention (Strata's cost over the baseline's, lower is better);
        # `speedup` is the figure the table prints (Strata's ops/s over python-diskcache's).
        rows.append({"name": name, "unit": "ops/s", "strata": strata, "baseline": peer,
                     "ratio": peer / strata if strata else None, "speedup": speedup,
                     "target": f"Strata ≥ {target}× peer ops/s", "met": met,
                     "plain": plain, "floor": floor, "floorSpeedup": floor_speedup,
                     "sqlite": sqlite, "sqliteSpeedup": sqlite_speedup,
                     "sqliteTarget": f"SQLite ≥ {sqlite_target}× peer ops/s", "sqliteMet": sqlite_met,
                     "sqliteOverFiles": sqlite_over_files, "rowFloor": row_floor,
                     "rowFloorSpeedup": row_floor_speedup})
        if floor_speedup is not None and floor_speedup < target:
            unreachable.append(f"with one AES-256-GCM file per entry: {name}: the floor alone reaches "
                               f"{floor_speedup:.2f}× python-diskcache (target {target}×)")
        if row_floor_speedup is not None and row_floor_speedup < sqlite_target:
            unreachable.append(f"with sealed rows under the SQLite engine's rules: disk-peer-sqlite-{workload}: the "
                               f"row floor alone reaches {row_floor_speedup:.2f}× python-diskcache "
                               f"(target {sqlite_target}×)")

        def number(value, width):
            return f"{value:>{width}.0f}" if value else f"{'n/a':>{width}}"

        floor_text = f"{floor_speedup:>11.2f}×" if floor_speedup is not None else f"{'n/a':>12}"
        sqlite_text = f"{sqlite_speedup:>12.2f}×" if sqlite_speedup is not None else f"{'n/a':>13}"
        sqlite_result = "n/a" if sqlite_met is None else "met" if sqlite_met else "MISSED"
        row_floor_text = f"{row_floor_speedup:>15.2f}×" if row_floor_speedup is not None else f"{'n/a':>16}"
        print(f"{name:<20}{peer:>16.0f}{number(strata, 14)}{speedup:>12.2f}×{number(plain, 13)}{number(floor, 13)}"
              f"{floor_text}  ≥ {target}×{'':<4}{'met' if met else 'MISSED':<8}"
              f"{number(sqlite, 14)}{sqlite_text}  ≥ {sqlite_target}×{'':<4}{sqlite_result:<8}"
              f"{number(row_floor, 17)}{row_floor_text}")
    for line in unreachable:
        print(f"target unreachable on this machine {line}")
    if args.json:
        with open(args.json, "w") as file:
            json.dump(rows, file, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
