# Shared by run-ci.sh and run-full.sh: building, tmpfs mounts, and the pass/fail tally.
# shellcheck shell=bash

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 3
passed=0
failed=0
failures=()
log_dir=${STRATA_RELIABILITY_LOGS:-$root/.build/reliability-logs}
mkdir -p "$log_dir"

# run_step NAME COMMAND...: runs one scenario, tees its output to a log, counts it.
run_step() {
    local name=$1
    shift
    local started=$SECONDS
    echo "=== reliability: $name"
    if "$@" 2>&1 | tee "$log_dir/$name.log"; [ "${PIPESTATUS[0]}" -eq 0 ]; then
        passed=$((passed + 1))
        echo "=== reliability: $name passed in $((SECONDS - started)) s"
    else
        failed=$((failed + 1))
        failures+=("$name")
        echo "=== reliability: $name FAILED in $((SECONDS - started)) s (log: $log_dir/$name.log)"
    fi
}

# Extra `swift build` flags, word-split: pass the same flags as the build before this script (for example
# STRATA_BUILD_FLAGS="-Xswiftc -warnings-as-errors"), or SwiftPM rebuilds everything with the new ones.
read -r -a build_flags <<<"${STRATA_BUILD_FLAGS:-}"

# build_tools: the torture harness and the strata tool, debug, in the package's normal build folder.
build_tools() {
    swift build "${build_flags[@]}" --product StrataTorture && swift build "${build_flags[@]}" --product strata ||
        return 1
    bin=$(swift build "${build_flags[@]}" --show-bin-path) || return 1
    torture=$bin/StrataTorture
    strata=$bin/strata
}

# with_tmpfs SIZE COMMAND...: mounts a fresh tmpfs of SIZE, runs COMMAND with $mnt set, unmounts.
# A tmpfs gives a real ENOSPC and a real read-only remount (EROFS). Needs root with mount permission:
# chmod would not do, because root bypasses permission bits.
with_tmpfs() {
    local size=$1
    shift
    mnt=$(mktemp -d /tmp/strata-reliability-mnt.XXXXXX)
    if ! mount -t tmpfs -o "size=$size,mode=0700" strata-reliability "$mnt"; then
        echo "FAILURE: cannot mount a tmpfs at $mnt (needs root and mount permission)"
        rmdir "$mnt"
        return 1
    fi
    "$@"
    local status=$?
    umount "$mnt" || umount -l "$mnt"
    rmdir "$mnt"
    return $status
}

# $mnt is set by with_tmpfs, so it must be expanded inside the function it runs, never in the caller.
fulldisk_inner() { "$torture" fulldisk --mount "$mnt"; }
fulldisk_step() { with_tmpfs 2m fulldisk_inner; }

readonly_inner() {
    "$torture" readonly-prepare --store "$mnt/store" || return 1
    mount -o remount,ro "$mnt" || { echo "FAILURE: cannot remount $mnt read-only"; return 1; }
    "$torture" readonly --store "$mnt/store"
    local status=$?
    mount -o remount,rw "$mnt"
    return $status
}
readonly_step() { with_tmpfs 2m readonly_inner; }

# concurrency_step SCALE: the ConcurrencyTests target under ThreadSanitizer, sized by STRATA_STRESS_SCALE=SCALE
# (1 runs each test at its written size), in its own build folder (STRATA_TSAN_SCRATCH) so it does not force
# a rebuild of the normal debug build.
concurrency_step() {
    local scale=$1
    local scratch=${STRATA_TSAN_SCRATCH:-$root/.build/tsan}
    STRATA_STRESS_SCALE=$scale TSAN_OPTIONS="halt_on_error=1 ${TSAN_OPTIONS:-}" \
        swift test "${build_flags[@]}" --scratch-path "$scratch" --sanitize=thread --filter '^ConcurrencyTests\.'
}

finish() {
    [ ${#failures[@]} -gt 0 ] && echo "failed steps: ${failures[*]}"
    echo "reliability: $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}

# sqlite_fuzz_replay_step: CI's short fuzz of damaged SQLite stores without libFuzzer (plain debug build): the
# seed corpus, then seeded byte mutations of it (Docs/Reliability.md, scenario 3).
sqlite_fuzz_replay_step() {
    swift build "${build_flags[@]}" --product StrataFuzz || return 1
    STRATA_FUZZ_TARGET=sqlite "$bin/StrataFuzz" "$root/Tests/Reliability/Corpus-SQLite" &&
        STRATA_FUZZ_TARGET=sqlite timeout 300 "$bin/StrataFuzz" --mutate "${STRATA_CI_SQLITE_MUTATIONS:-500}" \
            "${STRATA_SEED:-$RANDOM}" "$root/Tests/Reliability/Corpus-SQLite"
}
