import Foundation
import Testing

/// The default store and its default key file come from one home folder (issue 14, defect 1).
@Suite(.serialized)
struct DefaultLocationTests {
    @Test func theDefaultStoreAndItsKeyFileLiveUnderHomeWhenNoXDGFolderIsSet() throws {
        // Given only HOME (the XDG variables set to relative paths, which the specification says to ignore)
        let harness = try StrataHarness()
        let home = harness.path("home")
        let environment = ["HOME": home, "XDG_DATA_HOME": "", "XDG_CACHE_HOME": ""]

        // When a value is stored and read back in the default store, without STRATA_MASTER_KEY
        let stored = try harness.run(
            ["set", "greeting", "hello"], key: .some(nil), extraEnvironment: environment, usesStore: false)
        let read = try harness.run(
            ["get", "greeting"], key: .some(nil), extraEnvironment: environment, usesStore: false)

        // Then both the store and the key file are under that HOME, and the store opens with that key
        #expect(stored.status == 0)
        #expect(read.status == 0)
        #expect(read.outputText == "hello")
        #expect(FileManager.default.fileExists(atPath: home + "/.cache/Strata/strata/store.check"))
        #expect(FileManager.default.fileExists(atPath: home + "/.local/share/strata/keys/strata.key"))
    }
}
