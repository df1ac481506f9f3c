import CacheCore
import CacheTesting
import Foundation
import StrataTestSupport

@testable import DiskCache

extension TemporaryFolder {
    /// The store folder the factory uses inside this temporary folder.
    var store: URL { url.appendingPathComponent("store", isDirectory: true) }
}

/// Collects observer events from any thread.
final class EventRecorder: Sendable {
    private let events = Locked<[CacheEvent]>([])

    var observer: CacheObserver { { event in self.events.withLock { $0.append(event) } } }

    func kinds() -> [CacheEvent.Kind] { events.withLock { $0.map(\.kind) } }

    func count(of kind: CacheEvent.Kind) -> Int { kinds().filter { $0 == kind }.count }

    func messages(of kind: CacheEvent.Kind) -> [String] {
        events.withLock { $0.filter { $0.kind == kind }.map(\.message) }
    }
}

enum TestKeys {
    /// Fixed master keys: tests never touch the user's key files.
    static let primary = Data((0..<32).map { UInt8($0) })
    static let other = Data((0..<32).map { UInt8(255 - $0) })
}

/// The engines every DiskCache test that is not about one engine's layout runs on, as `@Test(arguments:)`.
///
/// Where the SQLite engine fails an assertion the file engine passes, that assertion alone is wrapped in
/// `withKnownIssue("SQLite engine: …") { … } when: { engine == .sqlite }`, so the file engine's run still
/// fails on it and a fix in the SQLite engine shows as a known issue no longer recorded. A body whose only
/// `try`s are inside `#expect` is spelled `{ () throws in`: the macro's `try` is not seen when the closure's
/// type is inferred.
enum TestStore {
    static let engines: [Engine] = [.files, .sqlite]
}

/// The storage engine option, as the parameterized tests name it.
typealias Engine = DiskCacheConfiguration.Engine

func makeConfiguration(
    _ folder: TemporaryFolder,
    byteLimit: Int? = nil,
    countLimit: Int? = nil,
    clock: any CacheClock = ManualClock(),
    key: Data = TestKeys.primary,
    durability: DiskCacheConfiguration.Durability = .none,
    observer: CacheObserver? = nil,
    engine: DiskCacheConfiguration.Engine = .files
) -> DiskCacheConfiguration {
    DiskCacheConfiguration(
        name: "tests", directory: folder.store, byteLimit: byteLimit, countLimit: countLimit,
        durability: durability, masterKeySource: .masterKey(key), clock: clock, observer: observer, engine: engine)
}

/// Opens a `DiskCache<String, Data>` in `folder` with an explicit master key, on `engine` (the file engine
/// unless told).
func makeCache(
    _ folder: TemporaryFolder,
    byteLimit: Int? = nil,
    countLimit: Int? = nil,
    clock: any CacheClock = ManualClock(),
    key: Data = TestKeys.primary,
    durability: DiskCacheConfiguration.Durability = .none,
    observer: CacheObserver? = nil,
    engine: DiskCacheConfiguration.Engine = .files
) throws -> DiskCache<String, Data> {
    try DiskCache(
        configuration: makeConfiguration(
            folder, byteLimit: byteLimit, countLimit: countLimit, clock: clock, key: key, durability: durability,
            observer: observer, engine: engine))
}

/// Files under `root`, recursively, as paths relative to it.
func allFiles(under root: URL) -> [String] {
    guard let enumerator = FileManager.default.enumerator(atPath: root.path) else { return [] }
    var files: [String] = []
    while let path = enumerator.nextObject() as? String {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: root.appendingPathComponent(path).path, isDirectory: &isDirectory),
            !isDirectory.boolValue
        {
            files.append(path)
        }
    }
    return files.sorted()
}

/// Entry files of the store in `folder`, as absolute paths.
func entryFiles(_ folder: TemporaryFolder) -> [String] {
    allFiles(under: folder.store.appendingPathComponent("entries")).map {
        folder.store.appendingPathComponent("entries").appendingPathComponent($0).path
    }
}

/// The sum of the entry files' real sizes.
func entryBytesOnDisk(_ folder: TemporaryFolder) -> Int {
    entryFiles(folder).reduce(0) { total, path in
        let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int
        return total + (size ?? 0)
    }
}

extension DiskCache {
    /// The path of the entry file for `key`.
    func entryPath(for key: Key) throws -> String {
        store.layout.entry(try store.fileName(for: try key.canonicalBytes))
    }
}

extension Data {
    /// Whether `pattern` occurs anywhere in these bytes.
    func containsBytes(_ pattern: Data) -> Bool {
        guard !pattern.isEmpty, count >= pattern.count else { return false }
        return range(of: pattern) != nil
    }
}
