// The umbrella module: `import Strata` brings every cache module, the way swift-collections'
// `Collections` brings its collection modules. It holds no code of its own.
@_exported import CacheCore
@_exported import CacheCrypto
@_exported import DiskCache
@_exported import MemoryCache
@_exported import MultiCache
@_exported import RedisCache
