import Foundation

/// A generic cache over `NSCache`, the way Swift code commonly wraps it: the key boxed in an `NSObject`
/// subclass that forwards `hash` and `isEqual`, the value boxed in a class.
///
/// It stands for what a Swift developer gets without Strata. On Linux, swift-corelibs-foundation's
/// NSCache is not an LRU (it keeps the oldest entries and drops each new one at the limit), which shows in the hit-ratio scenario.
final class NSCacheWrapper<Key: Hashable & Sendable, Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable is sound: the only stored property is an NSCache, which is documented as
    // safe to use from several threads at once, and the boxes it holds are immutable.
    private let storage = NSCache<BoxedKey, BoxedValue>()

    init(countLimit: Int) {
        storage.countLimit = countLimit
    }

    func value(forKey key: Key) -> Value? {
        storage.object(forKey: BoxedKey(key))?.value
    }

    func setValue(_ value: Value, forKey key: Key) {
        storage.setObject(BoxedValue(value), forKey: BoxedKey(key))
    }

    private final class BoxedKey: NSObject {
        let key: Key
        init(_ key: Key) { self.key = key }
        override var hash: Int { key.hashValue }
        override func isEqual(_ object: Any?) -> Bool {
            (object as? BoxedKey)?.key == key
        }
    }

    private final class BoxedValue {
        let value: Value
        init(_ value: Value) { self.value = value }
    }
}
