// Stand-in for Apple's Security framework (and the few CoreFoundation types it re-exports), for the Darwin
// type-check (.ci/darwin-typecheck.sh) only. Each declaration copies the Swift signature on its page of
// Apple's documentation (https://developer.apple.com/documentation/security), cited beside it.
//
// One approximation: Linux has no CoreFoundation types for Swift, so `CFString` and `CFDictionary` are aliases
// of `NSString` and `NSDictionary`. Apple's toll-free bridging makes `[String: Any] as CFDictionary` and
// `kSecClass as String` compile there as they do here; the aliases would also accept NSString and NSDictionary
// methods, which Strata does not call on these values.
import Dispatch
import Foundation

/// https://developer.apple.com/documentation/kernel/osstatus (MacTypes.h: `typedef SInt32 OSStatus`)
public typealias OSStatus = Int32
/// https://developer.apple.com/documentation/corefoundation/cfstring
public typealias CFString = NSString
/// https://developer.apple.com/documentation/corefoundation/cfdictionary
public typealias CFDictionary = NSDictionary
/// https://developer.apple.com/documentation/corefoundation/cftyperef
public typealias CFTypeRef = AnyObject

// MARK: - Randomization Services

/// https://developer.apple.com/documentation/security/secrandomref
public typealias SecRandomRef = OpaquePointer
/// https://developer.apple.com/documentation/security/ksecrandomdefault
public let kSecRandomDefault: SecRandomRef? = nil
/// https://developer.apple.com/documentation/security/secrandomcopybytes(_:_:_:)
public func SecRandomCopyBytes(_ rnd: SecRandomRef?, _ count: Int, _ bytes: UnsafeMutableRawPointer) -> Int32 { 0 }

// MARK: - Result codes (https://developer.apple.com/documentation/security/security-framework-result-codes)

/// https://developer.apple.com/documentation/security/errsecsuccess
public var errSecSuccess: OSStatus { 0 }
/// https://developer.apple.com/documentation/security/errsecallocate
public var errSecAllocate: OSStatus { -108 }
/// https://developer.apple.com/documentation/security/errsecitemnotfound
public var errSecItemNotFound: OSStatus { -25300 }
/// https://developer.apple.com/documentation/security/errsecduplicateitem
public var errSecDuplicateItem: OSStatus { -25299 }
/// https://developer.apple.com/documentation/security/errsecinteractionnotallowed
public var errSecInteractionNotAllowed: OSStatus { -25308 }
/// https://developer.apple.com/documentation/security/errsecmissingentitlement
public var errSecMissingEntitlement: OSStatus { -34018 }

/// https://developer.apple.com/documentation/security/seccopyerrormessagestring(_:_:)
/// (returns `CFString?`; the `reserved` argument must be `nil`).
public func SecCopyErrorMessageString(_ status: OSStatus, _ reserved: UnsafeMutableRawPointer?) -> CFString? { nil }

// MARK: - Keychain items (https://developer.apple.com/documentation/security/keychain-items)

/// https://developer.apple.com/documentation/security/secitemadd(_:_:)
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus { 0 }
/// https://developer.apple.com/documentation/security/secitemcopymatching(_:_:)
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    0
}
/// https://developer.apple.com/documentation/security/secitemupdate(_:_:)
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus { 0 }
/// https://developer.apple.com/documentation/security/secitemdelete(_:)
public func SecItemDelete(_ query: CFDictionary) -> OSStatus { 0 }

/// https://developer.apple.com/documentation/security/ksecclass
public let kSecClass: CFString = "class"
/// https://developer.apple.com/documentation/security/ksecclassgenericpassword
public let kSecClassGenericPassword: CFString = "genp"
/// https://developer.apple.com/documentation/security/ksecattrservice
public let kSecAttrService: CFString = "svce"
/// https://developer.apple.com/documentation/security/ksecattraccount
public let kSecAttrAccount: CFString = "acct"
/// https://developer.apple.com/documentation/security/ksecattrlabel
public let kSecAttrLabel: CFString = "labl"
/// https://developer.apple.com/documentation/security/ksecattraccessible
public let kSecAttrAccessible: CFString = "pdmn"
/// https://developer.apple.com/documentation/security/ksecattraccessibleafterfirstunlockthisdeviceonly
public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString = "cku"
/// https://developer.apple.com/documentation/security/ksecattrsynchronizable
public let kSecAttrSynchronizable: CFString = "sync"
/// https://developer.apple.com/documentation/security/ksecusedataprotectionkeychain (macOS 10.15)
public let kSecUseDataProtectionKeychain: CFString = "nleg"
/// https://developer.apple.com/documentation/security/ksecvaluedata
public let kSecValueData: CFString = "v_Data"
/// https://developer.apple.com/documentation/security/ksecreturndata
public let kSecReturnData: CFString = "r_Data"
/// https://developer.apple.com/documentation/security/ksecmatchlimit
public let kSecMatchLimit: CFString = "m_Limit"
/// https://developer.apple.com/documentation/security/ksecmatchlimitone
public let kSecMatchLimitOne: CFString = "m_LimitOne"

// MARK: - CoreFoundation types the trust API takes (same approximation as CFString above: Linux's NS types)

