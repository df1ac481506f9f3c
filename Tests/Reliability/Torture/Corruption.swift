import CacheCore
import DiskCache
import Foundation
import StrataTestSupport

/// Scenario 2: damaged, swapped and foreign files never yield another value or a crash; each bad entry file
/// is removed and counted; every other key stays readable.
///
/// The store's entry file for each key is learnt by writing keys one at a time and watching which file
/// appears, so the harness needs no knowledge of the naming scheme. Each round damages one or two entry
/// files (or drops a foreign file), reads the damaged keys through the open cache or through a freshly
/// opened one, checks the verdict and that a bad file is gone, then rewrites the damaged keys.
enum Corruption {
    enum Kind: String, CaseIterable {
        case byteFlip, truncation, zeroLength, appendedGarbage, swap, foreignEntryName, foreignOtherName
    }

    static func run(_ options: Options) throws -> Int32 {
        try Scenario.run("corruption", options, defaultKeys: 64, damageAndRead)
    }

    /// The rounds of damage and reads, on the scenario's store; failures go to its report.
    private static func damageAndRead(_ scenario: Scenario, _ generator: inout SplitMix64) throws {
        let (report, keyCount, directory) = (scenario.report, scenario.keyCount, scenario.store)
        let mutations = try scenario.options.int("mutations", default: 2000)
        let events = EventCounter()
        var cache = try Store.open(directory, observer: events.observer)

        // Given: every key written once, and the file that holds it.
        var versions: [String: UInt64] = [:]
        var paths: [String: URL] = [:]
        for index in 0..<keyCount {
            let key = Store.key(index)
            let before = Set(Store.files(under: directory).keys)
            try write(key, version: 1, to: cache, versions: &versions)
            let added = Set(Store.files(under: directory).keys).subtracting(before).filter(Store.isEntry)
            guard added.count == 1, let relative = added.first else {
                throw HarnessError("writing \(key) added \(added.sorted()); cannot tell its entry file")
            }
            paths[key] = directory.appendingPathComponent(relative)
        }
        let metadataFiles = Set(Store.files(under: directory).keys).subtracting(
            paths.values.map { String($0.path.dropFirst(directory.resolvingSymlinksInPath().path.count + 1)) })
        report.record("metadata_files", metadataFiles.sorted().joined(separator: ","))

        var applied: [Kind: Int] = [:]
        var wrong = 0
        var errors = 0
        var missesAfterDamage = 0
        var rightAfterDamage = 0
        var badFilesLeft = 0
        var collateralMisses = 0
        var foreignRemovedByVerify = 0
        var foreignLeftByVerify = 0
        var otherNamesLeft = 0
        var reads = 0
        let keys = (0..<keyCount).map(Store.key)

        func readAndJudge(_ key: String, through reader: DiskCache<String, Data>, damaged: Bool) {
            reads += 1
            do {
                guard let value = try reader.value(forKey: key) else {
                    if damaged {
                        missesAfterDamage += 1
                        if let path = paths[key], FileManager.default.fileExists(atPath: path.path) {
                            badFilesLeft += 1
                            report.fail("\(key): damaged file still present after a miss: \(path.lastPathComponent)")
                        }
                    } else {
                        collateralMisses += 1
                        report.fail("\(key): undamaged key missed")
                    }
                    return
                }
                switch Payload.verify(value, expectedKey: key) {
                case .valid(let version) where version == versions[key]:
                    if damaged { rightAfterDamage += 1 }
                case .valid(let version):
                    wrong += 1
                    report.fail("\(key): version \(version) returned, current is \(versions[key] ?? 0)")
                case .invalid(let why):
                    wrong += 1
                    report.fail("\(key): wrong value: \(why)")
                }
            } catch {
                errors += 1
                report.fail("\(key): read threw \(error)")
            }
        }

        for round in 0..<mutations {
            let kind = Kind.allCases.randomElement(using: &generator) ?? .byteFlip
            applied[kind, default: 0] += 1
            let first = keys.randomElement(using: &generator) ?? keys[0]
            var damagedKeys: [String] = [first]
            guard let firstPath = paths[first] else { continue }
            var foreign: URL?
            switch kind {
            case .byteFlip:
                var bytes = [UInt8](try Data(contentsOf: firstPath))
                if bytes.isEmpty { bytes = [0] }
                let offset = Int.random(in: 0..<bytes.count, using: &generator)
                bytes[offset] ^= UInt8.random(in: 1...255, using: &generator)
                try Data(bytes).write(to: firstPath)
            case .truncation:
                let bytes = try Data(contentsOf: firstPath)
                try bytes.prefix(Int.random(in: 0..<max(bytes.count, 1), using: &generator)).write(to: firstPath)
            case .zeroLength:
                try Data().write(to: firstPath)
            case .appendedGarbage:
                let garbage = Data(
                    (0..<Int.random(in: 1...64, using: &generator)).map { _ in UInt8.random(in: 0...255) })
                try (try Data(contentsOf: firstPath) + garbage).write(to: firstPath)
            case .swap:
                let second = keys.filter { $0 != first }.randomElement(using: &generator) ?? first
                guard let secondPath = paths[second] else { continue }
                let (a, b) = (try Data(contentsOf: firstPath), try Data(contentsOf: secondPath))
                try b.write(to: firstPath)
                try a.write(to: secondPath)
                damagedKeys.append(second)
            case .foreignEntryName, .foreignOtherName:
                damagedKeys = []
                let name: String
                if kind == .foreignEntryName {
                    // A name a real entry could have (64 hex digits starting with its fan-out folder's two),
                    // so the cache cannot tell it from an entry by its name.
                    let folder = firstPath.deletingLastPathComponent().lastPathComponent
                    let digits = Array("0123456789abcdef")
                    name =
                        folder
                        + String((0..<(64 - folder.count)).map { _ in digits.randomElement(using: &generator) ?? "0" })
                } else {
                    name = "foreign-\(round).bin"
                }
                let url = firstPath.deletingLastPathComponent().appendingPathComponent(name)
                let size = Int.random(in: 0...4096, using: &generator)
                try Data((0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }).write(to: url)
                foreign = url
            }

            // When: the damaged keys are read, through the open cache or a freshly opened one.
            let reader = round % 2 == 0 ? cache : try Store.open(directory, observer: events.observer)
            for key in damagedKeys { readAndJudge(key, through: reader, damaged: true) }
            if let foreign {
                for _ in 0..<4 {
                    readAndJudge(keys.randomElement(using: &generator) ?? first, through: reader, damaged: false)
                }
                _ = try reader.verify()
                if FileManager.default.fileExists(atPath: foreign.path) {
                    foreignLeftByVerify += 1
                    if kind == .foreignOtherName { otherNamesLeft += 1 }
                    if kind == .foreignEntryName {
                        report.fail("foreign file with an entry-like name left by verify: \(foreign.lastPathComponent)")
                    }
                    try? FileManager.default.removeItem(at: foreign)
                } else {
                    foreignRemovedByVerify += 1
                }
            }
            // Then: rewrite the damaged keys so the next round starts from a whole store.
            for key in damagedKeys { try write(key, version: (versions[key] ?? 0) + 1, to: cache, versions: &versions) }
            if round % 100 == 99 {
                cache = try Store.open(directory, observer: events.observer)
                for key in keys { readAndJudge(key, through: cache, damaged: false) }
            }
        }

        // The key-check record: damage must give a typed error on open, delete nothing, and once the
        // record is restored every key must read back.
        let checkRecord = directory.appendingPathComponent("store.check")
        var checkRecordErrors: [String: Int] = [:]
        if let original = try? Data(contentsOf: checkRecord), !original.isEmpty {
            for trial in 0..<40 {
                var damaged = [UInt8](original)
                if trial % 4 == 3 {
                    damaged = Array(damaged.prefix(Int.random(in: 0..<damaged.count, using: &generator)))
                } else {
                    damaged[Int.random(in: 0..<damaged.count, using: &generator)] ^= UInt8.random(
                        in: 1...255, using: &generator)
                }
                try Data(damaged).write(to: checkRecord)
                let filesBefore = Store.files(under: directory)
                do {
                    _ = try Store.open(directory, observer: events.observer)
                    checkRecordErrors["opened", default: 0] += 1
                    report.fail("a damaged key-check record (trial \(trial)) opened without an error")
                } catch let error as CacheError {
                    checkRecordErrors[error.code.description, default: 0] += 1
                } catch {
                    checkRecordErrors["untyped", default: 0] += 1
                    report.fail("a damaged key-check record gave an untyped error: \(error)")
                }
                let lost = Set(filesBefore.keys).subtracting(Store.files(under: directory).keys)
                report.expect(lost.isEmpty, "opening with a damaged key-check record deleted \(lost.sorted())")
            }
            try original.write(to: checkRecord)
            cache = try Store.open(directory, observer: events.observer)
        }
        report.record(
            "key_check_damage_outcomes",
            checkRecordErrors.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ","))

