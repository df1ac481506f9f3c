#!/usr/bin/env bash
# Builds the DocC documentation of every library module from its symbol graph and its catalog
# (Sources/<Module>/<Module>.docc), with warnings as errors: a broken symbol link fails CI.
# Output: .build/docs/<Module>.doccarchive. Uses the toolchain's docc; no plugin package.
set -euo pipefail
cd "$(dirname "$0")/.."

# The graphs come from the compiler (-emit-symbol-graph), which includes what a module re-exports, so a
# tier's docs link to CacheCore's symbols. A module emits its graph only when it is compiled: the scratch
# folder starts empty each time. Building a target compiles the modules it depends on too.
graphs=$PWD/.build/docs-graphs
rm -rf .build/docs-build "$graphs" && mkdir -p "$graphs"
for catalog in Sources/*/*.docc; do
    module=$(basename "$catalog" .docc)
    [ -f "$graphs/$module.symbols.json" ] && continue
    swift build --scratch-path .build/docs-build --target "$module" \
        -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$graphs" >/dev/null
done
rm -rf .build/docs && mkdir -p .build/docs

status=0
for catalog in Sources/*/*.docc; do
    module=$(basename "$catalog" .docc)
    if [ ! -f "$graphs/$module.symbols.json" ]; then
        echo "build-docs: the compiler emitted no symbol graph for $module" >&2
        status=1
        continue
    fi
    mkdir -p ".build/docs/graphs-$module"
    cp "$graphs/$module".symbols.json ".build/docs/graphs-$module/"
    cp "$graphs/$module"@*.symbols.json ".build/docs/graphs-$module/" 2>/dev/null || true
    if docc convert "$catalog" \
        --additional-symbol-graph-dir ".build/docs/graphs-$module" \
        --fallback-display-name "$module" --fallback-bundle-identifier "org.strata.$module" \
        --output-dir ".build/docs/$module.doccarchive" --warnings-as-errors >".build/docs/$module.log" 2>&1; then
        echo "build-docs: $module ok"
    else
        echo "build-docs: $module has documentation warnings:" >&2
        grep -E "warning|error" ".build/docs/$module.log" >&2 || cat ".build/docs/$module.log" >&2
        status=1
    fi
done
exit "$status"
