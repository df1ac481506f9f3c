import CacheCore
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite struct CacheErrorTests {
    @Test(arguments: [
        (ENOSPC, CacheError.Code.outOfSpace),
        (EDQUOT, .outOfSpace),
        (EACCES, .permissionDenied),
        (EPERM, .permissionDenied),
        (EROFS, .readOnly),
        (EIO, .io),
        (ENOENT, .io),
        (EBADF, .io),
    ])
    func posixMapsErrnoToItsCode(_ errno: Int32, _ code: CacheError.Code) {
        let error = CacheError.posix(errno, "cannot write entry", path: "/tmp/x")
        #expect(error.code == code)
        #expect(error.path == "/tmp/x")
        #expect((error.cause as? POSIXError)?.code.rawValue == errno)
    }

    @Test func posixMessageNamesTheActionAndTheSystemReason() {
        let error = CacheError.posix(ENOSPC, "cannot write entry")
        let reason = String(cString: strerror(ENOSPC))
        #expect(error.message == "cannot write entry: \(reason)")
        #expect(error.path == nil)
    }

    @Test func codesCompareByIdentityAndDescribeThemselves() {
        #expect(CacheError.Code.io == .io)
        #expect(CacheError.Code.io != .outOfSpace)
        #expect(CacheError.Code.wrongMasterKey != .invalidMasterKey)
        let all: [CacheError.Code] = [
            .invalidArgument, .wrongMasterKey, .invalidMasterKey, .corruptEntry, .io, .outOfSpace, .permissionDenied,
            .readOnly, .codec, .entryTooLarge, .crypto, .tierFailure, .unsupportedFormat, .protectedDataUnavailable,
        ]
        #expect(Set(all).count == 14)
        #expect(CacheError.Code.outOfSpace.description == "outOfSpace")
        #expect(CacheError.Code.unsupportedFormat.description == "unsupportedFormat")
    }

    @Test func descriptionShowsCodeMessageAndDetails() {
        #expect(CacheError(.io, "cannot read").description == "io: cannot read")
        let detailed = CacheError(.corruptEntry, "bad tag", path: "/c/ab", cause: CacheError(.crypto, "tag"))
        #expect(detailed.description == "corruptEntry: bad tag (path: /c/ab; cause: crypto: tag)")
        // A cause the message already quotes is not repeated
        let quoting = CacheError(
            .unavailable, "Redis: \(CacheError(.io, "refused"))", cause: CacheError(.io, "refused"))
        #expect(quoting.description == "unavailable: Redis: io: refused")
        #expect(detailed.localizedDescription == detailed.description)
    }

    @Test func tierFailuresAreListedInTheDescription() {
        let error = CacheError(
            .tierFailure, "write failed",
            tierFailures: [CacheError.TierFailure(index: 1, name: "disk", error: CacheError(.readOnly, "ro"))])
        #expect(error.description == "tierFailure: write failed (tier 1 (disk): readOnly: ro)")
        #expect(error.tierFailures.map(\.index) == [1])
    }

    @Test func recordsWhereItWasThrown() {
        let line = #line + 1
        let error = CacheError(.codec, "bad JSON")
        #expect(error.line == line)
        #expect(error.file.hasSuffix("CacheErrorTests.swift"))
    }

    @Test func canBeMatchedByCodeInACatch() throws {
        do {
            throw CacheError(.entryTooLarge, "too big")
        } catch let error as CacheError where error.code == .entryTooLarge {
            #expect(error.message == "too big")
        }
    }
}
