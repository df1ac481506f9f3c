import CacheCore
import CacheTesting
import Foundation

/// A deliberately broken cache: each ``Flaw`` breaks one rule of the contract, so the tests can show
/// that ``CacheContract`` notices.
final class FlawedCache: TagRemovingCache {
    enum Flaw: String, CaseIterable, Sendable, CustomStringConvertible {
        case ignoresInjectedClock
        case missesEverything
        case dropsExpiry
        case emptyValueIsMiss
        case keepsFirstValue
        case removeEntryRemovesAll
        case removeAllDoesNothing
        case expiresOneTickLate
        case storesExpiredEntries
        case slidingExpiry
        case comparesKeysByScalars
        case foldsCase
        case truncatesKeys
        case stripsPathCharacters
        case forgetsAfterFiftyKeys
        case keepsExpiredEntriesWhenRead

        var description: String { rawValue }
    }

    let flaw: Flaw
    let clock: any CacheClock
    private let entries = Locked<[String: CacheEntry<Data>]>([:])

    init(_ flaw: Flaw, clock: ManualClock) {
        self.flaw = flaw
        self.clock = flaw == .ignoresInjectedClock ? ManualClock(start: Date(timeIntervalSince1970: 0)) : clock
    }

    private func storageKey(_ key: String) -> String {
        switch flaw {
        case .comparesKeysByScalars: key.unicodeScalars.map { String($0.value) }.joined(separator: ",")
        case .foldsCase: key.lowercased()
        case .truncatesKeys: String(key.prefix(100))
        case .stripsPathCharacters: key.filter { !"./\\".contains($0) }
        default: key
        }
    }

    private func isExpired(_ entry: CacheEntry<Data>, at now: Date) -> Bool {
        guard let expiresAt = entry.expiresAt else { return false }
        return flaw == .expiresOneTickLate ? now > expiresAt : now >= expiresAt
    }

    func entry(forKey key: String) async throws -> CacheEntry<Data>? {
        let now = clock.now
        let flaw = self.flaw
        let key = storageKey(key)
        return entries.withLock { entries -> CacheEntry<Data>? in
            guard flaw != .missesEverything, var entry = entries[key] else { return nil }
            if isExpired(entry, at: now) {
                if flaw != .keepsExpiredEntriesWhenRead { entries[key] = nil }
                return nil
            }
            if flaw == .emptyValueIsMiss, entry.value.isEmpty { return nil }
            if flaw == .slidingExpiry, let expiresAt = entry.expiresAt {
                entry.expiresAt = expiresAt.addingTimeInterval(1)
                entries[key] = entry
            }
            return entry
        }
    }

    func setEntry(_ entry: CacheEntry<Data>, forKey key: String) async throws {
        let now = clock.now
        let flaw = self.flaw
        let key = storageKey(key)
        entries.withLock { entries in
            var entry = entry
            if flaw == .dropsExpiry { entry.expiresAt = nil }
            if flaw == .keepsFirstValue, entries[key] != nil { return }
            if flaw == .forgetsAfterFiftyKeys, entries.count >= 50, entries[key] == nil { return }
            if isExpired(entry, at: now), flaw != .storesExpiredEntries {
                entries[key] = nil
            } else {
                entries[key] = entry
            }
        }
    }

    func value(forKey key: String) async throws -> Data? { try await valueThroughEntry(forKey: key) }

    func setValue(_ value: Data, forKey key: String, expiry: Expiry? = nil) async throws {
        try await setValueThroughEntry(value, forKey: key, expiry: expiry)
    }

    func removeEntry(forKey key: String) async throws {
        let flaw = self.flaw
        let key = storageKey(key)
        entries.withLock { entries in
            if flaw == .removeEntryRemovesAll { entries.removeAll() } else { entries[key] = nil }
        }
    }

    func removeAll() async throws {
        guard flaw != .removeAllDoesNothing else { return }
        entries.withLock { $0.removeAll() }
    }

    func removeAll(taggedWith tag: String) async throws {
        entries.withLock { entries in entries = entries.filter { !$0.value.tags.contains(tag) } }
    }
}
