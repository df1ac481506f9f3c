#!/usr/bin/env bash
# Reduced-size reliability run for CI (scenarios 1, 2, 4, 5, 6, 7, 8, 9 of Docs/Reliability.md, and 1, 2, 5 on the
# SQLite engine; the libFuzzer runs are in run-full.sh, CI replays the SQLite target's seed corpus and 500 seeded
# mutations of it). Exits non-zero on any failure; the last line is `reliability: N passed, M failed`.
set -u
source "$(dirname "$0")/lib.sh"

if ! build_tools; then
    echo "reliability: 0 passed, 1 failed"
    exit 1
fi
run_step crash "$torture" crash --iterations "${STRATA_CI_CRASH_ITERATIONS:-40}" --keys 32 --seed "${STRATA_SEED:-$RANDOM}"
run_step corruption "$torture" corruption --mutations 500 --keys 48 --seed "${STRATA_SEED:-$RANDOM}"
run_step multiprocess "$torture" multiprocess --strata "$strata" --workers 4 --seconds 8 --seed "${STRATA_SEED:-$RANDOM}"
run_step sqlite-crash "$torture" sqlite-crash --iterations "${STRATA_CI_CRASH_ITERATIONS:-40}" --keys 32 \
    --seed "${STRATA_SEED:-$RANDOM}"
run_step sqlite-tampering "$torture" sqlite-tampering --tamperings 300 --keys 32 --seed "${STRATA_SEED:-$RANDOM}"
run_step sqlite-multiprocess "$torture" multiprocess --engine sqlite --strata "$strata" --workers 4 --seconds 8 \
    --seed "${STRATA_SEED:-$RANDOM}"
run_step sqlite-fuzz-replay sqlite_fuzz_replay_step
run_step fulldisk fulldisk_step
run_step readonly readonly_step
run_step privacy "$torture" privacy --strata "$strata" --keys 16
run_step hostile "$torture" hostile --strata "$strata" --rounds 40 --seed "${STRATA_SEED:-$RANDOM}"
run_step first-use "$torture" first-use --strata "$strata" --rounds 12 --processes 12 --seed "${STRATA_SEED:-$RANDOM}"
run_step concurrency concurrency_step 1
finish
