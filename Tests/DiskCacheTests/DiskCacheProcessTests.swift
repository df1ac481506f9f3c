import CacheCore
import CacheTesting
import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

/// Environment variable that turns the test binary into the second process of
/// ``DiskCacheProcessTests`` (it names the store folder to use).
private let childStoreVariable = "STRATA_DISK_CHILD_STORE"

/// Environment variable naming the engine the second process opens the store with (`files` or `sqlite`).
private let childEngineVariable = "STRATA_DISK_CHILD_ENGINE"

/// Re-launching the test binary gives a genuinely fresh process (new address space, no shared
/// in-memory state, `hashValue` seeded differently) without an extra executable target.
@Suite struct DiskCacheProcessTests {
    let folder = TemporaryFolder()

    /// Runs ``DiskCacheChildProcessRole`` in a new process of this test binary against `folder`, on `engine`.
    private func runChildProcess(_ engine: Engine) throws -> (status: Int32, output: String) {
        var environment = ProcessInfo.processInfo.environment
        environment[childStoreVariable] = folder.store.path
        environment[childEngineVariable] = "\(engine)"
        let process = try ChildProcess(
            URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path,
            ["--testing-library", "swift-testing", "--filter", "DiskCacheChildProcessRole"],
            environment: environment, standardOutput: .pipe, standardError: .standardOutput)
        let output = process.standardOutput?.readDataToEndOfFile() ?? Data()
        return (process.waitUntilExit().shellStatus, String(decoding: output, as: UTF8.self))
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/exe")), arguments: TestStore.engines)
    func secondProcessReadsAndWritesTheSameStore(_ engine: Engine) throws {
        // Given a value written by this process, and the "job" lock held by it
        let cache = try makeCache(folder, clock: SystemClock(), engine: engine)
        try cache.setValue(Data("from parent".utf8), forKey: "parent")

        // When another process opens the store (it checks the value and the lock, then writes and reads)
        let child = try cache.withLock(forKey: "job") { try runChildProcess(engine) }

        // Then it succeeded, its value is readable here, and its counters were persisted
        #expect(child.status == 0, "child output:\n\(child.output)")
        #expect(try cache.value(forKey: "child") == Data("from child".utf8))
        try cache.flushStatistics()
        let fresh = try makeCache(folder, clock: SystemClock(), engine: engine)
        let statistics = fresh.statistics
        #expect(statistics.insertions == 2)
        #expect(statistics.hits == 3)  // child: parent, child; parent: child
        #expect(fresh.count == 2)
        #expect(try fresh.totalBytes == EngineStorage(folder, engine).bytes())
    }
}

/// The second process's half of ``DiskCacheProcessTests``; skipped unless launched by it.
@Suite struct DiskCacheChildProcessRole {
    @Test(.enabled(if: ProcessInfo.processInfo.environment[childStoreVariable] != nil))
    func actAsTheSecondProcess() throws {
        let path = try #require(ProcessInfo.processInfo.environment[childStoreVariable])
        let engineName = ProcessInfo.processInfo.environment[childEngineVariable]
        let engine = try #require(TestStore.engines.first { "\($0)" == engineName })
        let cache = try DiskCache<String, Data>(
            configuration: DiskCacheConfiguration(
                name: "tests", directory: URL(fileURLWithPath: path), masterKeySource: .masterKey(TestKeys.primary),
                engine: engine))

        #expect(try cache.value(forKey: "parent") == Data("from parent".utf8))
        #expect(try cache.withLockIfAvailable(forKey: "job") { true } == nil)
        try cache.setValue(Data("from child".utf8), forKey: "child")
        #expect(try cache.value(forKey: "child") == Data("from child".utf8))
        try cache.flushStatistics()
    }
}
