import CacheCore
import DiskCache
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Scenario 6: a full volume and a read-only volume give typed errors and lose nothing.
///
/// Both run on a small tmpfs that the run scripts mount (we are root in CI, where `chmod` would not stop
/// a write: root bypasses permission bits, so read-only is tested with a read-only remount instead).
enum FullDisk {
    static func runOutOfSpace(_ options: Options) throws -> Int32 {
        let report = Report(scenario: "fulldisk")
        let mount = try options.url("mount")
        // This scenario fills its volume: refuse anything but a tmpfs, so a wrong path cannot fill a real disk.
        guard isTmpfsMountPoint(mount) else {
            throw HarnessError("--mount \(mount.path) is not a tmpfs mount point; refusing to fill it")
        }
        let store = mount.appendingPathComponent("store")
        let filler = mount.appendingPathComponent("filler")
        let cache = try Store.open(store)
        let victim = Payload.make(key: "victim", version: 1, length: 1000)
        try cache.setValue(victim, forKey: "victim", expiry: .never)
        try cache.setValue(Payload.make(key: "other", version: 1, length: 3000), forKey: "other", expiry: .never)
        let filesBefore = Set(Store.files(under: store).keys)

        // Given: a volume with no free block left.
        let filled = try fill(filler)
        report.record("filler_bytes", filled)

        // When: the victim key is overwritten and a new key is written.
        let overwrite = codeOfError {
            try cache.setValue(
                Payload.make(key: "victim", version: 2, length: 20_000), forKey: "victim", expiry: .never)
        }
        let fresh = codeOfError {
            try cache.setValue(Payload.make(key: "fresh", version: 1, length: 20_000), forKey: "fresh", expiry: .never)
        }
        report.record("overwrite_error", overwrite)
        report.record("new_key_error", fresh)
        report.expect(overwrite == CacheError.Code.outOfSpace.description, "overwrite on a full disk gave \(overwrite)")
        report.expect(fresh == CacheError.Code.outOfSpace.description, "new key on a full disk gave \(fresh)")

        // Then: the earlier value is intact, the new key is a miss, no temporary file is left.
        let victimRead = try? cache.value(forKey: "victim")
        report.expect(victimRead == victim, "previous value of the key is not readable after ENOSPC")
        report.expect((try? cache.value(forKey: "fresh")) == .some(nil), "the failed new key is not a miss")
        let reopened = codeOfError { _ = try Store.open(store) }
        report.record("open_while_full", reopened)
        if let second = try? Store.open(store) {
            report.expect((try? second.value(forKey: "victim")) == victim, "a store opened while full lost the value")
        }
        let leftovers = Set(Store.files(under: store).keys).subtracting(filesBefore)
        report.record("files_left_by_failed_writes", leftovers.count)
        report.expect(leftovers.isEmpty, "files left by failed writes: \(leftovers.sorted())")

        // And: once space is back, the same write succeeds.
        try FileManager.default.removeItem(at: filler)
        let retry = codeOfError {
            try cache.setValue(
                Payload.make(key: "victim", version: 2, length: 20_000), forKey: "victim", expiry: .never)
        }
        report.record("write_after_space_freed", retry)
        if let value = try? cache.value(forKey: "victim") {
            report.expect(
                Payload.verify(value, expectedKey: "victim") == .valid(version: 2), "retry did not store version 2")
        } else {
            report.fail("retry after freeing space left no value")
        }
        return report.finish()
    }

    /// Writes the entries that `readonly` later reads, before the volume is remounted read-only.
    static func prepareReadOnly(_ options: Options) throws -> Int32 {
        let cache = try Store.open(try options.url("store"))
        for index in 0..<8 {
            let key = Store.key(index)
            try cache.setValue(Payload.make(key: key, version: 1, length: 500 * index), forKey: key, expiry: .never)
        }
        print("prepared 8 entries")
        return 0
    }

    static func runReadOnly(_ options: Options) throws -> Int32 {
        let report = Report(scenario: "readonly")
        let store = try options.url("store")
        let filesBefore = Store.files(under: store)
        let cache: DiskCache<String, Data>
        do {
            cache = try Store.open(store)
        } catch {
            report.fail("opening a store on a read-only volume threw \(error)")
            return report.finish()
        }
        var rightReads = 0
        for index in 0..<8 {
            let key = Store.key(index)
            do {
                if let value = try cache.value(forKey: key),
                    Payload.verify(value, expectedKey: key) == .valid(version: 1)
                {
                    rightReads += 1
                } else {
                    report.fail("\(key): not readable from a read-only store")
                }
            } catch {
                report.fail("\(key): read threw \(error)")
            }
        }
        let write = codeOfError { try cache.setValue(Data("x".utf8), forKey: Store.key(0), expiry: .never) }
        let remove = codeOfError { try cache.removeEntry(forKey: Store.key(1)) }
        let wipe = codeOfError { try cache.removeAll() }
        report.record("right_reads", rightReads)
        report.record("write_error", write)
        report.record("remove_error", remove)
        report.record("remove_all_error", wipe)
        let readOnly = CacheError.Code.readOnly.description
        report.expect(write == readOnly, "write on a read-only store gave \(write)")
        report.expect(remove == readOnly, "remove on a read-only store gave \(remove)")
        report.expect(wipe == readOnly, "removeAll on a read-only store gave \(wipe)")
        let after = (try? cache.value(forKey: Store.key(0))).flatMap { $0 }
        report.expect(
            after.map { Payload.verify($0, expectedKey: Store.key(0)) } == .valid(version: 1),
            "the value changed or vanished after the failed writes")
        report.expect(Store.files(under: store) == filesBefore, "files changed on a read-only volume")
        return report.finish()
    }

    /// Whether `url` is itself the mount point of a tmpfs, by /proc/mounts.
    static func isTmpfsMountPoint(_ url: URL) -> Bool {
        let target = url.resolvingSymlinksInPath().path
        guard let mounts = try? String(contentsOfFile: "/proc/mounts", encoding: .utf8) else { return false }
        return mounts.split(separator: "\n").contains { line in
            let fields = line.split(separator: " ")
            return fields.count > 2 && fields[1] == target && fields[2] == "tmpfs"
        }
    }

    /// `none` when `body` succeeds, the `CacheError` code's name, or the type of any other error.
    private static func codeOfError(_ body: () throws -> Void) -> String {
        do {
            try body()
            return "none"
        } catch let error as CacheError {
            return error.code.description
        } catch {
            return "untyped \(type(of: error)): \(error)"
        }
    }

    /// Appends to `url` until the volume refuses even one byte; returns the bytes written.
    private static func fill(_ url: URL) throws -> Int {
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw HarnessError("cannot create \(url.path)") }
        defer { close(descriptor) }
        var total = 0
        for chunk in [1 << 16, 4096, 1] {
            let bytes = [UInt8](repeating: 0x5A, count: chunk)
            while true {
                let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, chunk) }
                if written <= 0 { break }
                total += written
                // A second guard besides the tmpfs check: the run scripts mount a few MiB, never more.
                if total > 64 << 20 { throw HarnessError("volume holds more than 64 MiB; refusing to fill it") }
            }
        }
        guard errno == ENOSPC else { throw HarnessError("filling stopped with errno \(errno), not ENOSPC") }
        return total
    }
}
