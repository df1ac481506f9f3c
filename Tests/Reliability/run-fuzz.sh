#!/usr/bin/env bash
# Fuzzes DiskCache's entry-file decoder and key-check record decoder with libFuzzer for N seconds (default 60),
# then the Redis tier's RESP3 reply decoder for another N seconds (STRATA_FUZZ_TARGET=resp, its own corpus in
# Tests/Reliability/Corpus-RESP), then damaged SQLite stores for another N seconds (STRATA_FUZZ_TARGET=sqlite,
# corpus in Tests/Reliability/Corpus-SQLite). Usage: run-fuzz.sh [SECONDS] [all|disk|resp|sqlite] (default all).
# Builds StrataFuzz in release with -sanitize=fuzzer,address and -D STRATA_FUZZ (which swaps its replay
# `main` for libFuzzer's entry point) in its own build folder, from scratch every time. Starts from the corpus kept in
# Tests/Reliability/Corpus; new inputs go to a scratch copy, so the repository is not changed.
# Exits non-zero on a crash, a sanitizer report or a build failure.
set -u
seconds=${1:-60}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 3
scratch=${STRATA_FUZZ_SCRATCH:-$root/.build/fuzz}
logs=${STRATA_RELIABILITY_LOGS:-$root/.build/reliability-logs}
mkdir -p "$logs"

build=(swift build -c release --scratch-path "$scratch" --sanitize=fuzzer --sanitize=address
    -Xswiftc -DSTRATA_FUZZ -Xswiftc -sanitize-coverage=edge,inline-8bit-counters,pc-table,trace-cmp --product StrataFuzz)
# Always a clean build: an incremental rebuild in this folder has been seen to keep ASan but drop the
# SanitizerCoverage instrumentation, and libFuzzer then runs blind (no `cov:` figure).
rm -rf "$scratch"
"${build[@]}" || { echo "FAIL fuzz: build failed"; exit 1; }
bin=$("${build[@]}" --show-bin-path)

targets=${2:-all}
overall=0
# fuzz_one NAME CORPUS MAX_LEN [ENV...]: one libFuzzer run of $seconds from a scratch copy of CORPUS, inputs
# up to MAX_LEN bytes; figures are printed as `figure fuzz.<x>` for the disk decoders and `figure fuzz-<name>.<x>`
# for the others.
fuzz_one() {
    local name=$1 corpus=$2 max_len=$3 prefix largest
    shift 3
    prefix=$([ "$name" = disk ] && echo fuzz || echo "fuzz-$name")
    # libFuzzer cuts every seed to -max_len: a seed longer than it would only ever be fuzzed truncated.
    largest=$(for seed in "$corpus"/*; do wc -c <"$seed"; done | sort -n | tail -1)
    if [ "${largest:-0}" -gt "$max_len" ]; then
        echo "FAIL $prefix: the largest seed in $corpus is $largest B, over -max_len=$max_len"
        overall=1
        return
    fi
    local work log="$logs/$prefix-output.log"
    work=$(mktemp -d /tmp/strata-fuzz.XXXXXX)
    cp -R "$corpus/." "$work/"
    # A crashing Swift process can hang in the backtracer under libFuzzer; turn it off (Docs/DESIGN traps).
    env "$@" SWIFT_BACKTRACE=enable=no ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}" \
        "$bin/StrataFuzz" -max_total_time="$seconds" -print_final_stats=1 -max_len="$max_len" \
        -artifact_prefix="$logs/$prefix-" "$work" 2>&1 | tee "$log"
    local status=${PIPESTATUS[0]}
    rm -rf "$work"
    local done_line
    done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1)
    echo "figure $prefix.seconds = $seconds"
    echo "figure $prefix.runs = $(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}')"
    echo "figure $prefix.execs_per_second = $(grep -E '^stat::average_exec_per_sec' "$log" | awk '{print $2}')"
    echo "figure $prefix.coverage = $(sed -nE 's/.*cov: ([0-9]+).*/\1/p' <<<"$done_line")"
    echo "figure $prefix.features = $(sed -nE 's/.*ft: ([0-9]+).*/\1/p' <<<"$done_line")"
    echo "figure $prefix.corpus = $(sed -nE 's/.*corp: ([0-9]+\/[0-9a-zA-Z]+).*/\1/p' <<<"$done_line")"
    echo "figure $prefix.peak_rss_mb = $(grep -E '^stat::peak_rss_mb' "$log" | awk '{print $2}')"
    echo "figure $prefix.seed_corpus_files = $(find "$corpus" -type f | wc -l)"
    if grep -q 'Is the code instrumented for coverage' "$log"; then
        echo "FAIL $prefix: the target ran without coverage instrumentation"
        overall=1
    elif [ "$status" -ne 0 ] || grep -qE 'ERROR: (AddressSanitizer|libFuzzer)|SUMMARY: ' "$log"; then
        echo "FAIL $prefix: status $status; see $log and $logs/$prefix-* artifacts"
        overall=1
    fi
}
case $targets in all | disk) fuzz_one disk Tests/Reliability/Corpus 8192 ;; esac
case $targets in all | resp) fuzz_one resp Tests/Reliability/Corpus-RESP 8192 STRATA_FUZZ_TARGET=resp ;; esac
# A damaged store is a few database pages: the largest seed (a store of all eight keys, its database 14 pages of
# 4 KiB: 57,454 B in all) plus the pages a mutation may add.
case $targets in all | sqlite) fuzz_one sqlite Tests/Reliability/Corpus-SQLite 65536 STRATA_FUZZ_TARGET=sqlite ;; esac
[ "$overall" -eq 0 ] || exit 1
echo "PASS fuzz"
