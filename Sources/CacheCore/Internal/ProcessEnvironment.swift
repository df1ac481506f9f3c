#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The process environment as names and values, read where the library needs a default for a function's
/// `environment:` parameter (the caches and keys folders).
///
/// On Linux it reads `environ` directly: FoundationEssentials' `ProcessInfo.environment` splits each entry
/// through generic `String` indexing, 1.2 million instructions for a 41-variable environment, a twentieth
/// of a whole `strata get` (callgrind, stop 36). Elsewhere it is `ProcessInfo.environment`.
@usableFromInline
package enum ProcessEnvironment {
    /// The variables, the first definition of a name winning as it does for `getenv(3)`; bytes that are
    /// not UTF-8 are repaired as `ProcessInfo.environment` repairs them.
    ///
    /// Thread safety: reads `environ` without a lock, like `getenv(3)`; a `setenv(3)` on another thread
    /// at the same moment is the caller's race, as it is for `getenv`.
    ///
    /// - Complexity: O(*n*) in the environment's bytes.
    @usableFromInline
    package static var variables: [String: String] {
        #if canImport(Glibc) || canImport(Musl)
        var result: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            if let separator = strchr(pointer, 61) {  // "="
                let nameLength = pointer.distance(to: separator)
                let name = pointer.withMemoryRebound(to: UInt8.self, capacity: nameLength) {
                    String(decoding: UnsafeBufferPointer(start: $0, count: nameLength), as: UTF8.self)
                }
                if result[name] == nil { result[name] = String(cString: separator + 1) }
            }
            entry += 1
        }
        return result
        #else
        return ProcessInfo.processInfo.environment
        #endif
    }
}
