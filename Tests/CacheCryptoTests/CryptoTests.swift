import CacheCore
import Foundation
import Testing

@testable import CacheCrypto

/// The crypto back end of this platform (OpenSSL on Linux, CryptoKit on Apple platforms) against published
/// known answers, plus its failure behavior.
@Suite struct CryptoTests {
    // MARK: - Known answers

    @Test func vectorFileHoldsEveryPublishedVector() throws {
        // If the resource failed to load, the argument lists below are empty and would pass vacuously.
        let vectors = try CryptoKnownAnswers.load()
        #expect(vectors.aesGCM.count == 4)
        #expect(vectors.hkdf.count == 3)
        #expect(vectors.hmac.count == 2)
    }

    @Test(arguments: CryptoKnownAnswers.loadedOrEmpty.aesGCM)
    func aesGCMSealMatchesKnownAnswer(_ vector: AESGCMVector) throws {
        let sealed = try CryptoBackend.sealAESGCM(
            key: vector.key, nonce: vector.nonce, plaintext: vector.plaintext, associatedData: vector.associatedData)
        #expect(sealed.ciphertext.katHex == vector.ciphertext.katHex)
        #expect(sealed.tag.katHex == vector.tag.katHex)
    }

    @Test(arguments: CryptoKnownAnswers.loadedOrEmpty.aesGCM)
    func aesGCMOpenRecoversKnownPlaintext(_ vector: AESGCMVector) throws {
        let plaintext = try CryptoBackend.openAESGCM(
            key: vector.key, nonce: vector.nonce, ciphertext: vector.ciphertext, tag: vector.tag,
            associatedData: vector.associatedData)
        #expect(plaintext.katHex == vector.plaintext.katHex)
    }

    @Test(arguments: CryptoKnownAnswers.loadedOrEmpty.hkdf)
    func hkdfMatchesKnownAnswer(_ vector: HKDFVector) throws {
        let output = try CryptoBackend.hkdfSHA256(
            inputKey: vector.inputKey, salt: vector.salt, info: vector.info, outputByteCount: vector.length)
        #expect(output.katHex == vector.outputKey.katHex)
    }

    @Test(arguments: CryptoKnownAnswers.loadedOrEmpty.hmac)
    func hmacMatchesKnownAnswer(_ vector: HMACVector) throws {
        let mac = try CryptoBackend.hmacSHA256(key: vector.key, data: vector.data)
        #expect(mac.katHex == vector.mac.katHex)
    }

    // MARK: - AES-GCM round trip and tampering

    @Test(arguments: [0, 1, 15, 16, 17, 4096, 1 << 20])
    func sealThenOpenReturnsThePlaintext(byteCount: Int) throws {
        let key = try CryptoBackend.randomBytes(count: 32)
        let nonce = try CryptoBackend.randomBytes(count: 12)
        let plaintext = try CryptoBackend.randomBytes(count: byteCount)
        let header = Data("strata header".utf8)

        let sealed = try CryptoBackend.sealAESGCM(
            key: key, nonce: nonce, plaintext: plaintext, associatedData: header)
        let opened = try CryptoBackend.openAESGCM(
            key: key, nonce: nonce, ciphertext: sealed.ciphertext, tag: sealed.tag, associatedData: header)

        #expect(sealed.ciphertext.count == byteCount)
        #expect(sealed.tag.count == 16)
        #expect(opened == plaintext)
        if byteCount >= 16 { #expect(sealed.ciphertext != plaintext) }
    }

    @Test func flippedCiphertextBitFailsAuthentication() throws {
        let fixture = try SealedFixture()
        var ciphertext = fixture.ciphertext
        ciphertext[ciphertext.startIndex + 5] ^= 0x01
        #expect(throws: CryptoFailure.authenticationFailed) {
            try fixture.open(ciphertext: ciphertext)
        }
    }

