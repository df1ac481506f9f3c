#!/usr/bin/env python3
"""Draws hit ratio against cache size per eviction policy, from strata-bench's JSON output.

    swift run -c release --package-path Benchmarks strata-bench --filter policy-hit-ratio --json /tmp/policy.json
    python3 Benchmarks/policy_compare.py /tmp/policy-traces --curve --json /tmp/libcachesim.json   # optional
    python3 Benchmarks/plot_hit_ratio.py /tmp/policy.json [--libcachesim /tmp/libcachesim.json] \\
        [--output Docs/hit-ratio.png]

Needs matplotlib (`pip install matplotlib`). The top panel reads the extras of the `policy-hit-ratio-curve`
row (`POLICY@SIZE`: MemoryCache under each policy and the benchmark's reference LRU and SIEVE, on the
Zipf(0.99) trace of 1M requests over 100k keys) and, when given, libcachesim's figures for the same
trace file, drawn dashed. The bottom panel covers the whole suite: for every trace and size, Strata's
LRU and W-TinyLFU (one shard and four) beside libcachesim's LRU, W-TinyLFU, S3-FIFO and SIEVE.
"""

import argparse
import json
import sys
from collections import defaultdict

LABELS = {
    "windowTinyLFU": "MemoryCache .windowTinyLFU",
    "leastRecentlyUsed": "MemoryCache .leastRecentlyUsed",
    "lru": "reference LRU (benchmark)",
    "sieve": "reference SIEVE (benchmark)",
}


def series(extras):
    """Groups `POLICY@SIZE` extras into {policy: [(size, ratio), ...]} sorted by size."""
    grouped = defaultdict(list)
    for label, value in extras.items():
        if "@" not in label:
            continue
        policy, size = label.rsplit("@", 1)
        grouped[policy].append((int(size), float(value)))
    return {policy: sorted(points) for policy, points in grouped.items()}


def draw_suite(axes, rows, libcachesim):
    """Grouped bars: per policy-hit-ratio row of the suite, Strata's and libcachesim's hit ratios."""
    names = [name[len("policy-hit-ratio-"):] for name in rows if name.startswith("policy-hit-ratio-")]
    names = [name for name in names if name != "curve"]
    series = {
        "Strata W-TinyLFU": [rows[f"policy-hit-ratio-{n}"]["strata"] for n in names],
        "Strata W-TinyLFU, 4 shards": [
            rows[f"policy-hit-ratio-{n}"]["extras"].get("W-TinyLFU % hits at shardCount 4", 0) for n in names
        ],
        "Strata LRU": [rows[f"policy-hit-ratio-{n}"]["extras"].get("MemoryCache LRU % hits", 0) for n in names],
    }
    for policy in ["LRU", "W-TinyLFU", "S3-FIFO", "SIEVE"]:
        if all(n in libcachesim for n in names):
            series[f"libcachesim {policy}"] = [libcachesim[n][policy] for n in names]
    width = 0.8 / len(series)
    for offset, (label, values) in enumerate(series.items()):
        positions = [index + (offset - len(series) / 2 + 0.5) * width for index in range(len(names))]
        axes.bar(positions, values, width, label=label)
    axes.set_xticks(range(len(names)))
    axes.set_xticklabels(names, rotation=60, ha="right", fontsize=8)
    axes.set_ylabel("hit ratio (%)")
    axes.set_title("The trace suite (1M requests; loops 20% larger than the cache)")
    axes.grid(True, axis="y", alpha=0.3)
    axes.legend(fontsize=7, ncol=4)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("benchmark_json")
    parser.add_argument("--libcachesim", help="policy_compare.py --curve --json output")
    parser.add_argument("--output", default="Docs/hit-ratio.png")
    args = parser.parse_args()

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plot

    with open(args.benchmark_json) as handle:
        rows = {row["name"]: row for row in json.load(handle)}
    curve = rows.get("policy-hit-ratio-curve")
    if curve is None:
        sys.exit("plot_hit_ratio.py: no policy-hit-ratio-curve row (it runs in full runs only, not --quick)")

    figure, (axes, suite_axes) = plot.subplots(2, 1, figsize=(13, 10), dpi=110, gridspec_kw={"height_ratios": [1, 1.2]})
    for policy, points in sorted(series(curve["extras"]).items()):
        sizes, ratios = zip(*points)
        axes.plot(sizes, ratios, marker="o", linewidth=2 if policy == "windowTinyLFU" else 1.2,
                  label=LABELS.get(policy, policy))
    libcachesim_rows = {}
    if args.libcachesim:
        with open(args.libcachesim) as handle:
            libcachesim_rows = json.load(handle)
            libcachesim = libcachesim_rows.get("curve-zipf0.99", {})
        for policy, points in sorted(series(libcachesim).items()):
            sizes, ratios = zip(*points)
            axes.plot(sizes, ratios, linestyle="--", marker=".", linewidth=1, label=f"libcachesim {policy}")
    axes.set_xscale("log")
    axes.set_xlabel("cache size (entries)")
    axes.set_ylabel("hit ratio (%)")
    axes.set_title("Zipf(0.99), 1M requests over 100k keys")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=8)
    draw_suite(suite_axes, rows, libcachesim_rows)
    figure.tight_layout()
    figure.savefig(args.output)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
