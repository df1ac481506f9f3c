#if !canImport(Security)
import CacheCore

/// The Keychain exists on Apple platforms only; elsewhere a Keychain master-key source is a clear error.
package enum KeychainMasterKeyStore {
    /// Always throws.
    ///
    /// - Throws: `CacheError` `.invalidArgument` naming the master-key sources that work here.
    package static func loadOrCreate(service: String, account: String) throws -> MasterKey {
        throw CacheError(
            .invalidArgument,
            "store '\(account)' asks for its master key from the Keychain, which exists on Apple platforms "
                + "only; use the default key file, a key file or a key of your own here")
    }
}
#endif  // !canImport(Security): Apple platforms use KeychainMasterKeyStore.swift
