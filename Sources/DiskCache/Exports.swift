// Importing a tier is enough to use its API: `Cache`, `CacheEntry`, `Expiry`, `CacheError` and the
// clocks come with it.
@_exported import CacheCore
