import CacheCore
