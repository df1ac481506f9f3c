import CacheCore
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension CacheErrorTests {
    @Test(arguments: [true, false])
    func permissionErrorIsProtectedDataOnlyWhereDataProtectionApplies(_ dataProtection: Bool) {
        let code = CacheError.Code(errno: EPERM, permissionErrorMeansProtectedData: dataProtection)
        #expect(code == (dataProtection ? .protectedDataUnavailable : .permissionDenied))
        // The other codes read the same on every platform
        #expect(CacheError.Code(errno: EACCES, permissionErrorMeansProtectedData: dataProtection) == .permissionDenied)
        #expect(CacheError.Code(errno: EROFS, permissionErrorMeansProtectedData: dataProtection) == .readOnly)
        #expect(CacheError.Code(errno: ENOSPC, permissionErrorMeansProtectedData: dataProtection) == .outOfSpace)
        #expect(CacheError.Code(errno: EIO, permissionErrorMeansProtectedData: dataProtection) == .io)
    }

    @Test func onlyTheIOSFamilyReadsPermissionErrorsAsDataProtection() {
        #if os(macOS) || os(Linux)
        #expect(CacheError.permissionErrorMeansProtectedData == false)
        #expect(CacheError.posix(EPERM, "cannot open").code == .permissionDenied)
        #else
        #expect(CacheError.permissionErrorMeansProtectedData == true)
        #expect(CacheError.posix(EPERM, "cannot open").code == .protectedDataUnavailable)
        #endif
        #expect(CacheError.Code.protectedDataUnavailable.description == "protectedDataUnavailable")
    }
}