        for key in keys { readAndJudge(key, through: cache, damaged: false) }
        let finalVerify = try cache.verify()
        let leftovers = Store.files(under: directory).keys.filter(Store.isTemporary)

        report.record("mutations", mutations)
        for kind in Kind.allCases { report.record("applied.\(kind.rawValue)", applied[kind] ?? 0) }
        report.record("reads", reads)
        report.record("wrong_values", wrong)
        report.record("read_errors", errors)
        report.record("damaged_reads_miss", missesAfterDamage)
        report.record("damaged_reads_right_value", rightAfterDamage)
        report.record("bad_files_left_after_miss", badFilesLeft)
        report.record("undamaged_keys_missed", collateralMisses)
        report.record("observer_corrupt_entry_removed", events.count(.corruptEntryRemoved))
        report.record("statistics_corrupt_entries_removed", cache.statistics.corruptEntriesRemoved)
        report.record("foreign_files_removed_by_verify", foreignRemovedByVerify)
        report.record("foreign_files_left_by_verify", foreignLeftByVerify)
        report.record("foreign_files_left_by_verify_not_entry_named", otherNamesLeft)
        report.record("final_verify_checked", finalVerify.checked)
        report.record("final_verify_removed", finalVerify.removed.count)
        report.record("temp_files_left", leftovers.count)
        report.record(
            "observer_events",
            events.all.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ","))
        report.expect(wrong == 0, "\(wrong) wrong values")
        report.expect(errors == 0, "\(errors) reads threw")
        report.expect(badFilesLeft == 0, "\(badFilesLeft) bad files left")
        report.expect(collateralMisses == 0, "\(collateralMisses) undamaged keys missed")
        report.expect(finalVerify.removed.isEmpty, "final verify removed \(finalVerify.removed)")
        report.expect(finalVerify.checked == keyCount, "final verify checked \(finalVerify.checked) of \(keyCount)")
        report.expect(
            events.count(.corruptEntryRemoved) >= missesAfterDamage,
            "\(missesAfterDamage) damaged files removed but only \(events.count(.corruptEntryRemoved)) reported")
        report.expect(leftovers.isEmpty, "temporary files left: \(leftovers)")
    }

    private static func write(
        _ key: String, version: UInt64, to cache: DiskCache<String, Data>, versions: inout [String: UInt64]
    ) throws {
        let value = Payload.make(
            key: key, version: version, length: Payload.length(key: key, version: version, maximum: 2048))
        try cache.setValue(value, forKey: key, expiry: .never)
        versions[key] = version
    }
}
