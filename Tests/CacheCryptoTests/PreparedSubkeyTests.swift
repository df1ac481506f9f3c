import CacheCore
import Foundation
import Testing

@testable import CacheCrypto

/// The prepared (reused-context) HMAC and AES-GCM keys against the published vectors and the one-shot
/// functions, including reuse after a failure and use from many threads at once.
@Suite struct PreparedSubkeyTests {
    @Test(arguments: CryptoKnownAnswers.loadedOrEmpty.hmac)
    func preparedHMACMatchesKnownAnswerEveryTime(_ vector: HMACVector) throws {
        let key = try CryptoBackend.prepareHMACSHA256(key: vector.key)
        // Twice: the second call runs on a context restarted from the first (same key, fresh state).
        for _ in 0..<2 {
            #expect(try mac(key, vector.data).katHex == vector.mac.katHex)
        }
    }

    @Test func preparedHMACOfAnEmptyMessageMatchesTheOneShot() throws {
        let secret = Data((0..<32).map { UInt8($0) })
        let key = try CryptoBackend.prepareHMACSHA256(key: secret)

        #expect(try mac(key, Data()) == (try CryptoBackend.hmacSHA256(key: secret, data: Data())))
    }

    @Test(arguments: CryptoKnownAnswers.loadedOrEmpty.aesGCM)
    func preparedSealMatchesKnownAnswerForEverySplit(_ vector: AESGCMVector) throws {
        let key = try CryptoBackend.prepareAESGCM(key: vector.key)
        // The two plaintext parts are one stream: any split point gives the vector's ciphertext.
        for split in Set([0, vector.plaintext.count / 2, vector.plaintext.count]) {
            let (ciphertext, tag) = try seal(
                key, nonce: vector.nonce, associatedData: vector.associatedData,
                first: vector.plaintext.prefix(split), second: vector.plaintext.dropFirst(split))
            #expect(ciphertext.katHex == vector.ciphertext.katHex)
            #expect(tag.katHex == vector.tag.katHex)
        }
    }

    @Test(arguments: CryptoKnownAnswers.loadedOrEmpty.aesGCM)
    func preparedOpenRecoversKnownPlaintextInTwoParts(_ vector: AESGCMVector) throws {
        let key = try CryptoBackend.prepareAESGCM(key: vector.key)
        let split = vector.plaintext.count / 3
        let (first, second) = try open(
            key, nonce: vector.nonce, associatedData: vector.associatedData, ciphertext: vector.ciphertext,
            tag: vector.tag, firstCount: split)

        #expect(first.katHex == vector.plaintext.prefix(split).katHex)
        #expect(second.katHex == vector.plaintext.dropFirst(split).katHex)
    }

    @Test func failedOpenZeroesOutputsAndLeavesTheKeyUsable() throws {
        // Given a sealed message
        let key = try CryptoBackend.prepareAESGCM(key: Data(repeating: 7, count: 32))
        let nonce = Data(repeating: 1, count: 12)
        let plaintext = Data("the value behind the key".utf8)
        let (ciphertext, tag) = try seal(
            key, nonce: nonce, associatedData: Data("ad".utf8), first: Data(), second: plaintext)

        // When it is opened with a changed tag, then authentication fails and no plaintext is left behind
        var badTag = tag
        badTag[badTag.startIndex] ^= 1
        var first = Data()
        var second = Data(repeating: 0xAA, count: plaintext.count)
        let failure = #expect(throws: CryptoFailure.self) {
            try open(
                key, nonce: nonce, associatedData: Data("ad".utf8), ciphertext: ciphertext, tag: badTag,
                first: &first, second: &second)
        }
        #expect(failure == .authenticationFailed)
        #expect(second == Data(count: plaintext.count))

