#!/usr/bin/env bash
# The SQLite layer's overhead: raw SQLite C API against DiskCache's internal SQLite layer on the same workload
# (Benchmarks/sqlite-layer/main.swift says which). The layer is internal to DiskCache, so this compiles its
# files (those that need no other module) into one optimized program with the benchmark, rather than going
# through the Benchmarks package's public products.
#
# Usage: Benchmarks/sqlite_layer_bench.sh [--quick] [--dir FOLDER]   (default folder: under $TMPDIR)
#        Benchmarks/sqlite_layer_bench.sh --instructions   (instructions per operation under callgrind: the same
#        on a loaded machine as on a quiet one; needs valgrind; 1,000 keys, no memory map)
set -euo pipefail
cd "$(dirname "$0")/.."
out=.build/sqlite-layer-bench
mkdir -p "$out"
layer=(Sources/DiskCache/Internal/SQLite/*.swift)
files=()
for file in "${layer[@]}"; do
    # The CacheError mapping needs CacheCore; the benchmark does not map errors.
    [[ "$file" == *+CacheError.swift ]] || files+=("$file")
done
files+=(Sources/DiskCache/Internal/FileStatus.swift Sources/DiskCache/Internal/FileTime.swift)
# The layer uses one path helper of DiskCache's `FileSystem`, whose other members need the rest of the module:
# the helper's own file, and the namespace declared empty here.
files+=(Sources/DiskCache/Internal/FileSystem+ParentPath.swift "$out/FileSystem.swift")
echo 'enum FileSystem {}' > "$out/FileSystem.swift"
if [ "$(uname)" = Linux ]; then sqlite_module=(-I Sources/CSQLite); else sqlite_module=(); fi
swiftc -O -wmo -swift-version 6 -module-name SQLiteLayerBench "${sqlite_module[@]}" \
    "${files[@]}" Benchmarks/sqlite-layer/main.swift -o "$out/sqlite-layer-bench"
if [ "${1:-}" != --instructions ]; then
    exec "$out/sqlite-layer-bench" "$@"
fi
# Instructions of N operations minus those of 0 (the same setup), over N.
count() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$out/sqlite-layer-bench" --quick \
        --dir "${TMPDIR:-/tmp}/strata-sqlite-count" --count "$@" 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
n=2000
echo "| row | raw C API instructions/op | through the layer instructions/op | layer / raw |"
echo "|---|---|---|---|"
for size in 128 4124; do
    for operation in set get; do
        declare -A per=()
        for side in raw layer; do
            base=$(count "$side" "$operation" "$size" 0)
            full=$(count "$side" "$operation" "$size" "$n")
            per[$side]=$(((full - base) / n))
        done
        ratio=$(python3 -c "print(f'{${per[layer]} / ${per[raw]}:.3f}')")
        echo "| $operation, $size B sealed, no mmap | ${per[raw]} | ${per[layer]} | $ratio |"
    done
done
