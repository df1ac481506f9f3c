#!/usr/bin/env bash
# Builds the DocC documentation of every library module from its symbol graph and its catalog
# (Sources/<Module>/<Module>.docc), with warnings as errors: a broken symbol link fails CI.
# Output: .build/docs/<Module>.doccarchive. Uses the toolchain's docc; no plugin package.
set -euo pipefail
cd "$(dirname "$0")/.."

modules=()
for catalog in Sources/*/*.docc; do modules+=("$(basename "$catalog" .docc)"); done
graphs=.build/docs/symbol-graphs
rm -rf .build/docs && mkdir -p "$graphs"

# Building a target emits the graphs of the modules it depends on too; build only what is still missing.
for module in "${modules[@]}"; do
    [ -f "$graphs/$module.symbols.json" ] && continue
    swift build --scratch-path .build/docs-build --target "$module" \
        -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$PWD/$graphs" >/dev/null
done

status=0
for module in "${modules[@]}"; do
    mkdir -p ".build/docs/graphs-$module"
    cp "$graphs/$module".symbols.json ".build/docs/graphs-$module/"
    cp "$graphs/$module"@*.symbols.json ".build/docs/graphs-$module/" 2>/dev/null || true
    if docc convert "Sources/$module/$module.docc" \
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
