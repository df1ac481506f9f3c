#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where a sealed record lives, as its associated data binds it: what makes a record copied to another
/// place fail to open. Each tier gives its own binding; ``RecordBinding/withAssociatedData(header:_:)``
/// builds the associated data for all of them.
///
/// Thread safety: a value type.
package enum RecordBinding: Sendable, Equatable {
    /// A DiskCache entry file, bound by its name (the keyed hash of the key; Docs/DiskFormat.md).
    case entryFile(name: String)
    /// A RedisCache envelope, bound by its namespace and the Redis key it is stored under
    /// (Docs/RedisCache.md, "The envelope"). The namespace is at most 255 bytes of UTF-8 (the
    /// configuration allows 64 characters of ASCII).
    case redisKey(namespace: String, name: [UInt8])
    /// A record of DiskCache's SQLite engine, bound by its row's name (the keyed hash of the key, in hex) and,
    /// for a value kept in a file of its own, that file's name (Docs/DiskFormat.md, "The SQLite engine").
    case storeRow(name: String, file: String?)

    /// Calls `body` with the associated data of a record whose header bytes are `header`: the header,
    /// then the binding —
    ///
    /// - ``entryFile(name:)``: the file name's UTF-8 bytes;
    /// - ``redisKey(namespace:name:)``: the namespace's UTF-8 length (one byte), its bytes, then the key
    ///   name's bytes;
    /// - ``storeRow(name:file:)``: the byte `0x52` ("R") for a value in its row or `0x46` ("F") for one in a
    ///   file, the name's UTF-8 bytes, then, for a file, `0x2F` ("/") and the file name's UTF-8 bytes. The
    ///   marker keeps a row apart from an entry file of the file engine with the same name.
    ///
    /// The header carries the format version, the epoch, the expiry, the stale window, the cost and the
    /// flags (the tag stamps are inside the ciphertext, authenticated with it), so a record moved,
    /// re-stamped, replayed under another epoch or given another expiry fails to authenticate.
    ///
    /// The bytes live in a temporary buffer for the call only (no heap allocation for the usual sizes).
    ///
    /// - Parameters:
    ///   - header: The record's header bytes, exactly as stored.
    ///   - body: Called once with the associated data.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    /// - Complexity: O(*h* + *b*) in the header's and the binding's lengths.
    // Inlinable so each tier's call is specialized: unspecialized, every read paid for generic metadata
    // lookups of `R` and the closures (callgrind, redis-request-cost).
    @inlinable
    package func withAssociatedData<R>(
        header: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R
    ) rethrows -> R {
        switch self {
        case .entryFile(let name):
            var name = name
            return try name.withUTF8 { fileName in
                try Self.joining(header, bindingCount: fileName.count, body) { cursor in
                    cursor.append(UnsafeRawBufferPointer(fileName))
                }
            }
        case .redisKey(let namespace, let name):
            var namespace = namespace
            return try namespace.withUTF8 { namespaceBytes in
                // Not reachable from user input: the only namespace bound here is `NamespaceKeys.namespace`, made
                // only by `RedisCache.init` after `RedisCacheConfiguration.validate()` refused anything but 1 to 64
                // ASCII bytes (`.invalidArgument`; a URL's path is checked by the same rule when parsed). A longer
                // namespace would need a wider length field, never a truncated one.
                precondition(namespaceBytes.count <= Int(UInt8.max), "a namespace is at most 255 bytes")
                return try name.withUnsafeBytes { keyName in
                    try Self.joining(header, bindingCount: 1 + namespaceBytes.count + keyName.count, body) { cursor in
                        cursor.append(byte: UInt8(namespaceBytes.count))
                        cursor.append(UnsafeRawBufferPointer(namespaceBytes))
                        cursor.append(keyName)
                    }
                }
            }
        case .storeRow(let name, let file):
            var name = name
            var file = file ?? ""
            let inFile = !file.isEmpty
            return try name.withUTF8 { nameBytes in
                try file.withUTF8 { fileBytes in
                    let count = 1 + nameBytes.count + (inFile ? 1 + fileBytes.count : 0)
                    return try Self.joining(header, bindingCount: count, body) { cursor in
                        cursor.append(byte: inFile ? 0x46 : 0x52)
                        cursor.append(UnsafeRawBufferPointer(nameBytes))
                        if inFile {
                            cursor.append(byte: 0x2F)
                            cursor.append(UnsafeRawBufferPointer(fileBytes))
                        }
                    }
                }
            }
        }
    }

    /// Builds `header` followed by what `fill` appends (at most `bindingCount` bytes) in one temporary
    /// buffer and calls `body` with the bytes written.
    @inlinable
    static func joining<R>(
        _ header: UnsafeRawBufferPointer, bindingCount: Int, _ body: (UnsafeRawBufferPointer) throws -> R,
        fill: (inout Cursor) -> Void
    ) rethrows -> R {
        try withUnsafeTemporaryAllocation(byteCount: header.count + bindingCount, alignment: 1) { buffer in
            var cursor = Cursor(buffer: buffer)
            cursor.append(header)
            fill(&cursor)
            return try body(UnsafeRawBufferPointer(rebasing: buffer[..<cursor.offset]))
        }
    }

    /// Appends bytes to a buffer sized for them.
    @usableFromInline
    struct Cursor {
        @usableFromInline let buffer: UnsafeMutableRawBufferPointer
        @usableFromInline var offset = 0

        @inlinable
        init(buffer: UnsafeMutableRawBufferPointer) { self.buffer = buffer }

        @inlinable
        mutating func append(_ bytes: UnsafeRawBufferPointer) {
            UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<offset + bytes.count]).copyMemory(from: bytes)
            offset += bytes.count
        }

        @inlinable
        mutating func append(byte: UInt8) {
            buffer[offset] = byte
            offset += 1
        }
    }
}
