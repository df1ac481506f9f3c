import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Tags: a removal of one tag reaches exactly the entries that carry it, on a cache that removes by tag
// (`TagRemovingCache`: every Strata tier); another cache passes without a call.
extension ContractRun {
    func removeAllTaggedMissesOnlyThatTag() async throws {
        guard let tagRemoving = cache as? any TagRemovingCache<String, Data> else { return }
        let plain = Self.data("plain")
        try await set(plain, "plain")
        let keptTagged = try await setTagged(Self.data("other"), "other", tags: ["u"])
        let wasKept = try await setTagged(Self.data("tagged"), "tagged", tags: ["t", "u2"])
        if let wasKept {
            try expect(
                wasKept.tags == ["t", "u2"], "a tagged entry read back with tags \(wasKept.tags.sorted()), not [t, u2]")
        }

        try await step("removeAll(taggedWith: \"t\")") { try await tagRemoving.removeAll(taggedWith: "t") }

        try await expectMiss("tagged", "after removeAll(taggedWith: \"t\")")
        try await expectHit("plain", plain, "an untagged entry after removeAll(taggedWith: \"t\")")
        if keptTagged != nil {
            try await expectHit("other", Self.data("other"), "an entry tagged \"u\" after removeAll(taggedWith: \"t\")")
        }
    }

    /// Stores `value` with `tags` and reads it back: the entry, or `nil` when the tier keeps no tagged
    /// entries.
    private func setTagged(_ value: Data, _ key: String, tags: Set<String>) async throws -> CacheEntry<Data>? {
        try await step("setEntry(_:forKey: \(Self.describe(key))) with tags \(tags.sorted())") {
            try await cache.setEntry(CacheEntry(value: value, tags: tags), forKey: key)
        }
        return try await entry(key)
    }
}
