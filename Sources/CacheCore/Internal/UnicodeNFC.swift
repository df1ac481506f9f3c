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

/// The Unicode NFC form of a string (Unicode Standard Annex #15), the one normalizer behind every
/// canonical key and tag byte (`String.canonicalBytes`, Codable keys, `TagBlock`).
///
/// Neither the standard library nor FoundationEssentials has a public NFC API; the one used since the first
/// release is Foundation's `precomposedStringWithCanonicalMapping`, and stored entries are named by its
/// output, so it stays the one normalizer. Where FoundationEssentials exists (Linux), importing Foundation
/// would load libFoundation and ICU into every process that links Strata, `strata get` included, so
/// Foundation is loaded here only when a string needs normalizing at all: most keys are ASCII or Latin-1,
/// which are their own NFC form (``isNFCWithoutNormalizing(_:)``). For the rest, the normalizer is
/// Foundation's own (CoreFoundation's `CFStringNormalize`, which `precomposedStringWithCanonicalMapping`
/// calls on Linux), found in libFoundation.so with `dlopen` on first use. Tests check the two agree
/// scalar by scalar (`UnicodeNFCTests`).
package enum UnicodeNFC {
    /// The UTF-8 bytes of the NFC form of `string`.
    ///
    /// - Complexity: O(*n*); the first string that is not Latin-1 loads libFoundation (a few milliseconds,
    ///   once per process).
    package static func utf8(of string: String) -> Data {
        var string = string
        if let bytes = string.withUTF8({ isNFCWithoutNormalizing($0) ? Data($0) : nil }) { return bytes }
        return Data(normalizedSlowly(string).utf8)
    }

    /// The NFC form of `string`.
    package static func normalized(_ string: String) -> String {
        var copy = string
        if copy.withUTF8({ isNFCWithoutNormalizing($0) }) { return string }
        return normalizedSlowly(string)
    }

    /// Whether UTF-8 `bytes` are certainly NFC without running the normalizer: every scalar is below U+0300.
    ///
    /// No scalar below U+0300 decomposes, none has a nonzero combining class, and none composes with the one
    /// before it (Unicode's `NFC_Quick_Check` is `Yes` for all of them; the first `Maybe` is U+0300, the first
    /// `No` U+0340), so a string made of them is its own NFC form. In valid UTF-8 these are exactly the
    /// strings whose bytes are all below 0xCC (0xCC 0x80 encodes U+0300).
    package static func isNFCWithoutNormalizing(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.allSatisfy { $0 < 0xCC }
    }

    #if canImport(FoundationEssentials)
    /// Runs Foundation's normalizer on a string that may not be NFC.
    private static func normalizedSlowly(_ string: String) -> String {
        guard let library = CoreFoundationNormalizer.shared else {
            // Without the normalizer, keys would be named differently from every other process: stop rather
            // than write entries no other build finds.
            fatalError(
                "Strata: Unicode NFC normalization needs libFoundation.so (Foundation's CoreFoundation), which "
                    + "could not be loaded: \(CoreFoundationNormalizer.loadError)")
        }
        return library.normalizedNFC(string)
    }
    #else
    private static func normalizedSlowly(_ string: String) -> String {
        string.precomposedStringWithCanonicalMapping
    }
    #endif
}

#if canImport(FoundationEssentials)
/// CoreFoundation's normalizer, looked up in libFoundation.so on first use.
///
/// Only C functions without structures by value are used, so their Swift signatures below are the C
/// declarations of CoreFoundation's `CFString.h` (`CFIndex` is `long`, `UniChar` `uint16_t`,
/// `CFStringNormalizationForm` a `CFIndex` enumeration). A NUL character needs no care: the string is passed
/// and read back by length.
///
/// Thread safety: immutable after loading; CoreFoundation's functions are thread-safe on objects that are
/// not shared, and each call here creates and releases its own.
private struct CoreFoundationNormalizer: Sendable {
    typealias CreateWithCharacters =
        @convention(c) (
            UnsafeRawPointer?, UnsafePointer<UInt16>?, Int
        ) -> UnsafeMutableRawPointer?
    typealias CreateMutableCopy = @convention(c) (UnsafeRawPointer?, Int, UnsafeRawPointer?) -> UnsafeMutableRawPointer?
    typealias Normalize = @convention(c) (UnsafeMutableRawPointer?, Int) -> Void
    typealias GetLength = @convention(c) (UnsafeRawPointer?) -> Int
    typealias GetCharacterAtIndex = @convention(c) (UnsafeRawPointer?, Int) -> UInt16
    typealias Release = @convention(c) (UnsafeRawPointer?) -> Void

