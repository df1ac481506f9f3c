#!/usr/bin/env bash
# Layering check (Docs/Overview.md): the arrows between Strata's modules only point down. Tiers never
# import each other, MultiCache imports no tier, CacheCore imports no other module of the package. The Redis
# connection layer (RedisConnection, in no product) is imported by the Redis tier alone: not by the umbrella,
# not by the CLI, which see Redis only through RedisCache's public API.
# The sealed-record kernel (SealedRecord, in no product) is imported by the two sealing tiers, DiskCache and
# RedisCache, and imports only CacheCore and CacheCrypto.
# Reads each file's `import` lines (plain, @_exported, @testable, `import struct M.T`); exits 1 on a
# forbidden edge or on a Sources/ folder this table does not know.
set -euo pipefail
cd "$(dirname "$0")/.."

# module -> package modules it may import (system modules such as Foundation are not listed here).
declare -A allowed=(
    [CacheCore]=""
    [CacheCrypto]="CacheCore COpenSSL"
    [MemoryCache]="CacheCore"
    [SealedRecord]="CacheCore CacheCrypto"
    [DiskCache]="CacheCore CacheCrypto SealedRecord CSQLite"
    [RedisConnection]="CacheCore COpenSSLTLS"
    [RedisCache]="CacheCore CacheCrypto RedisConnection SealedRecord"
    [MultiCache]="CacheCore"
    [CacheTesting]="CacheCore"
    [Strata]="CacheCore CacheCrypto MemoryCache DiskCache MultiCache RedisCache"
    [strata]="CacheCore CacheCrypto MemoryCache DiskCache MultiCache RedisCache Strata"
)
package_modules=" ${!allowed[*]} COpenSSL COpenSSLTLS CSQLite "

status=0
for dir in Sources/*/; do
    module=$(basename "$dir")
    [ -f "$dir/module.modulemap" ] && continue    # a system-library target: C, no Swift imports
    if [ -z "${allowed[$module]+set}" ]; then
        echo "check-imports: Sources/$module is not in the layering table of .ci/check-imports.sh" >&2
        status=1
        continue
    fi
    while IFS=: read -r file line text; do
        imported=$(sed -E 's/^[[:space:]]*(@[A-Za-z_]+(\([^)]*\))?[[:space:]]+)*import[[:space:]]+((struct|class|enum|protocol|func|var|let|typealias)[[:space:]]+)?([A-Za-z_][A-Za-z0-9_]*).*/\5/' <<<"$text")
        case "$package_modules" in *" $imported "*) ;; *) continue ;; esac
        case " ${allowed[$module]} " in
            *" $imported "*) ;;
            *) echo "check-imports: $file:$line: $module must not import $imported" >&2; status=1 ;;
        esac
    done < <(grep -rnE '^[[:space:]]*(@[A-Za-z_]+(\([^)]*\))?[[:space:]]+)*import[[:space:]]' "$dir" --include='*.swift' || true)
done

# Foundation proper (libFoundation and its ICU) is loaded by every process that links a module importing it, the
# strata tool included (Docs/Overview.md, "Foundation on Linux"). So in Sources/ a file imports Foundation only in
# the `#else` of `#if canImport(FoundationEssentials)`: FoundationEssentials where it exists (Linux), Foundation
# where it does not (Apple platforms), or inside a block compiled only on Apple platforms.
while IFS= read -r finding; do
    echo "check-imports: $finding: import Foundation outside '#if canImport(FoundationEssentials) … #else'" >&2
    status=1
done < <(python3 - <<'PY'
import pathlib, re
for path in sorted(pathlib.Path("Sources").rglob("*.swift")):
    lines = path.read_text(encoding="utf-8").split("\n")
    for number, line in enumerate(lines):
        if not re.match(r"^\s*(@\w+(\([^)]*\))?\s+)*((public|package|internal)\s+)?import\s+Foundation\s*$", line):
            continue
        before = [text.strip() for text in lines[max(0, number - 2):number]]
        if before == [re.sub(r"Foundation\s*$", "FoundationEssentials", line.strip()), "#else"]:
            continue
        # An Apple-only file (wrapped whole in `#if canImport(CryptoKit)`, `canImport(Darwin)`, …) may import it.
        opening = next((text.strip() for text in lines if text.strip().startswith("#if")), "")
        if re.match(r"#if (canImport\((CryptoKit|Darwin|Security|Network|SwiftUI)\)|os\((macOS|iOS|tvOS|watchOS|visionOS)\))", opening):
            continue
        print(f"{path}:{number + 1}")
PY
)
[ "$status" -eq 0 ] && echo "check-imports: every import follows the layering"
exit "$status"
