#!/usr/bin/env bash
# Full-size reliability run: the figures of Docs/Reliability.md. Takes about 10 minutes on 2 cores, most of it
# building with ThreadSanitizer and the fuzzer. Exits non-zero on any failure; the last line is
# `reliability: N passed, M failed`.
set -u
source "$(dirname "$0")/lib.sh"

if ! build_tools; then
    echo "reliability: 0 passed, 1 failed"
    exit 1
fi
seed=${STRATA_SEED:-$RANDOM}
echo "seed: $seed"
run_step crash "$torture" crash --iterations 200 --keys 64 --seed "$seed"
run_step corruption "$torture" corruption --mutations 2000 --keys 64 --seed "$seed"
run_step multiprocess "$torture" multiprocess --strata "$strata" --workers 4 --seconds 20 --seed "$seed"
run_step sqlite-crash "$torture" sqlite-crash --iterations 200 --keys 64 --seed "$seed"
run_step sqlite-tampering "$torture" sqlite-tampering --tamperings 1000 --keys 48 --seed "$seed"
run_step sqlite-multiprocess "$torture" multiprocess --engine sqlite --strata "$strata" --workers 4 --seconds 20 \
    --seed "$seed"
run_step fulldisk fulldisk_step
run_step readonly readonly_step
run_step privacy "$torture" privacy --strata "$strata" --keys 32
run_step hostile "$torture" hostile --strata "$strata" --rounds 300 --seed "$seed"
run_step first-use "$torture" first-use --strata "$strata" --rounds 50 --processes 16 --seed "$seed"
run_step concurrency concurrency_step 12.5
run_step fuzz "$root/Tests/Reliability/run-fuzz.sh" "${STRATA_FUZZ_SECONDS:-60}"
finish