    /// `kCFStringNormalizationFormC`.
    private static let formC = 2

    let createWithCharacters: CreateWithCharacters
    let createMutableCopy: CreateMutableCopy
    let normalize: Normalize
    let getLength: GetLength
    let getCharacterAtIndex: GetCharacterAtIndex
    let release: Release

    /// Loaded once per process, on first use (Swift initializes a static `let` lazily and exactly once).
    static let loaded: Result<CoreFoundationNormalizer, LoadFailure> = load()
    static var shared: CoreFoundationNormalizer? { try? loaded.get() }
    static var loadError: String {
        if case .failure(let failure) = loaded { return failure.reason }
        return "none"
    }

    struct LoadFailure: Error {
        var reason: String
    }

    private static func load() -> Result<CoreFoundationNormalizer, LoadFailure> {
        // A process that already links Foundation has it loaded: dlopen then only returns its handle. The
        // handle is never closed: the library stays for the process's life, as a linked one would. Lazy
        // binding, as for a linked library: resolving all of Foundation's (and ICU's) functions up front cost
        // more than the normalizer's first call.
        guard let handle = dlopen("libFoundation.so", RTLD_LAZY | RTLD_LOCAL) else {
            return .failure(LoadFailure(reason: dlerror().map { String(cString: $0) } ?? "dlopen failed"))
        }
        func symbol<T>(_ name: String, as type: T.Type) throws(LoadFailure) -> T {
            guard let address = dlsym(handle, name) else {
                throw LoadFailure(reason: "libFoundation.so has no \(name)")
            }
            return unsafeBitCast(address, to: type)
        }
        do {
            return .success(
                CoreFoundationNormalizer(
                    createWithCharacters: try symbol("CFStringCreateWithCharacters", as: CreateWithCharacters.self),
                    createMutableCopy: try symbol("CFStringCreateMutableCopy", as: CreateMutableCopy.self),
                    normalize: try symbol("CFStringNormalize", as: Normalize.self),
                    getLength: try symbol("CFStringGetLength", as: GetLength.self),
                    getCharacterAtIndex: try symbol("CFStringGetCharacterAtIndex", as: GetCharacterAtIndex.self),
                    release: try symbol("CFRelease", as: Release.self)))
        } catch {
            return .failure(error)
        }
    }

    /// `string` in NFC, by `CFStringNormalize(…, kCFStringNormalizationFormC)` on a copy.
    func normalizedNFC(_ string: String) -> String {
        let units = Array(string.utf16)
        // A nil allocator is kCFAllocatorDefault.
        guard let immutable = units.withUnsafeBufferPointer({ createWithCharacters(nil, $0.baseAddress, $0.count) })
        else { fatalError("Strata: CFStringCreateWithCharacters failed for \(units.count) UTF-16 units") }
        defer { release(immutable) }
        guard let mutable = createMutableCopy(nil, 0, immutable) else {
            fatalError("Strata: CFStringCreateMutableCopy failed for \(units.count) UTF-16 units")
        }
        defer { release(mutable) }
        normalize(mutable, Self.formC)
        let length = getLength(mutable)
        var normalized = [UInt16]()
        normalized.reserveCapacity(length)
        for index in 0..<length { normalized.append(getCharacterAtIndex(mutable, index)) }
        return String(decoding: normalized, as: UTF16.self)
    }
}
#endif
