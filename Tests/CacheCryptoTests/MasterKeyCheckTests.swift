import CacheCore
import Foundation
import Testing

@testable import CacheCrypto

/// The master-key check: a wrong master key is told apart from damage.
@Suite struct MasterKeyCheckTests {
    let plaintext = Data("strata.test.key-check".utf8)
    let header = Data("header".utf8)

    @Test func sealOpensToTheKnownPlaintextUnderTheSameSubkey() throws {
        let subkey = try StoreSubkeys.keyCheckSubkey(master: MasterKey(bytes: Data(repeating: 7, count: 32)))
        let sealed = try MasterKeyCheck.seal(plaintext, associatedData: header, checkSubkey: subkey)
        #expect(sealed.count == MasterKeyCheck.sealedByteCount(plaintextByteCount: plaintext.count))
        #expect(try MasterKeyCheck.opens(sealed, to: plaintext, associatedData: header, checkSubkey: subkey))
    }

    @Test func otherPlaintextOfTheSameLengthDoesNotCount() throws {
        let subkey = Data(repeating: 3, count: 32)
        let sealed = try MasterKeyCheck.seal(plaintext, associatedData: header, checkSubkey: subkey)
        let other = Data(repeating: 0x41, count: plaintext.count)
        #expect(try !MasterKeyCheck.opens(sealed, to: other, associatedData: header, checkSubkey: subkey))
    }

    @Test func otherSubkeyOrHeaderFailsAuthentication() throws {
        let subkey = Data(repeating: 3, count: 32)
        let sealed = try MasterKeyCheck.seal(plaintext, associatedData: header, checkSubkey: subkey)
        #expect(throws: CryptoFailure.authenticationFailed) {
            try MasterKeyCheck.opens(
                sealed, to: plaintext, associatedData: header, checkSubkey: Data(repeating: 4, count: 32))
        }
        #expect(throws: CryptoFailure.authenticationFailed) {
            try MasterKeyCheck.opens(sealed, to: plaintext, associatedData: Data("other".utf8), checkSubkey: subkey)
        }
    }

    @Test func truncatedSealIsInvalidInput() throws {
        let subkey = Data(repeating: 3, count: 32)
        let sealed = try MasterKeyCheck.seal(plaintext, associatedData: header, checkSubkey: subkey)
        let error = #expect(throws: CryptoFailure.self) {
            try MasterKeyCheck.opens(sealed.dropLast(), to: plaintext, associatedData: header, checkSubkey: subkey)
        }
        #expect(error != .authenticationFailed)
    }

    @Test func fingerprintIdentifiesTheSubkeyAndContext() throws {
        let context = Data("ctx".utf8)
        let first = try MasterKeyCheck.fingerprint(checkSubkey: Data(repeating: 1, count: 32), context: context)
        #expect(first.count == MasterKeyCheck.fingerprintByteCount)
        #expect(first == (try MasterKeyCheck.fingerprint(checkSubkey: Data(repeating: 1, count: 32), context: context)))
        #expect(first != (try MasterKeyCheck.fingerprint(checkSubkey: Data(repeating: 2, count: 32), context: context)))
        #expect(
            first
                != (try MasterKeyCheck.fingerprint(checkSubkey: Data(repeating: 1, count: 32), context: Data("x".utf8)))
        )
    }
}
