#if !canImport(Darwin) && canImport(Glibc)
import Glibc

/// The glibc extensions ``ChildProcess`` needs that Swift's Glibc module does not import (they are declared
/// only under `_GNU_SOURCE`/`__USE_MISC`): looked up once by name in the already-loaded libc.
enum GlibcExtensions {
    typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    typealias AddChangeDirectory =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
    typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32

    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34).
    static let addCloseFrom: AddCloseFrom = symbol("posix_spawn_file_actions_addclosefrom_np")
    /// `posix_spawn_file_actions_addchdir_np` (glibc 2.29).
    static let addChangeDirectory: AddChangeDirectory = symbol("posix_spawn_file_actions_addchdir_np")
    /// `pipe2` (glibc 2.9).
    static let pipe2: Pipe2 = symbol("pipe2")

    /// A glibc too old for these is not one the tests support: stopping names the missing function.
    private static func symbol<Function>(_ name: String) -> Function {
        // RTLD_DEFAULT is the null handle in glibc.
        guard let address = dlsym(nil, name) else { fatalError("glibc has no \(name) (2.34 or later needed)") }
        return unsafeBitCast(address, to: Function.self)
    }
}
#endif
