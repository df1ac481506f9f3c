// Stand-in for Apple's Security framework (and the few CoreFoundation types it re-exports), for the Darwin
// type-check (.ci/darwin-typecheck.sh) only. Each declaration copies the Swift signature on its page of
// Apple's documentation (https://developer.apple.com/documentation/security), cited beside it.
//
// One approximation: Linux has no CoreFoundation types for Swift, so `CFString` and `CFDictionary` are aliases
// of `NSString` and `NSDictionary`. Apple's toll-free bridging makes `[String: Any] as CFDictionary` and
// `kSecClass as String` compile there as they do here; the aliases would also accept NSString and NSDictionary
// methods, which Strata does not call on these values.
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
