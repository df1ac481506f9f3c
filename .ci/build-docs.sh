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
# The guides in Docs/ as one more archive, then every archive merged into one site with a landing page
# that lists the modules and the guides (Docs/Documentation.md tells how to serve it).
python3 .ci/guides-catalog.py .build/docs/guides/Guides.docc
if docc convert .build/docs/guides/Guides.docc \
    --fallback-display-name "Strata Guides" --fallback-bundle-identifier org.strata.Guides \
    --output-dir .build/docs/Guides.doccarchive --warnings-as-errors >.build/docs/Guides.log 2>&1; then
    echo "build-docs: the guides ok"
else
    echo "build-docs: the guides have documentation warnings:" >&2
    grep -E "warning|error" .build/docs/Guides.log >&2 || cat .build/docs/Guides.log >&2
    status=1
fi
rm -rf .build/docs/site && mkdir -p .build/docs/site
if docc merge .build/docs/*.doccarchive --synthesized-landing-page-name Strata \
    --output-path .build/docs/site/Strata.doccarchive >.build/docs/merge.log 2>&1; then
    # The site's root has no page of its own: send it to the landing page (each page has its own
    # index.html under documentation/, so the root's copy is not needed by any other route).
    cat >.build/docs/site/Strata.doccarchive/index.html <<'HTML'
<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Strata</title>
<meta http-equiv="refresh" content="0; url=documentation/"></head>
<body><a href="documentation/">Strata's documentation</a></body></html>
HTML
    echo "build-docs: the combined site ok (.build/docs/site/Strata.doccarchive)"
else
    echo "build-docs: docc merge failed:" >&2
    cat .build/docs/merge.log >&2
    status=1
fi
exit "$status"
