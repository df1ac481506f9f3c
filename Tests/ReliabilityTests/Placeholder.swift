// Replaced by the concurrency reliability tests once MemoryCache and MultiCache land.
