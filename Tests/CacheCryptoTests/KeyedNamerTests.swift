import CacheCore
import Foundation
import Testing

@testable import CacheCrypto

/// Keyed names: HMAC-SHA-256 of a key's canonical bytes under a naming subkey.
@Suite struct KeyedNamerTests {
    @Test func hexNameIsTheHMACOfTheKeyBytes() throws {
        // RFC 4231, test case 2: key "Jefe", data "what do ya want for nothing?"
        let namer = try KeyedNamer(namingSubkey: Data("Jefe".utf8))
        #expect(
            try namer.hexName(of: Data("what do ya want for nothing?".utf8))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test func macMatchesTheOneShotHMACForEmptyAndLongKeys() throws {
        let subkey = Data((0..<32).map { UInt8($0) })
        let namer = try KeyedNamer(namingSubkey: subkey)
        for keyBytes in [Data(), Data(repeating: 0xA5, count: 1000)] {
            let mac = try namer.withMAC(of: keyBytes) { Data($0) }
            #expect(mac == (try CryptoBackend.hmacSHA256(key: subkey, data: keyBytes)))
        }
    }

    @Test func otherSubkeyGivesOtherNames() throws {
        let first = try KeyedNamer(namingSubkey: Data(repeating: 1, count: 32))
        let second = try KeyedNamer(namingSubkey: Data(repeating: 2, count: 32))
        let key = Data("user:42".utf8)
        #expect(try first.hexName(of: key) == first.hexName(of: key))
        #expect(try first.hexName(of: key) != second.hexName(of: key))
    }
}
