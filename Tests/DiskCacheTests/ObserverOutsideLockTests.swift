import CacheCore
import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// No observer runs while the store holds `store.lock`: an iOS app suspended while holding a file lock
/// in a shared container is killed (issue 11, Docs/Platforms.md "File locks and suspension").
@Suite struct ObserverOutsideLockTests {
    let folder = TemporaryFolder()

    /// Whether `store.lock` is free right now: a second open file description can take it at once.
    static func storeLockIsFree(in store: URL) -> Bool {
        let descriptor = open(store.appendingPathComponent("store.lock").path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { return false }
        _ = flock(descriptor, LOCK_UN)
        return true
    }

    @Test func removeAllReportsAForeignItemOnlyAfterReleasingTheStoreLock() throws {
        // Given a store with a foreign directory where an entry's file belongs, and an observer that checks
        // the lock each time it is called
        let store = folder.store
        let lockFreeAtEachEvent = Locked<[Bool]>([])
        let cache = try makeCache(
            folder,
            observer: { _ in
                let free = Self.storeLockIsFree(in: store)
                lockFreeAtEachEvent.withLock { $0.append(free) }
            })
        try cache.setValue(Data([1]), forKey: "a")
        let path = try cache.entryPath(for: "c")
        try FileManager.default.createDirectory(
            atPath: path + "/inner", withIntermediateDirectories: true)

        // When removeAll moves it aside (under store.lock) and reports it
        try cache.removeAll()

        // Then the observer heard of it, and the lock was free every time it ran
        let seen = lockFreeAtEachEvent.withLock { $0 }
        #expect(!seen.isEmpty)
        #expect(seen.allSatisfy { $0 })
    }
}
