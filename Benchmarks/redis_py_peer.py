#!/usr/bin/env python3
"""redis-py's side of the `redis-py-get-16b` row: sequential GET of one 16-byte value, one connection.

`strata-bench --filter redis` runs this script in the same run as Strata's row, alternating rounds
(this script, then Strata's sequential `entry(forKey:)`), against the same child `redis-server`. It can
also be run by hand against any loopback server:

    python3 Benchmarks/redis_py_peer.py --port 6379 --count 20000 --rounds 3

It stores a 16-byte value under `strata-bench:redis-py-peer` with SET (plain bytes: redis-py has no
envelope, keyed-hash names or encryption, which Strata's tier always applies), runs one untimed warm-up
round, then `--rounds` timed rounds of `--count` GETs, and prints one JSON object:
{"opsPerSecond": [per round], "p50Microseconds": ..., "p99Microseconds": ...} (percentiles of the last
round). redis-py is installed from PyPI into Benchmarks/.build/peer-venv when it is missing (as
diskcache_peer.py does for python-diskcache).
"""

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
VENV = os.path.join(HERE, ".build", "peer-venv")  # .build/ is ignored by git


def ensure_redis():
    """Imports redis, installing it into the private venv first when it is missing."""
    try:
        import redis  # noqa: F401

        return
    except ImportError:
        pass
    if os.environ.get("STRATA_PEER_REEXEC"):
        sys.exit("redis_py_peer.py: redis is still missing after installing it")
    venv_python = os.path.join(VENV, "bin", "python3")
    if not os.path.exists(venv_python):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True, stdout=sys.stderr)
    subprocess.run([venv_python, "-m", "pip", "install", "--quiet", "redis"], check=True, stdout=sys.stderr)
    env = dict(os.environ, STRATA_PEER_REEXEC="1")
    os.execve(venv_python, [venv_python, os.path.abspath(__file__)] + sys.argv[1:], env)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--count", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    ensure_redis()
    import redis

    client = redis.Redis(host="127.0.0.1", port=args.port)
    key = "strata-bench:redis-py-peer"
    value = bytes(range(16))
    client.set(key, value)
    get = client.get
    perf = time.perf_counter_ns

    def one_round():
        samples = [0] * args.count
        start = perf()
        for index in range(args.count):
            began = perf()
            read = get(key)
            samples[index] = perf() - began
            if read is None or len(read) != 16:
                sys.exit("redis_py_peer.py: the GET missed")
        return args.count / ((perf() - start) / 1e9), samples

    one_round()  # warm-up
    rates = []
    samples = []
    for _ in range(args.rounds):
        rate, samples = one_round()
        rates.append(rate)
    samples.sort()
    print(
        json.dumps(
            {
                "opsPerSecond": rates,
                "p50Microseconds": samples[len(samples) // 2] / 1000,
                "p99Microseconds": samples[min(len(samples) - 1, int((len(samples) - 1) * 0.99))] / 1000,
            }
        )
    )


if __name__ == "__main__":
    main()
