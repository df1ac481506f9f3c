#!/usr/bin/env bash
# Darwin type-check: compiles every library module and the CLI on Linux with the Apple-only branches taken,
# against stand-ins of Apple's modules (.ci/darwin-stand-ins/, each declaration citing Apple's documentation).
#
# How: the stand-ins are built as Swift modules named Darwin, CryptoKit, Security, Network, SQLite3 and SwiftUI and put on the
# module search path, so `canImport(Darwin)`, `canImport(CryptoKit)` and `canImport(SwiftUI)` are true; members
# that Apple's Dispatch and Foundation have and Linux's lack come from AppleSDKAdditions, imported into every
# file. Then each module under Sources/ (found from the folders, in import order) is compiled to SIL in Swift 6
# mode (complete concurrency checking) with warnings as errors, as the macOS CI job builds it.
# What it cannot see: `os(iOS)`-style conditions (no Apple target triple here) — .ci/availability-check.py
# checks the platform-restricted APIs instead; see Docs/Platforms.md.
# The Glibc re-export, precisely (Docs/Platforms.md, "What the Glibc re-export hides"): every POSIX name both
# libraries share is checked with glibc's C types, not Darwin's — `stat.st_size` is `Int` here and `Int64` on
# Darwin, `st_mode`/`mode_t` `UInt32` here and `UInt16` there, `st_nlink` `UInt` here and `UInt16` there — so
# code that hands such a field on unconverted passes here and fails on macOS (the availability check flags
# the `st_size`/`st_mode` cases it can see). And because the Glibc module exists and the target is Linux,
# `canImport(Glibc)` and `os(Linux)` are TRUE during this check: in `#if canImport(Glibc) … #else` or
# `#if os(Linux) … #else` the Apple branch is never compiled here. Write such chains Darwin-first.
# Negative fixtures in .ci/darwin-fixtures/ must each FAIL to type-check (see the end of this script).
#
# Usage: .ci/darwin-typecheck.sh [SOURCES_DIR]   (default: Sources; a scratch copy may be given)
set -euo pipefail
cd "$(dirname "$0")/.."
sources=${1:-Sources}
out=.build/darwin-typecheck
rm -rf "$out"
mkdir -p "$out/stand-ins" "$out/modules"

# Apple's SDKs have no FoundationEssentials module (its code is inside Foundation there), so on Apple platforms
# `#if canImport(FoundationEssentials)` is false and every file imports Foundation. This toolchain has the
# module, so the check reads a copy of the sources in which that condition names a module that exists nowhere:
# the Apple branch is the one compiled, as on a Mac. (Messages name the copy, under .build/darwin-typecheck/.)
mkdir -p "$out/sources"
cp -R "$sources/." "$out/sources/"
find "$out/sources" -name '*.swift' -exec \
    sed -i 's/canImport(FoundationEssentials)/canImport(FoundationEssentials_NotInAppleSDKs)/g' {} +
sources=$out/sources

common=(-swift-version 6 -enable-upcoming-feature ExistentialAny -warnings-as-errors -package-name strata)

# The stand-ins, in dependency order.
for module in Darwin CryptoKit Security Network SQLite3 AppleSDKAdditions SwiftUI; do
    file=.ci/darwin-stand-ins/$module.swift
    [ -f "$file" ] || continue
    # Swift 5 mode: C globals imported from Apple's headers are not checked for Sendable either. Library
    # evolution, as Apple builds its SDK: a non-`@frozen` enum (CryptoKitError) needs `@unknown default`, and
    # structs are resilient. (It warns that Foundation lacks evolution support; that is Linux's, not ours.)
    swiftc -parse-as-library -module-name "$module" -swift-version 5 -enable-library-evolution -suppress-warnings -I "$out/stand-ins" \
        -emit-module -emit-module-path "$out/stand-ins/$module.swiftmodule" "$file"
done

# Swift modules under Sources/, ordered so that each comes after the modules it imports.
mapfile -t order < <(python3 - "$sources" <<'PY'
import os, re, sys
root = sys.argv[1]
modules = {}
for name in sorted(os.listdir(root)):
    folder = os.path.join(root, name)
    files = [os.path.join(d, f) for d, _, fs in os.walk(folder) for f in fs if f.endswith(".swift")]
    if files:
        modules[name] = files
imports = {}
for name, files in modules.items():
    found = set()
    for path in files:
        with open(path, encoding="utf-8") as handle:
            for match in re.finditer(r"^\s*(?:@\w+\s+)*import\s+(\w+)", handle.read(), re.M):
                if match.group(1) in modules and match.group(1) != name:
                    found.add(match.group(1))
    imports[name] = found
done, order = set(), []
while len(order) < len(modules):
    ready = [m for m in modules if m not in done and imports[m] <= done]
    if not ready:
        sys.exit("import cycle among " + ", ".join(sorted(set(modules) - done)))
    for m in sorted(ready):
        done.add(m)
        order.append(m)
print("\n".join(order))
PY
)

status=0
for module in "${order[@]}"; do
    mapfile -t files < <(find "$sources/$module" -name '*.swift' | sort)
    mode=(-parse-as-library)
    for file in "${files[@]}"; do [ "$(basename "$file")" = main.swift ] && mode=(); done
    printf '  %-16s %3d files ... ' "$module" "${#files[@]}"
    if swiftc "${common[@]}" "${mode[@]}" -module-name "$module" -wmo \
        -I "$out/stand-ins" -I "$out/modules" -Xfrontend -import-module -Xfrontend AppleSDKAdditions \
        -emit-module -emit-module-path "$out/modules/$module.swiftmodule" \
        -emit-sil -o "$out/$module.sil" "${files[@]}" >"$out/$module.log" 2>&1; then
        echo ok
    else
        echo FAILED
        cat "$out/$module.log"
        status=1
    fi
done
# Documented examples that only compile on Apple platforms (Docs/Platforms.md), against the modules above.
for example in .ci/darwin-examples/*.swift; do
    [ -f "$example" ] || continue
    printf '  %-16s %3d file  ... ' "example" 1
    if swiftc "${common[@]}" -parse-as-library -module-name DarwinExample -I "$out/stand-ins" -I "$out/modules" \
        -Xfrontend -import-module -Xfrontend AppleSDKAdditions -typecheck "$example" >"$out/example.log" 2>&1; then
        echo "ok ($(basename "$example"))"
    else
        echo FAILED
        cat "$out/example.log"
        status=1
    fi
done
# Negative fixtures: each must FAIL to type-check, with the message its `// expect:` line names, so that a
# stand-in that accepts more than Apple's SDK (a settable property Apple declares get-only, a missing enum
# case, a frozen enum) turns this script red.
for fixture in .ci/darwin-fixtures/*.swift; do
    [ -f "$fixture" ] || continue
    expected=$(sed -n 's|^// expect: ||p' "$fixture" | head -1)
    printf '  %-16s %3d file  ... ' "must-fail" 1
    if swiftc "${common[@]}" -parse-as-library -module-name DarwinFixture -I "$out/stand-ins" -I "$out/modules" \
        -Xfrontend -import-module -Xfrontend AppleSDKAdditions -typecheck "$fixture" >"$out/fixture.log" 2>&1; then
        echo "FAILED: $(basename "$fixture") type-checks, but Apple's SDK rejects it"
        status=1
    elif [ -z "$expected" ] || ! grep -qF -- "$expected" "$out/fixture.log"; then
        echo "FAILED: $(basename "$fixture") fails, but not with '$expected':"
        cat "$out/fixture.log"
        status=1
    else
        echo "rejected as expected ($(basename "$fixture"))"
    fi
done
exit $status
