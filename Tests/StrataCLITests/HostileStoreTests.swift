import CacheCore
import Foundation
import StrataTestSupport
import Testing

@testable import strata

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What every command must do about a hostile item in the store folder (Docs/Security.md, "A hostile
/// store folder"): never change anything outside the store, never hang (each run is bounded), never crash,
/// exit with a documented status, keep other entries readable.
extension HostileItem {
    /// Whether the store can still be opened (a damaged key-check record stops every command, exit 3).
    var storeOpens: Bool { !isOnCheckRecord }
    /// Whether the other entries survive the planting itself.
    var keepsOtherEntries: Bool { storeOpens && self != .entriesFolderLink }
}

@Suite struct HostileStoreTests {
    /// Every command that opens the store.
    static let commands: [[String]] = [
        ["get", "keep"], ["get", "victim"], ["set", "new", "v"], ["set", "victim", "w"], ["ls"], ["stats"],
        ["stats", "--json"], ["trim"], ["verify"], ["exec", "--ttl", "1h", "--", "/bin/echo", "hi"], ["rm", "victim"],
        ["clear"],
    ]
    /// A command that runs longer than this is taken for a hang.
    static let timeout = 30.0

    /// Entry file names below the store, relative to their fan-out folder.
    static func entryNames(_ harness: StrataHarness) -> Set<String> { entryFileNames(inStore: harness.store) }

    @Test(arguments: HostileItem.allCases)
    func everyCommandIsBoundedKeepsTheCanaryAndTheOtherEntries(item: HostileItem) throws {
        // Given a file store (the items sit where its files belong) with "victim" and "keep" (in another
        // fan-out folder) and a locked key file
        let harness = try StrataHarness()
        try harness.makeFileStore()
        #expect(try harness.run(["set", "victim", "v"]).status == 0)
        let victim = try #require(Self.entryNames(harness).first)
        #expect(try harness.run(["exec", "--ttl", "1h", "--", "/bin/true"]).status == 0)
        // The other entry must sit in another fan-out folder than the victim. File names come from a keyed
        // hash under this store's random master key, so try other key names until one lands elsewhere (each
        // try collides with probability 1/256; 16 names all colliding is out of reach).
        var keep = ""
        for attempt in 0..<16 {
            let candidate = "keep\(attempt)"
            let before = Self.entryNames(harness)
            #expect(try harness.run(["set", candidate, "kept"]).status == 0)
            let added = Self.entryNames(harness).subtracting(before)
            if added.count == 1, let name = added.first, name.prefix(2) != victim.prefix(2) {
                keep = candidate
                break
            }
            #expect(try harness.run(["rm", candidate]).status == 0)
        }
        try #require(!keep.isEmpty, "no key name landed outside the victim's fan-out folder")
        let keepValue = try harness.run(["get", keep]).outputText
        let victimNow = victim  // a key's file name never changes within one store
        let canary = try Canary(in: harness.root)
        let before = canary.snapshot()
        try item.plant(store: harness.store, canary: canary, victim: victimNow)

        for command in Self.commands {
            // When a command runs on the store
            let result = try #require(
                try harness.start(command).wait(timeout: Self.timeout), "\(command) hung with \(item)")

            // Then it ends with a documented status and one-line errors, and changed nothing outside the store
            #expect([0, 1, 3].contains(result.status), "\(command) with \(item): \(result.errorText)")
            #expect(result.errorLines.allSatisfy { $0.hasPrefix("strata: ") }, "\(command) with \(item)")
            #expect(!result.errorText.contains("FileError("), "\(command) with \(item)")
            #expect(canary.snapshot() == before, "\(command) changed the canary through \(item)")
            if !item.storeOpens { #expect(result.status == 3, "\(command) with \(item)") }
            if item.keepsOtherEntries && command != ["clear"] {
                let other = try #require(try harness.start(["get", keep]).wait(timeout: Self.timeout))
                #expect(other.status == 0 && other.outputText == keepValue, "after \(command) with \(item)")
            }
        }
    }

    @Test func endlessStandardInputIsRefusedOnceItPassesTheSizeLimit() throws {
        // Given an endless stdin and a store of at most 1 MiB
        let harness = try StrataHarness()
        #expect(try harness.run(["set", "k", "old"]).status == 0)

        // When it is stored
        let result = try #require(
            try RunningStrata(
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: ["-c", "exec \"$STRATA\" --store \"$STORE\" --max-size 1M set k < /dev/zero"], stdin: nil,
                environment: harness.environment(
                    key: harness.key, extra: ["STRATA": try StrataBinary.url().path, "STORE": harness.store.path]),
                directory: harness.root
            ).wait(timeout: Self.timeout))

        // Then it is refused with one line as soon as the input passed the limit, and the old value is gone
        #expect(result.status == 3)
        #expect(
            result.errorLines == [
                "strata: store \(harness.store.path): the value (more than 1000000 bytes) does not fit the size "
                    + "limit of 1000000 bytes and was not stored; 'k' now has no value"
            ])
        #expect(try harness.run(["get", "k"]).status == 1)
    }

    @Test func fifoAtAnEntryIsNamedByGetVerifyAndLsWithoutWaiting() throws {
        // Given a FIFO (no writer) where the entry of "k" belongs in a file store, beside a sound entry
        let harness = try StrataHarness()
        try harness.makeFileStore()
        #expect(try harness.run(["set", "k", "v"]).status == 0)
        let name = try #require(Self.entryNames(harness).first)
        #expect(try harness.run(["set", "other", "o"]).status == 0)
        let path = harness.store.path + "/entries/" + name.prefix(2) + "/" + name
        try? FileManager.default.removeItem(atPath: path)
        #expect(mkfifo(path, 0o600) == 0)

        // When get, verify and ls run (each bounded: a blocking open would never return)
        let get = try #require(try harness.start(["get", "k"]).wait(timeout: Self.timeout))
        let verify = try #require(try harness.start(["verify"]).wait(timeout: Self.timeout))
        let list = try #require(try harness.start(["ls"]).wait(timeout: Self.timeout))

        // Then each names the FIFO in one line as `cannot read PATH: REASON`, and the other entry is listed
        #expect(get.status == 3)
        #expect(get.errorLines.count == 1 && get.errorText.contains("a FIFO, not a regular file"))
        #expect(verify.status == 3)
        #expect(
            verify.errorLines == [
                "strata: store \(harness.store.path): cannot read \(path): a FIFO, not a regular file; left in place"
            ])
        #expect(list.status == 0)
        #expect(list.outputText.contains("other"))
        #expect(list.errorLines == ["strata: warning: cannot read \(path): a FIFO, not a regular file; left in place"])
    }

    @Test func readFailureReasonIsTheSystemsWordsNotADump() {
        let error = CacheError.posix(EACCES, "cannot open file", path: "/store/entries/ab/ab")
        #expect(CLIFailure.reason(of: error) == "Permission denied")
        #expect(CLIFailure.reason(of: CacheError(.io, "a FIFO, not a regular file")) == "a FIFO, not a regular file")
    }

    @Test func permissionDeniedAndOutOfSpaceNameTheRefusingPath() {
        let denied = CacheError.posix(EACCES, "cannot open file", path: "/store/locks/ab.lock")
        let full = CacheError.posix(ENOSPC, "cannot write file", path: "/store/tmp/1-a-b.tmp")

        guard case .store(let deniedText) = CLIFailure.store(denied, store: "/store"),
            case .store(let fullText) = CLIFailure.store(full, store: "/store")
        else {
            Issue.record("expected store failures")
            return
        }

        #expect(
            deniedText
                == "store /store: permission denied: cannot open file: Permission denied (path: /store/locks/ab.lock)")
        #expect(
            fullText
                == "store /store: out of space: cannot write file: No space left on device (path: /store/tmp/1-a-b.tmp)"
        )
    }

    @Test(.enabled(if: getuid() != 0, "root reads files whatever their mode"))
    func verifyNamesAnEntryItCannotReadAsCannotReadPathReason() throws {
        let harness = try StrataHarness()
        try harness.makeFileStore()
        #expect(try harness.run(["set", "k", "v"]).status == 0)
        let name = try #require(Self.entryNames(harness).first)
        let path = harness.store.path + "/entries/" + name.prefix(2) + "/" + name
        #expect(chmod(path, 0) == 0)
        defer { chmod(path, 0o600) }

        let result = try harness.run(["verify"])

        #expect(result.status == 3)
        #expect(
            result.errorLines == [
                "strata: store \(harness.store.path): cannot read \(path): Permission denied; left in place"
            ])
    }
}
