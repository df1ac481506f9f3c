import CacheCore
import CacheTesting
import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

private struct RouteKey: Codable, Hashable, Sendable {
    var path: String
    var page: Int
    var tags: [String: String]
}

extension RouteKey: CacheKey {}

@Suite struct CanonicalKeyTests {
    let folder = TemporaryFolder()

    static let awkwardKeys: [String] = [
        "",
        "/",
        "..",
        "../../etc/passwd",
        "/absolute/path",
        "a\0b",
        "\0",
        "emoji 🧊🔥👩‍👩‍👧",
        "line\nbreak\ttab",
        String(repeating: "long-key/", count: 1200),  // ~10 KB
    ]

    @Test(arguments: TestStore.engines, awkwardKeys)
    func awkwardKeysRoundTripInsideTheStore(_ engine: Engine, key: String) throws {
        let cache = try makeCache(folder, engine: engine)

        try cache.setValue(Data(key.utf8.reversed()), forKey: key)

        #expect(try cache.value(forKey: key) == Data(key.utf8.reversed()))
        // Nothing was created next to the store folder, and the only entry is a hashed name.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path) == ["store"])
        let names = try EngineStorage(folder, engine).records().keys
        #expect(names.count == 1)
        #expect(names.allSatisfy(StoreLayout.isEntryName))
        #expect(try cache.listEntries().map(\.key) == [key])
    }

    @Test(arguments: TestStore.engines)
    func composedAndDecomposedStringsNameOneEntry(_ engine: Engine) throws {
        let cache = try makeCache(folder, engine: engine)
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"

        try cache.setValue(Data([1]), forKey: composed)
        try cache.setValue(Data([2]), forKey: decomposed)

        #expect(composed.canonicalBytes == decomposed.canonicalBytes)
        #expect(try cache.value(forKey: composed) == Data([2]))
        #expect(try EngineStorage(folder, engine).count() == 1)
    }

    @Test(arguments: ["", "key-42", "A~z 0/9\u{7F}", "e\u{301}", "\u{212B}", "x\u{E9}"])
    func canonicalBytesAreTheNFCFormWithOrWithoutTheASCIIShortcut(key: String) {
        // ASCII strings skip the normalizer; every string must still give exactly its NFC bytes.
        #expect(key.canonicalBytes == Data(key.precomposedStringWithCanonicalMapping.utf8))
    }

    @Test(arguments: TestStore.engines)
    func codableKeysUseSortedJSONAndRoundTrip(_ engine: Engine) throws {
        let key = RouteKey(path: "/a/b", page: 2, tags: ["z": "1", "a": "2"])
        let cache = try DiskCache<RouteKey, Data>(configuration: makeConfiguration(folder, engine: engine))

        try cache.setValue(Data([5]), forKey: key)

        #expect(
            String(decoding: try key.canonicalBytes, as: UTF8.self)
                == #"{"page":2,"path":"/a/b","tags":{"a":"2","z":"1"}}"#)
        #expect(try cache.value(forKey: key) == Data([5]))
        #expect(try cache.listEntries().map(\.key) == [key])
    }

    @Test(arguments: TestStore.engines)
    func equalCodableKeysWithComposedAndDecomposedStringsNameOneEntry(_ engine: Engine) throws {
        // Given two `==` keys whose strings (a value and a dictionary key) differ only in composition
        let composed = RouteKey(path: "/caf\u{E9}", page: 1, tags: ["r\u{E9}gion": "\u{212B}"])
        let decomposed = RouteKey(path: "/cafe\u{301}", page: 1, tags: ["re\u{301}gion": "A\u{30A}"])
        #expect(composed == decomposed)
        let cache = try DiskCache<RouteKey, Data>(configuration: makeConfiguration(folder, engine: engine))

        // When one is written and the other read
        try cache.setValue(Data([7]), forKey: composed)

        // Then they are one entry, named by the NFC bytes
        #expect(try composed.canonicalBytes == decomposed.canonicalBytes)
        #expect(try cache.value(forKey: decomposed) == Data([7]))
        #expect(try EngineStorage(folder, engine).count() == 1)
        // (compared as bytes: `String`'s `==` would call the two forms equal anyway)
        #expect(
            try decomposed.canonicalBytes
                == Data("{\"page\":1,\"path\":\"/caf\u{E9}\",\"tags\":{\"r\u{E9}gion\":\"\u{C5}\"}}".utf8))
    }

    @Test func fixedWidthIntegersAreBigEndian() {
        #expect(1.canonicalBytes == Data([0, 0, 0, 0, 0, 0, 0, 1]))
        #expect((-1).canonicalBytes == Data(repeating: 0xff, count: 8))
        #expect(Int32(258).canonicalBytes == Data([0, 0, 1, 2]))
        #expect(UInt64(1 << 40).canonicalBytes == Data([0, 0, 1, 0, 0, 0, 0, 0]))
        #expect(Int(canonicalBytes: Data([0, 0, 0, 0, 0, 0, 1, 0])) == 256)
        #expect(Int(canonicalBytes: Data([1])) == nil)
    }

    @Test(arguments: TestStore.engines)
    func uuidAndURLKeysRoundTrip(_ engine: Engine) throws {
        let uuid = UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF")!
        #expect(
            uuid.canonicalBytes
                == Data([
                    0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF,
                ]))
        #expect(UUID(canonicalBytes: uuid.canonicalBytes) == uuid)
        let url = URL(string: "https://example.com/a?b=c#d")!
        #expect(url.canonicalBytes == Data("https://example.com/a?b=c#d".utf8))

        let cache = try DiskCache<URL, Data>(configuration: makeConfiguration(folder, engine: engine))
        try cache.setValue(Data([1]), forKey: url)
        #expect(try cache.value(forKey: url) == Data([1]))
    }

    @Test(arguments: TestStore.engines)
    func fileNamesAreStableAcrossInstancesAndDependOnTheMasterKey(_ engine: Engine) throws {
        let first = try makeCache(folder, engine: engine)
        try first.setValue(Data([1]), forKey: "k")
        let name = try first.entryName(for: "k")
        let second = try makeCache(folder, engine: engine)
        let otherFolder = TemporaryFolder()
        let otherKey = try makeCache(otherFolder, key: TestKeys.other, engine: engine)

        #expect(try EngineStorage(folder, engine).records().keys.sorted() == [name])
        #expect(try second.entryName(for: "k") == name)
        #expect(try otherKey.entryName(for: "k") != name)
    }
}
