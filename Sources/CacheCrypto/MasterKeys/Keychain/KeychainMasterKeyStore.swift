#if canImport(Security)
import CacheCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Security

/// Keeps master keys in the Keychain on Apple platforms: one generic-password item per store.
///
/// The item's service is the master-key source's service and its account the store's name. It is readable after
/// the device's first unlock following a restart (`kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`), so
/// background work can open the cache while the device is locked, never leaves this device (not in backups,
/// not restored to another device) and is not synchronised through iCloud Keychain. On macOS the item goes
/// to the data-protection keychain (`kSecUseDataProtectionKeychain`), which needs a signed app with an
/// application identifier; unsigned command-line tools get `errSecMissingEntitlement` and should keep the
/// default key file.
///
/// Creation races are settled by the Keychain: the second `SecItemAdd` fails with `errSecDuplicateItem`, and
/// the loser reads the winner's key.
///
/// Thread safety: stateless; the Keychain calls may run on any thread.
package enum KeychainMasterKeyStore {
    /// Reads the key for `account`, or creates and stores a fresh random one.
    ///
    /// - Throws: `CacheError` `.protectedDataUnavailable` before the device's first unlock;
    ///   `.invalidMasterKey` when the stored item is not 32 bytes; `.io` for any other Keychain status.
    package static func loadOrCreate(service: String, account: String) throws -> MasterKey {
        for _ in 0..<3 {
            if let existing = try read(service: service, account: account) { return existing }
            let key = try MasterKey.random()
            if try add(key, service: service, account: account) { return key }
        }
        throw CacheError(
            .io, "the Keychain item for store '\(account)' keeps disappearing while it is being created")
    }

    private static func identity(service: String, account: String) -> [String: Any] {
        [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
            kSecUseDataProtectionKeychain as String: true,
        ]
    }

    private static func read(service: String, account: String) throws -> MasterKey? {
        var query = identity(service: service, account: account)
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess else { throw failure(status, "cannot read", account: account) }
        guard let bytes = result as? Data, bytes.count == MasterKey.byteCount else {
            throw CacheError(
                .invalidMasterKey,
                "the Keychain item for store '\(account)' (service '\(service)') does not hold a "
                    + "\(MasterKey.byteCount)-byte key; delete it to let Strata create a new one (the cache "
                    + "starts empty)")
        }
        return try MasterKey(bytes: bytes)
    }

    /// Adds the item; `false` when another creator added it first.
    private static func add(_ key: MasterKey, service: String, account: String) throws -> Bool {
        var attributes = identity(service: service, account: account)
        attributes[kSecValueData as String] = key.dataForDerivation
        attributes[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        attributes[kSecAttrSynchronizable as String] = false
        let status = SecItemAdd(attributes as CFDictionary, nil)
        if status == errSecDuplicateItem { return false }
        guard status == errSecSuccess else { throw failure(status, "cannot store", account: account) }
        return true
    }

    private static func failure(_ status: OSStatus, _ verb: String, account: String) -> CacheError {
        let reason = SecCopyErrorMessageString(status, nil).map { $0 as String } ?? "OSStatus \(status)"
        if status == errSecInteractionNotAllowed {
            return CacheError(
                .protectedDataUnavailable,
                "\(verb) the master key of store '\(account)' in the Keychain: the device has not been unlocked "
                    + "since it restarted; open the cache again after the first unlock (\(reason))")
        }
        return CacheError(.io, "\(verb) the master key of store '\(account)' in the Keychain: \(reason)")
    }
}
#endif  // canImport(Security): Linux has no Keychain (KeychainKeyStore_Unavailable.swift)