        // And the same key still opens the genuine message
        let (_, reopened) = try open(
            key, nonce: nonce, associatedData: Data("ad".utf8), ciphertext: ciphertext, tag: tag, firstCount: 0)
        #expect(reopened == plaintext)
    }

    @Test(arguments: [4, 12, 15])
    func preparedOpenRefusesATruncatedTagThatTheLibraryWouldCheck(tagByteCount: Int) throws {
        // Given a sealed message and the first bytes of its genuine tag (GCM libraries verify a tag of
        // 4 to 16 bytes, so only the size check stands between a truncated tag and a forgery)
        let key = try CryptoBackend.prepareAESGCM(key: Data(repeating: 3, count: 32))
        let nonce = Data(repeating: 2, count: 12)
        let (ciphertext, tag) = try seal(
            key, nonce: nonce, associatedData: Data(), first: Data(), second: Data("value".utf8))

        // When it is opened with the truncated tag, then it is refused as invalid input before any check
        let failure = #expect(throws: CryptoFailure.self) {
            _ = try open(
                key, nonce: nonce, associatedData: Data(), ciphertext: ciphertext, tag: tag.prefix(tagByteCount),
                firstCount: 0)
        }
        guard case .invalidInput? = failure else {
            Issue.record("expected invalidInput, got \(String(describing: failure))")
            return
        }
    }

    @Test func preparedOpenAcceptsWhatTheOneShotSealed() throws {
        let secret = Data(repeating: 9, count: 32)
        let key = try CryptoBackend.prepareAESGCM(key: secret)
        let nonce = Data(repeating: 3, count: 12)
        let plaintext = Data((0..<5000).map { UInt8(truncatingIfNeeded: $0) })
        let sealed = try CryptoBackend.sealAESGCM(
            key: secret, nonce: nonce, plaintext: plaintext, associatedData: Data())

        let (first, second) = try open(
            key, nonce: nonce, associatedData: Data(), ciphertext: sealed.ciphertext, tag: sealed.tag, firstCount: 100)

        #expect(first + second == plaintext)
    }

    @Test(arguments: [0, 16, 31])
    func prepareRejectsAWrongKeySize(byteCount: Int) {
        #expect(throws: CryptoFailure.self) { try CryptoBackend.prepareAESGCM(key: Data(count: byteCount)) }
    }

    @Test func preparedKeysAgreeAcrossManyThreads() throws {
        // Given one prepared key of each kind, when 8 threads use them at once (more threads than the
        // pool keeps idle contexts for), then every result is right: no context is shared mid-operation.
        let secret = Data(repeating: 5, count: 32)
        let hmacKey = try CryptoBackend.prepareHMACSHA256(key: secret)
        let aesKey = try CryptoBackend.prepareAESGCM(key: secret)
        let failures = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            do {
                for round in 0..<50 {
                    let message = Data("thread \(thread) round \(round)".utf8)
                    let nonce = try CryptoBackend.randomBytes(count: 12)
                    let (ciphertext, tag) = try seal(
                        aesKey, nonce: nonce, associatedData: message, first: message, second: Data())
                    let (opened, _) = try open(
                        aesKey, nonce: nonce, associatedData: message, ciphertext: ciphertext, tag: tag,
                        firstCount: message.count)
                    let expectedMAC = try CryptoBackend.hmacSHA256(key: secret, data: message)
                    let computedMAC = try mac(hmacKey, message)
                    if opened != message || computedMAC != expectedMAC {
                        failures.withLock { $0.append("wrong result in thread \(thread)") }
                    }
                }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
    }
}

// MARK: - Helpers

private func mac(_ key: any PreparedHMACSubkey, _ message: Data) throws -> Data {
    var output = Data(count: 32)
    try output.withUnsafeMutableBytes { out in try message.withUnsafeBytes { try key.authenticate($0, into: out) } }
    return output
}

private func seal(
    _ key: any PreparedAESGCMSubkey, nonce: Data, associatedData: Data, first: Data, second: Data
) throws -> (ciphertext: Data, tag: Data) {
    var ciphertext = Data(count: first.count + second.count)
    var tag = Data(count: 16)
    try nonce.withUnsafeBytes { nonceBytes in
        try associatedData.withUnsafeBytes { adBytes in
            try first.withUnsafeBytes { firstBytes in
                try second.withUnsafeBytes { secondBytes in
                    try ciphertext.withUnsafeMutableBytes { ciphertextBytes in
                        try tag.withUnsafeMutableBytes { tagBytes in
                            try key.seal(
                                nonce: nonceBytes, associatedData: adBytes, first: firstBytes, second: secondBytes,
                                ciphertext: ciphertextBytes, tag: tagBytes)
                        }
                    }
                }
            }
        }
    }
    return (ciphertext, tag)
}

private func open(
    _ key: any PreparedAESGCMSubkey, nonce: Data, associatedData: Data, ciphertext: Data, tag: Data, firstCount: Int
) throws -> (first: Data, second: Data) {
    var first = Data(count: firstCount)
    var second = Data(count: ciphertext.count - firstCount)
    try open(
        key, nonce: nonce, associatedData: associatedData, ciphertext: ciphertext, tag: tag, first: &first,
        second: &second)
    return (first, second)
}

private func open(
    _ key: any PreparedAESGCMSubkey, nonce: Data, associatedData: Data, ciphertext: Data, tag: Data,
    first: inout Data, second: inout Data
) throws {
    try nonce.withUnsafeBytes { nonceBytes in
        try associatedData.withUnsafeBytes { adBytes in
            try ciphertext.withUnsafeBytes { ciphertextBytes in
                try tag.withUnsafeBytes { tagBytes in
                    try first.withUnsafeMutableBytes { firstBytes in
                        try second.withUnsafeMutableBytes { secondBytes in
                            try key.open(
                                nonce: nonceBytes, associatedData: adBytes, ciphertext: ciphertextBytes,
                                tag: tagBytes, first: firstBytes, second: secondBytes)
                        }
                    }
                }
            }
        }
    }
}
