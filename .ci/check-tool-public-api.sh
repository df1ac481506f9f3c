#!/usr/bin/env bash
# The `strata` tool is a client of the library's public API (DESIGN.md, "The strata command-line tool"):
# it may import library products only (check-imports.sh) and may use nothing declared `package`. Inside the
# package the compiler would accept a `package` symbol, so this type-checks the tool's sources as another
# package would see the built modules: the same swiftmodules, a different package name. Any `package`
# declaration the tool uses is then "cannot find ... in scope", and this check fails.
# Needs a debug build of the modules (CI runs it after `swift build`).
set -euo pipefail
cd "$(dirname "$0")/.."

modules=.build/debug/Modules
[ -d "$modules" ] || { echo "check-tool-public-api: no $modules; run 'swift build' first" >&2; exit 1; }
maps=()
for map in Sources/*/module.modulemap; do maps+=(-Xcc "-fmodule-map-file=$map"); done
mapfile -t sources < <(find Sources/strata -name '*.swift' | sort)
if ! swiftc -typecheck -swift-version 6 -module-name strata -package-name strata-outside-the-package \
    -I "$modules" "${maps[@]}" "${sources[@]}"; then
    echo "check-tool-public-api: Sources/strata uses something the library does not make public (above)" >&2
    exit 1
fi
echo "check-tool-public-api: Sources/strata (${#sources[@]} files) type-checks against the public API alone"