    @Test func flippedTagBitFailsAuthentication() throws {
        let fixture = try SealedFixture()
        var tag = fixture.tag
        tag[tag.startIndex + 15] ^= 0x80
        #expect(throws: CryptoFailure.authenticationFailed) {
            try fixture.open(tag: tag)
        }
    }

    @Test func changedAssociatedDataFailsAuthentication() throws {
        let fixture = try SealedFixture()
        #expect(throws: CryptoFailure.authenticationFailed) {
            try fixture.open(associatedData: Data("entry/other-name".utf8))
        }
        #expect(throws: CryptoFailure.authenticationFailed) {
            try fixture.open(associatedData: Data())
        }
    }

    @Test func wrongSubkeyOrNonceFailsAuthentication() throws {
        let fixture = try SealedFixture()
        #expect(throws: CryptoFailure.authenticationFailed) {
            try fixture.open(key: CryptoBackend.randomBytes(count: 32))
        }
        #expect(throws: CryptoFailure.authenticationFailed) {
            try fixture.open(nonce: CryptoBackend.randomBytes(count: 12))
        }
    }

    @Test func truncatedCiphertextFailsAuthentication() throws {
        let fixture = try SealedFixture()
        #expect(throws: CryptoFailure.authenticationFailed) {
            try fixture.open(ciphertext: fixture.ciphertext.dropLast())
        }
    }

    @Test func sealingTwiceWithFreshNoncesGivesDifferentCiphertexts() throws {
        let key = try CryptoBackend.randomBytes(count: 32)
        let plaintext = Data("same value".utf8)
        let first = try CryptoBackend.sealAESGCM(
            key: key, nonce: CryptoBackend.randomBytes(count: 12), plaintext: plaintext, associatedData: Data())
        let second = try CryptoBackend.sealAESGCM(
            key: key, nonce: CryptoBackend.randomBytes(count: 12), plaintext: plaintext, associatedData: Data())
        #expect(first.ciphertext != second.ciphertext)
        #expect(first.tag != second.tag)
    }

    // MARK: - Input validation

    @Test(arguments: [0, 16, 24, 31, 33, 64])
    func keyOfWrongSizeIsRejected(byteCount: Int) throws {
        let fixture = try SealedFixture()
        #expect(throws: CryptoFailure.self) {
            try CryptoBackend.sealAESGCM(
                key: Data(count: byteCount), nonce: fixture.nonce, plaintext: Data("x".utf8), associatedData: Data())
        }
        let error = #expect(throws: CryptoFailure.self) {
            try fixture.open(key: Data(count: byteCount))
        }
        #expect(error?.isInvalidInput == true)
    }

    @Test(arguments: [0, 8, 11, 13, 16])
    func nonceOfWrongSizeIsRejected(byteCount: Int) throws {
        let fixture = try SealedFixture()
        let sealError = #expect(throws: CryptoFailure.self) {
            try CryptoBackend.sealAESGCM(
                key: fixture.key, nonce: Data(count: byteCount), plaintext: Data("x".utf8), associatedData: Data())
        }
        #expect(sealError?.isInvalidInput == true)
        let openError = #expect(throws: CryptoFailure.self) {
            try fixture.open(nonce: Data(count: byteCount))
        }
        #expect(openError?.isInvalidInput == true)
    }

    @Test(arguments: [0, 4, 12, 15, 17, 32])
    func tagOfWrongSizeIsRejected(byteCount: Int) throws {
        let fixture = try SealedFixture()
        let error = #expect(throws: CryptoFailure.self) {
            try fixture.open(tag: Data(fixture.tag.prefix(byteCount)) + Data(count: max(0, byteCount - 16)))
        }
        #expect(error?.isInvalidInput == true)
    }

    @Test(arguments: [-1, 0, 8161])
    func hkdfOutputLengthOutOfRangeIsRejected(byteCount: Int) {
        let error = #expect(throws: CryptoFailure.self) {
            try CryptoBackend.hkdfSHA256(
                inputKey: Data(count: 32), salt: Data(), info: Data(), outputByteCount: byteCount)
        }
        #expect(error?.isInvalidInput == true)
    }

    @Test func hkdfAcceptsItsLongestOutputAndRejectsEmptyInputKey() throws {
        let longest = try CryptoBackend.hkdfSHA256(
            inputKey: Data(count: 32), salt: Data(), info: Data(), outputByteCount: 8160)
        #expect(longest.count == 8160)
        let error = #expect(throws: CryptoFailure.self) {
            try CryptoBackend.hkdfSHA256(inputKey: Data(), salt: Data(), info: Data(), outputByteCount: 32)
        }
        #expect(error?.isInvalidInput == true)
    }

    @Test func hmacWithEmptyKeyAndMessageMatchesKnownAnswer() throws {
        // HMAC-SHA-256("", ""), computed independently with Python's hmac module and `openssl mac`.
        let mac = try CryptoBackend.hmacSHA256(key: Data(), data: Data())
        #expect(mac.katHex == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }

    // MARK: - Random bytes

    @Test(arguments: [0, 1, 12, 32, 1000])
    func randomBytesHaveTheRequestedLength(count: Int) throws {
        #expect(try CryptoBackend.randomBytes(count: count).count == count)
    }

    @Test func randomBytesDifferBetweenCalls() throws {
        let draws = try (0..<16).map { _ in try CryptoBackend.randomBytes(count: 32) }
        #expect(Set(draws).count == draws.count)
        // 32 zero bytes from a working generator has probability 2^-256.
        #expect(!draws.contains(Data(count: 32)))
    }

    @Test func fillRandomOverwritesTheBufferItIsGiven() throws {
        // Given two zeroed buffers the size of a nonce, as the entry writer hands them over
        var first = [UInt8](repeating: 0, count: 12)
        var second = [UInt8](repeating: 0, count: 12)

        // When each is filled in place
        try first.withUnsafeMutableBytes { try CryptoBackend.fillRandom($0) }
        try second.withUnsafeMutableBytes { try CryptoBackend.fillRandom($0) }

        // Then both changed and differ (equal or zero nonces from a working generator: probability 2^-96)
        #expect(first != [UInt8](repeating: 0, count: 12))
        #expect(second != [UInt8](repeating: 0, count: 12))
        #expect(first != second)
    }

    @Test func negativeRandomByteCountIsRejected() {
        let error = #expect(throws: CryptoFailure.self) { try CryptoBackend.randomBytes(count: -1) }
        #expect(error?.isInvalidInput == true)
    }

    // MARK: - Shims

    @Test func constantTimeEqualsComparesContentsAndLengths() {
        let value = Data([1, 2, 3, 4])
        #expect(constantTimeEquals(value, Data([1, 2, 3, 4])))
        #expect(!constantTimeEquals(value, Data([1, 2, 3, 5])))
        #expect(!constantTimeEquals(value, Data([0, 2, 3, 4])))
        #expect(!constantTimeEquals(value, Data([1, 2, 3])))
        #expect(constantTimeEquals(Data(), Data()))
        #expect(constantTimeEquals(value[1...], Data([2, 3, 4])))
    }

    @Test func secureZeroWipesTheBuffer() {
        var secret = Data(repeating: 0xA5, count: 64)
        secret.withUnsafeMutableBytes { secureZero($0) }
        #expect(secret == Data(count: 64))
    }

    // MARK: - Concurrency

    @Test func concurrentCallsFromManyThreadsAgree() throws {
        // Given one key and message, when 8 threads seal, open, MAC and derive at once,
        // then every thread gets the same (correct) answers: the back end keeps no shared state.
        let key = try CryptoBackend.randomBytes(count: 32)
        let message = Data("concurrent".utf8)
        let expectedMAC = try CryptoBackend.hmacSHA256(key: key, data: message)
        let failures = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            do {
                for _ in 0..<50 {
                    let nonce = try CryptoBackend.randomBytes(count: 12)
                    let sealed = try CryptoBackend.sealAESGCM(
                        key: key, nonce: nonce, plaintext: message, associatedData: Data())
                    let opened = try CryptoBackend.openAESGCM(
                        key: key, nonce: nonce, ciphertext: sealed.ciphertext, tag: sealed.tag,
                        associatedData: Data())
                    let mac = try CryptoBackend.hmacSHA256(key: key, data: message)
                    if opened != message || mac != expectedMAC { failures.withLock { $0.append("wrong result") } }
                }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
    }
}

// MARK: - Fixtures

/// A value sealed under a random key, and a way to open it with one input changed.
private struct SealedFixture {
    let key: Data
    let nonce: Data
    let plaintext = Data("the quick brown fox jumps over the lazy dog".utf8)
    let associatedData = Data("entry/name".utf8)
    let ciphertext: Data
    let tag: Data

    init() throws {
        key = try CryptoBackend.randomBytes(count: 32)
        nonce = try CryptoBackend.randomBytes(count: 12)
        (ciphertext, tag) = try CryptoBackend.sealAESGCM(
            key: key, nonce: nonce, plaintext: plaintext, associatedData: associatedData)
        // The fixture itself must open, or every tampering test would pass for the wrong reason.
        let opened = try CryptoBackend.openAESGCM(
            key: key, nonce: nonce, ciphertext: ciphertext, tag: tag, associatedData: associatedData)
        guard opened == plaintext else { throw CryptoFailure.backend("fixture does not round-trip") }
    }

    @discardableResult
    func open(
        key: Data? = nil, nonce: Data? = nil, ciphertext: Data? = nil, tag: Data? = nil, associatedData: Data? = nil
    ) throws -> Data {
        try CryptoBackend.openAESGCM(
            key: key ?? self.key, nonce: nonce ?? self.nonce, ciphertext: ciphertext ?? self.ciphertext,
            tag: tag ?? self.tag, associatedData: associatedData ?? self.associatedData)
    }
}

extension CryptoFailure {
    fileprivate var isInvalidInput: Bool {
        if case .invalidInput = self { return true }
        return false
    }
}

// MARK: - Known-answer vectors

/// The published known-answer vectors in `Resources/crypto-kat.json`: AES-256-GCM from the GCM
/// specification (McGrew & Viega, test cases 13–16), HKDF-SHA-256 from RFC 5869 appendix A, and
/// HMAC-SHA-256 from RFC 4231.
struct CryptoKnownAnswers: Decodable, Sendable {
    let aesGCM: [AESGCMVector]
    let hkdf: [HKDFVector]
    let hmac: [HMACVector]

    private enum CodingKeys: String, CodingKey {
        case aesGCM = "aes_256_gcm"
        case hkdf = "hkdf_sha256"
        case hmac = "hmac_sha256"
    }

    /// Reads the vectors from the test bundle.
    static func load() throws -> CryptoKnownAnswers {
        guard let url = Bundle.module.url(forResource: "crypto-kat", withExtension: "json", subdirectory: "Resources")
        else {
            throw VectorError("crypto-kat.json is missing from the test bundle")
        }
        return try JSONDecoder().decode(CryptoKnownAnswers.self, from: Data(contentsOf: url))
    }

    /// The vectors for `@Test(arguments:)`, which cannot throw; a load failure leaves them empty, and
    /// `vectorFileHoldsEveryPublishedVector` then fails.
    static let loadedOrEmpty: CryptoKnownAnswers =
        (try? load()) ?? CryptoKnownAnswers(aesGCM: [], hkdf: [], hmac: [])

    private init(aesGCM: [AESGCMVector], hkdf: [HKDFVector], hmac: [HMACVector]) {
        self.aesGCM = aesGCM
        self.hkdf = hkdf
        self.hmac = hmac
    }
}

/// One AES-256-GCM vector.
struct AESGCMVector: Decodable, Sendable, CustomTestStringConvertible {
    let name: String
    let key: Data
    let nonce: Data
    let plaintext: Data
    let associatedData: Data
    let ciphertext: Data
    let tag: Data
    var testDescription: String { name }

    private enum CodingKeys: String, CodingKey {
        case name, key, nonce, plaintext, aad, ciphertext, tag
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        key = try container.decodeHex(forKey: .key)
        nonce = try container.decodeHex(forKey: .nonce)
        plaintext = try container.decodeHex(forKey: .plaintext)
        associatedData = try container.decodeHex(forKey: .aad)
        ciphertext = try container.decodeHex(forKey: .ciphertext)
        tag = try container.decodeHex(forKey: .tag)
    }
}

/// One HKDF-SHA-256 vector.
struct HKDFVector: Decodable, Sendable, CustomTestStringConvertible {
    let name: String
    let inputKey: Data
    let salt: Data
    let info: Data
    let length: Int
    let outputKey: Data
    var testDescription: String { name }

    private enum CodingKeys: String, CodingKey {
        case name, ikm, salt, info, length, okm
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        inputKey = try container.decodeHex(forKey: .ikm)
        salt = try container.decodeHex(forKey: .salt)
        info = try container.decodeHex(forKey: .info)
        length = try container.decode(Int.self, forKey: .length)
        outputKey = try container.decodeHex(forKey: .okm)
    }
}

/// One HMAC-SHA-256 vector.
struct HMACVector: Decodable, Sendable, CustomTestStringConvertible {
    let name: String
    let key: Data
    let data: Data
    let mac: Data
    var testDescription: String { name }

    private enum CodingKeys: String, CodingKey {
        case name, key, data, mac
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        key = try container.decodeHex(forKey: .key)
        data = try container.decodeHex(forKey: .data)
        mac = try container.decodeHex(forKey: .mac)
    }
}

private struct VectorError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension KeyedDecodingContainer {
    fileprivate func decodeHex(forKey key: Key) throws -> Data {
        let text = try decode(String.self, forKey: key)
        guard let data = Data(katHex: text) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "not hex: \(text)")
        }
        return data
    }
}

extension Data {
    /// Parses lowercase or uppercase hex with an even number of digits.
    fileprivate init?(katHex hex: String) {
        let digits = Array(hex.utf8)
        guard digits.count.isMultiple(of: 2) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = hexValue(digits[index]), let low = hexValue(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        self.init(bytes)
    }

    /// Lowercase hex, for readable expectations.
    var katHex: String { map { String(format: "%02x", $0) }.joined() }
}

private func hexValue(_ digit: UInt8) -> UInt8? {
    switch digit {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
    default: return nil
    }
}
