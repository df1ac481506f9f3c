// Stand-in for Apple CryptoKit, for the Darwin type-check (.ci/darwin-typecheck.sh) only: no cryptography
// happens here. Each declaration copies the Swift signature on its page of Apple's CryptoKit documentation
// (https://developer.apple.com/documentation/cryptokit), cited beside it; conformances are those the pages
// list (none of these types is declared Sendable there, so none is here), and only what Strata uses is
// declared, so anything else fails to type-check as it should.
import Foundation

/// https://developer.apple.com/documentation/cryptokit/symmetrickey
public struct SymmetricKey: ContiguousBytes {
    /// https://developer.apple.com/documentation/cryptokit/symmetrickey/init(data:)
    public init<D: ContiguousBytes>(data: D) {}
    /// https://developer.apple.com/documentation/cryptokit/symmetrickey/bitcount (`var bitCount: Int { get }`)
    public var bitCount: Int { 0 }
    /// https://developer.apple.com/documentation/cryptokit/symmetrickey/withunsafebytes(_:)
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: nil, count: 0))
    }
}

/// https://developer.apple.com/documentation/cryptokit/cryptokiterror — all seven cases on that page. The
/// enum is not `@frozen` and the stand-ins are built with `-enable-library-evolution`, as Apple's SDK is, so a
/// `switch` over it without `@unknown default` fails here as it does on macOS.
public enum CryptoKitError: Error {
    /// https://developer.apple.com/documentation/cryptokit/cryptokiterror/incorrectkeysize
    case incorrectKeySize
    /// https://developer.apple.com/documentation/cryptokit/cryptokiterror/incorrectparametersize
    case incorrectParameterSize
    /// https://developer.apple.com/documentation/cryptokit/cryptokiterror/authenticationfailure
    case authenticationFailure
    /// https://developer.apple.com/documentation/cryptokit/cryptokiterror/underlyingcorecryptoerror(error:)
    case underlyingCoreCryptoError(error: Int32)
    /// https://developer.apple.com/documentation/cryptokit/cryptokiterror/wrapfailure (macOS 12, iOS 15)
    case wrapFailure
    /// https://developer.apple.com/documentation/cryptokit/cryptokiterror/unwrapfailure (macOS 12, iOS 15)
    case unwrapFailure
    /// https://developer.apple.com/documentation/cryptokit/cryptokiterror/invalidparameter (macOS 13, iOS 16)
    case invalidParameter
}

/// https://developer.apple.com/documentation/cryptokit/hashfunction
public protocol HashFunction {}

/// https://developer.apple.com/documentation/cryptokit/sha256
public struct SHA256: HashFunction {}

/// https://developer.apple.com/documentation/cryptokit/hashedauthenticationcode
/// (conforms to MessageAuthenticationCode: Hashable, ContiguousBytes, Sequence of UInt8).
public struct HashedAuthenticationCode<H: HashFunction>: Hashable, ContiguousBytes, Sequence {
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: nil, count: 0))
    }
    public func makeIterator() -> Array<UInt8>.Iterator { [UInt8]().makeIterator() }
    /// https://developer.apple.com/documentation/cryptokit/hashedauthenticationcode/bytecount
    public var byteCount: Int { 0 }
}

/// https://developer.apple.com/documentation/cryptokit/hmac
public struct HMAC<H: HashFunction> {
    /// https://developer.apple.com/documentation/cryptokit/hmac/init(key:)
    public init(key: SymmetricKey) {}
    /// https://developer.apple.com/documentation/cryptokit/hmac/update(data:)
    public mutating func update<D: DataProtocol>(data: D) {}
    /// https://developer.apple.com/documentation/cryptokit/hmac/finalize()
    public func finalize() -> HashedAuthenticationCode<H> { HashedAuthenticationCode() }
    /// https://developer.apple.com/documentation/cryptokit/hmac/authenticationcode(for:using:)
    public static func authenticationCode<D: DataProtocol>(for data: D, using key: SymmetricKey)
        -> HashedAuthenticationCode<H>
    { HashedAuthenticationCode() }
}

