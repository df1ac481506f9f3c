// Stand-in for Apple's `Darwin` module, for the Darwin type-check (.ci/darwin-typecheck.sh) only.
//
// Where the signatures come from: the POSIX surface that Darwin and Glibc share is taken from this machine's
// Glibc (re-exported below), because Linux's Foundation re-exports Glibc and a second declaration of the same
// C function would be ambiguous. Only what Darwin has and Glibc lacks is declared here, written as Swift
// imports it from Apple's SDK headers, each with the Apple documentation page or SDK header it comes from.
// What this cannot model (a name both libraries declare with different C types, such as
// `posix_spawn_file_actions_t`, a pointer on Darwin and a struct in glibc) is kept under `#if os(Linux)` in
// Sources and listed in Docs/Platforms.md as "read against Apple's documentation only"; names that exist in
// glibc but not on Darwin are caught by .ci/availability-check.py (its `linux-only` list).
@_exported import Glibc

// MARK: - <string.h>

/// `memset_s` (C11 Annex K), which the optimizer may not remove.
/// https://developer.apple.com/library/archive/documentation/System/Conceptual/ManPages_iPhoneOS/man3/memset_s.3.html
/// (SDK: usr/include/string.h, `errno_t memset_s(void *s, rsize_t smax, int c, rsize_t n)`).
public func memset_s(_ __s: UnsafeMutableRawPointer!, _ __smax: Int, _ __c: Int32, _ __n: Int) -> Int32 {
    _ = memset(__s, __c, __n)
    return 0
}

// MARK: - <os/lock.h> (part of the Darwin module)

/// https://developer.apple.com/documentation/os/os_unfair_lock_s (a C struct: fixed layout, hence `@frozen`
/// now that the stand-ins are built with library evolution).
@frozen public struct os_unfair_lock_s {
    public var _os_unfair_lock_opaque: UInt32
    public init() { _os_unfair_lock_opaque = 0 }
    public init(_os_unfair_lock_opaque: UInt32) { self._os_unfair_lock_opaque = _os_unfair_lock_opaque }
}
/// https://developer.apple.com/documentation/os/os_unfair_lock
public typealias os_unfair_lock = os_unfair_lock_s
/// https://developer.apple.com/documentation/os/os_unfair_lock_t
public typealias os_unfair_lock_t = UnsafeMutablePointer<os_unfair_lock_s>
/// https://developer.apple.com/documentation/os/os_unfair_lock_lock(_:)
public func os_unfair_lock_lock(_ lock: os_unfair_lock_t) {}
/// https://developer.apple.com/documentation/os/os_unfair_lock_unlock(_:)
public func os_unfair_lock_unlock(_ lock: os_unfair_lock_t) {}
/// https://developer.apple.com/documentation/os/os_unfair_lock_trylock(_:)
public func os_unfair_lock_trylock(_ lock: os_unfair_lock_t) -> Bool { true }

// MARK: - <fcntl.h>

/// `F_FULLFSYNC`: flush the drive's cache to permanent storage.
/// https://developer.apple.com/library/archive/documentation/System/Conceptual/ManPages_iPhoneOS/man2/fcntl.2.html
/// (SDK: sys/fcntl.h, `#define F_FULLFSYNC 51`).
public var F_FULLFSYNC: Int32 { 51 }

/// `F_SETPROTECTIONCLASS`: give the open file or folder a Data Protection class (`fcntl(fd, F_SETPROTECTIONCLASS,
/// class)`), which acts on the descriptor and so never follows a name that was swapped for a link.
/// SDK: sys/fcntl.h, `#define F_SETPROTECTIONCLASS 64` (beside `F_GETPROTECTIONCLASS 63`); the class numbers
/// (`PROTECTION_CLASS_A`…`D`) live in xnu's private sys/content_protection.h, not in the SDK, so they are not
/// declared here (a stand-in must not accept more than the SDK): Strata spells them itself
/// (Sources/DiskCache/Internal/DataProtection.swift).
public var F_SETPROTECTIONCLASS: Int32 { 64 }

// MARK: - <sys/stat.h>

extension stat {
    /// Darwin's name for the modification time (`st_mtim` is glibc's).
    /// https://developer.apple.com/library/archive/documentation/System/Conceptual/ManPages_iPhoneOS/man2/stat.2.html
    public var st_mtimespec: timespec {
        get { st_mtim }
        set { st_mtim = newValue }
    }
    /// https://developer.apple.com/library/archive/documentation/System/Conceptual/ManPages_iPhoneOS/man2/stat.2.html
    public var st_atimespec: timespec {
        get { st_atim }
        set { st_atim = newValue }
    }
    /// Darwin's name for the status-change time (`st_ctim` is glibc's).
    /// https://developer.apple.com/library/archive/documentation/System/Conceptual/ManPages_iPhoneOS/man2/stat.2.html
    public var st_ctimespec: timespec {
        get { st_ctim }
        set { st_ctim = newValue }
    }
}

// MARK: - <crt_externs.h>

/// The process environment (Darwin has no `environ` symbol for Swift).
/// SDK: usr/include/crt_externs.h, `char ***_NSGetEnviron(void)`.
public func _NSGetEnviron() -> UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>! { nil }
