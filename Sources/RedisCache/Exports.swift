// Importing the tier is enough to use its API: `Cache`, `CacheEntry`, `Expiry`, `CacheError` and the
// clocks come with it, and so do `MasterKeySource` and `MasterKey` from CacheCrypto, which a
// `RedisCacheConfiguration` names.
@_exported import CacheCore
@_exported import CacheCrypto