/// https://developer.apple.com/documentation/cryptokit/hkdf (macOS 11, iOS 14, tvOS 14, watchOS 7)
public struct HKDF<H: HashFunction> {
    /// https://developer.apple.com/documentation/cryptokit/hkdf/derivekey(inputkeymaterial:salt:info:outputbytecount:)
    public static func deriveKey<Salt: DataProtocol, Info: DataProtocol>(
        inputKeyMaterial: SymmetricKey, salt: Salt, info: Info, outputByteCount: Int
    ) -> SymmetricKey { SymmetricKey(data: Data()) }
}

/// https://developer.apple.com/documentation/cryptokit/aes
public enum AES {
    /// https://developer.apple.com/documentation/cryptokit/aes/gcm
    public enum GCM {
        /// https://developer.apple.com/documentation/cryptokit/aes/gcm/nonce
        public struct Nonce: ContiguousBytes, Sequence {
            /// https://developer.apple.com/documentation/cryptokit/aes/gcm/nonce/init()
            public init() {}
            /// https://developer.apple.com/documentation/cryptokit/aes/gcm/nonce/init(data:)
            public init<D: DataProtocol>(data: D) throws {}
            public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
                try body(UnsafeRawBufferPointer(start: nil, count: 0))
            }
            public func makeIterator() -> Array<UInt8>.Iterator { [UInt8]().makeIterator() }
        }

        /// https://developer.apple.com/documentation/cryptokit/aes/gcm/sealedbox
        public struct SealedBox {
            /// https://developer.apple.com/documentation/cryptokit/aes/gcm/sealedbox/init(nonce:ciphertext:tag:)
            public init<C: DataProtocol, T: DataProtocol>(nonce: AES.GCM.Nonce, ciphertext: C, tag: T) throws {}
            /// https://developer.apple.com/documentation/cryptokit/aes/gcm/sealedbox/init(combined:)
            public init<D: DataProtocol>(combined: D) throws {}
            /// https://developer.apple.com/documentation/cryptokit/aes/gcm/sealedbox/ciphertext
            public var ciphertext: Data { Data() }
            /// https://developer.apple.com/documentation/cryptokit/aes/gcm/sealedbox/tag
            public var tag: Data { Data() }
            /// https://developer.apple.com/documentation/cryptokit/aes/gcm/sealedbox/nonce (`let nonce`: read-only)
            public var nonce: AES.GCM.Nonce { AES.GCM.Nonce() }
            /// https://developer.apple.com/documentation/cryptokit/aes/gcm/sealedbox/combined
            public var combined: Data? { nil }
        }

        /// https://developer.apple.com/documentation/cryptokit/aes/gcm/seal(_:using:nonce:)
        public static func seal<Plaintext: DataProtocol>(
            _ message: Plaintext, using key: SymmetricKey, nonce: AES.GCM.Nonce? = nil
        ) throws -> AES.GCM.SealedBox { try SealedBox(combined: Data()) }

        /// https://developer.apple.com/documentation/cryptokit/aes/gcm/seal(_:using:nonce:authenticating:)
        public static func seal<Plaintext: DataProtocol, AuthenticatedData: DataProtocol>(
            _ message: Plaintext, using key: SymmetricKey, nonce: AES.GCM.Nonce? = nil,
            authenticating authenticatedData: AuthenticatedData
        ) throws -> AES.GCM.SealedBox { try SealedBox(combined: Data()) }

        /// https://developer.apple.com/documentation/cryptokit/aes/gcm/open(_:using:)
        public static func open(_ sealedBox: AES.GCM.SealedBox, using key: SymmetricKey) throws -> Data { Data() }

        /// https://developer.apple.com/documentation/cryptokit/aes/gcm/open(_:using:authenticating:)
        public static func open<AuthenticatedData: DataProtocol>(
            _ sealedBox: AES.GCM.SealedBox, using key: SymmetricKey, authenticating authenticatedData: AuthenticatedData
        ) throws -> Data { Data() }
    }
}
