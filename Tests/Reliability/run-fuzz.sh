#!/usr/bin/env bash
# Fuzzes DiskCache's entry-file decoder and key-check record decoder with libFuzzer for N seconds (default 60).
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

work=$(mktemp -d /tmp/strata-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
cp -R Tests/Reliability/Corpus/. "$work/"
# A crashing Swift process can hang in the backtracer under libFuzzer; turn it off (Docs/DESIGN traps).
SWIFT_BACKTRACE=enable=no ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}" \
    "$bin/StrataFuzz" -max_total_time="$seconds" -print_final_stats=1 -max_len=8192 \
    -artifact_prefix="$logs/fuzz-" "$work" 2>&1 | tee "$logs/fuzz-output.log"
status=${PIPESTATUS[0]}
done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$logs/fuzz-output.log" | tail -1)
echo "figure fuzz.seconds = $seconds"
echo "figure fuzz.runs = $(grep -E '^stat::number_of_executed_units' "$logs/fuzz-output.log" | awk '{print $2}')"
echo "figure fuzz.execs_per_second = $(grep -E '^stat::average_exec_per_sec' "$logs/fuzz-output.log" | awk '{print $2}')"
echo "figure fuzz.coverage = $(sed -nE 's/.*cov: ([0-9]+).*/\1/p' <<<"$done_line")"
echo "figure fuzz.features = $(sed -nE 's/.*ft: ([0-9]+).*/\1/p' <<<"$done_line")"
echo "figure fuzz.corpus = $(sed -nE 's/.*corp: ([0-9]+\/[0-9a-zA-Z]+).*/\1/p' <<<"$done_line")"
echo "figure fuzz.peak_rss_mb = $(grep -E '^stat::peak_rss_mb' "$logs/fuzz-output.log" | awk '{print $2}')"
echo "figure fuzz.seed_corpus_files = $(find Tests/Reliability/Corpus -type f | wc -l)"
if grep -q 'Is the code instrumented for coverage' "$logs/fuzz-output.log"; then
    echo "FAIL fuzz: the target ran without coverage instrumentation"
    exit 1
fi
if [ "$status" -ne 0 ] || grep -qE 'ERROR: (AddressSanitizer|libFuzzer)|SUMMARY: ' "$logs/fuzz-output.log"; then
    echo "FAIL fuzz: status $status; see $logs/fuzz-output.log and $logs/fuzz-* artifacts"
    exit 1
fi
echo "PASS fuzz"