/// https://developer.apple.com/documentation/corefoundation/cfarray
public typealias CFArray = NSArray
/// https://developer.apple.com/documentation/corefoundation/cfdata
public typealias CFData = NSData
/// https://developer.apple.com/documentation/corefoundation/cferror (Swift gives `CFError` `Error` conformance;
/// `NSError` has it here).
public typealias CFError = NSError
/// https://developer.apple.com/documentation/corefoundation/cfallocator
public final class CFAllocator {}

// MARK: - Certificates and trust (https://developer.apple.com/documentation/security/certificate-key-and-trust-services)
// Apple's pages list no `Sendable` conformance for these CF classes; none is declared here.

/// https://developer.apple.com/documentation/security/seccertificate
public final class SecCertificate {}
/// https://developer.apple.com/documentation/security/sectrust
public final class SecTrust {}
/// https://developer.apple.com/documentation/security/secpolicy
public final class SecPolicy {}

/// https://developer.apple.com/documentation/security/seccertificatecreatewithdata(_:_:) (DER bytes; `nil` when
/// they are not a certificate).
public func SecCertificateCreateWithData(_ allocator: CFAllocator?, _ data: CFData) -> SecCertificate? { nil }
/// https://developer.apple.com/documentation/security/secpolicycreatessl(_:_:)
public func SecPolicyCreateSSL(_ server: Bool, _ hostname: CFString?) -> SecPolicy { SecPolicy() }
/// https://developer.apple.com/documentation/security/sectrustsetpolicies(_:_:)
public func SecTrustSetPolicies(_ trust: SecTrust, _ policies: CFTypeRef) -> OSStatus { 0 }
/// https://developer.apple.com/documentation/security/sectrustsetanchorcertificates(_:_:)
public func SecTrustSetAnchorCertificates(_ trust: SecTrust, _ anchorCertificates: CFArray) -> OSStatus { 0 }
/// https://developer.apple.com/documentation/security/sectrustsetanchorcertificatesonly(_:_:)
public func SecTrustSetAnchorCertificatesOnly(_ trust: SecTrust, _ anchorCertificatesOnly: Bool) -> OSStatus { 0 }
/// https://developer.apple.com/documentation/security/sectrustevaluatewitherror(_:_:)
public func SecTrustEvaluateWithError(_ trust: SecTrust, _ error: UnsafeMutablePointer<CFError?>?) -> Bool { false }

// MARK: - Security protocol options for Network.framework (SecProtocolOptions.h, SecProtocolTypes.h)

/// https://developer.apple.com/documentation/security/os_sec_protocol_options
public protocol OS_sec_protocol_options: NSObjectProtocol {}
/// https://developer.apple.com/documentation/security/sec_protocol_options_t
public typealias sec_protocol_options_t = any OS_sec_protocol_options
/// https://developer.apple.com/documentation/security/os_sec_protocol_metadata
public protocol OS_sec_protocol_metadata: NSObjectProtocol {}
/// https://developer.apple.com/documentation/security/sec_protocol_metadata_t
public typealias sec_protocol_metadata_t = any OS_sec_protocol_metadata
/// https://developer.apple.com/documentation/security/os_sec_trust
public protocol OS_sec_trust: NSObjectProtocol {}
/// https://developer.apple.com/documentation/security/sec_trust_t
public typealias sec_trust_t = any OS_sec_trust

/// https://developer.apple.com/documentation/security/sec_protocol_verify_complete_t (not `@Sendable` there)
public typealias sec_protocol_verify_complete_t = (Bool) -> Void
/// https://developer.apple.com/documentation/security/sec_protocol_verify_t (not `@Sendable` there)
public typealias sec_protocol_verify_t = (sec_protocol_metadata_t, sec_trust_t, @escaping sec_protocol_verify_complete_t) ->
    Void

/// https://developer.apple.com/documentation/security/tls_protocol_version_t (SecProtocolTypes.h,
/// `typedef CF_ENUM(uint16_t, tls_protocol_version_t)`); only the cases Strata names.
public enum tls_protocol_version_t: UInt16 {
    /// https://developer.apple.com/documentation/security/tls_protocol_version_t/tlsv12
    case TLSv12 = 0x0303
    /// https://developer.apple.com/documentation/security/tls_protocol_version_t/tlsv13
    case TLSv13 = 0x0304
}

/// https://developer.apple.com/documentation/security/sec_protocol_options_set_verify_block(_:_:_:)
public func sec_protocol_options_set_verify_block(
    _ options: sec_protocol_options_t, _ verify_block: @escaping sec_protocol_verify_t,
    _ verify_block_queue: DispatchQueue
) {}
/// https://developer.apple.com/documentation/security/sec_protocol_options_set_tls_server_name(_:_:)
public func sec_protocol_options_set_tls_server_name(
    _ options: sec_protocol_options_t, _ server_name: UnsafePointer<CChar>
) {}
/// https://developer.apple.com/documentation/security/sec_protocol_options_set_min_tls_protocol_version(_:_:)
/// (macOS 10.15, iOS 13, tvOS 13, watchOS 6: below Strata's minimums).
public func sec_protocol_options_set_min_tls_protocol_version(
    _ options: sec_protocol_options_t, _ version: tls_protocol_version_t
) {}
/// https://developer.apple.com/documentation/security/sec_trust_copy_ref(_:) (a +1 reference:
/// `takeRetainedValue()`).
public func sec_trust_copy_ref(_ trust: sec_trust_t) -> Unmanaged<SecTrust> { Unmanaged.passRetained(SecTrust()) }
