#!/usr/bin/env python3
"""Replays the eviction-policy traces in libcachesim and prints its hit ratios beside Strata's.

Run by hand (CI does not need libcachesim):

    swift run -c release --package-path Benchmarks strata-bench --write-traces /tmp/policy-traces
    swift run -c release --package-path Benchmarks strata-bench --filter policy-hit-ratio --json /tmp/policy.json
    python3 Benchmarks/policy_compare.py /tmp/policy-traces [--strata-json /tmp/policy.json]

Needs `pip install libcachesim==0.3.5` (the PyPI bindings of libCacheSim, https://github.com/1a1a11a/libCacheSim).
Every request is a get that inserts on a miss, with all objects of size 1, so cache sizes count objects,
as the benchmark's count limits do. Prints a Markdown table: per trace and cache size, the hit ratio (%)
of libcachesim's LRU, W-TinyLFU (its default: 1% window, SLRU main), S3-FIFO and SIEVE, the best of
them, and Strata's figure for the same row when a benchmark JSON file is given.
"""

import argparse
import json
import os
import sys

TRACES = ["zipf0.99", "zipf0.8", "scan", "moving"]
SIZES = [1_000, 10_000]
# The sizes of the benchmark's policy-hit-ratio-curve row, replayed on the Zipf(0.99) trace with --curve.
CURVE_SIZES = [250, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000]


def libcachesim_hit_ratios(path, size):
    import libcachesim as lcs

    policies = {
        "LRU": lambda: lcs.LRU(size),
        "W-TinyLFU": lambda: lcs.WTinyLFU(size),
        "S3-FIFO": lambda: lcs.S3FIFO(size),
        "SIEVE": lambda: lcs.Sieve(size),
    }
    ratios = {}
    for name, make in policies.items():
        reader = lcs.TraceReader(path, lcs.TraceType.PLAIN_TXT_TRACE, lcs.ReaderInitParam(ignore_obj_size=True))
        object_miss_ratio, _ = make().process_trace(reader)
        ratios[name] = (1 - object_miss_ratio) * 100
    return ratios


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("traces", help="directory written by strata-bench --write-traces")
    parser.add_argument("--strata-json", help="strata-bench --json output with the policy-hit-ratio rows")
    parser.add_argument("--json", help="also write libcachesim's figures to this file")
    parser.add_argument(
        "--curve", action="store_true", help="also replay Zipf(0.99) at the curve sizes (for plot_hit_ratio.py)"
    )
    args = parser.parse_args()

    strata = {}
    if args.strata_json:
        with open(args.strata_json) as handle:
            for row in json.load(handle):
                strata[row["name"]] = row

    print("| trace | size | LRU | W-TinyLFU | S3-FIFO | SIEVE | best | Strata W-TinyLFU | Strata − best | Strata − LRU |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    figures = {}
    for trace in TRACES:
        path = os.path.join(args.traces, f"{trace}.txt")
        if not os.path.exists(path):
            sys.exit(f"policy_compare.py: {path} is missing; run strata-bench --write-traces first")
        for size in SIZES:
            ratios = libcachesim_hit_ratios(path, size)
            best = max(ratios.values())
            figures[f"{trace}-{size // 1000}k"] = ratios
            row = strata.get(f"policy-hit-ratio-{trace}-{size // 1000}k")
            ours = f"{row['strata']:.2f}" if row else "—"
            gap_best = f"{row['strata'] - best:+.2f}" if row else "—"
            gap_lru = f"{row['strata'] - ratios['LRU']:+.2f}" if row else "—"
            print(
                f"| {trace} | {size:,} | {ratios['LRU']:.2f} | {ratios['W-TinyLFU']:.2f} | {ratios['S3-FIFO']:.2f} "
                f"| {ratios['SIEVE']:.2f} | {best:.2f} | {ours} | {gap_best} | {gap_lru} |",
                flush=True,
            )
    if args.curve:
        path = os.path.join(args.traces, "zipf0.99.txt")
        curve = {}
        for size in CURVE_SIZES:
            for name, ratio in libcachesim_hit_ratios(path, size).items():
                curve[f"{name}@{size}"] = ratio
        figures["curve-zipf0.99"] = curve
        print(f"\nlibcachesim on zipf0.99 at {CURVE_SIZES}: {json.dumps(curve, sort_keys=True)}")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(figures, handle, indent=2, sort_keys=True)


if __name__ == "__main__":
    main()
