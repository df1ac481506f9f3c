// Members that Apple's Dispatch and Foundation have and Linux's lack, for the Darwin type-check
// (.ci/darwin-typecheck.sh) only. Apple's modules are called Dispatch and Foundation, which this machine's
// toolchain already provides, so these members cannot live in stand-ins of those names: the type-check
// imports this module implicitly into every file (`-import-module`), which is what importing Apple's
// Dispatch or Foundation would bring. Each declaration copies its Apple documentation page, cited beside it.
import Dispatch
import Foundation

// Apple's Foundation re-exports Darwin (Linux's re-exports Glibc), so a file that imports only Foundation
// sees Darwin's C functions there, `memset_s` for one.
@_exported import Darwin

// MARK: - Dispatch (https://developer.apple.com/documentation/dispatch)

extension DispatchSource {
    /// https://developer.apple.com/documentation/dispatch/dispatchsource/memorypressureevent
    public struct MemoryPressureEvent: OptionSet {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// https://developer.apple.com/documentation/dispatch/dispatchsource/memorypressureevent/normal
        public static let normal = MemoryPressureEvent(rawValue: 0x1)
        /// https://developer.apple.com/documentation/dispatch/dispatchsource/memorypressureevent/warning
        public static let warning = MemoryPressureEvent(rawValue: 0x2)
        /// https://developer.apple.com/documentation/dispatch/dispatchsource/memorypressureevent/critical
        public static let critical = MemoryPressureEvent(rawValue: 0x4)
        /// https://developer.apple.com/documentation/dispatch/dispatchsource/memorypressureevent/all
        public static let all: MemoryPressureEvent = [.normal, .warning, .critical]
    }

    /// https://developer.apple.com/documentation/dispatch/dispatchsource/makememorypressuresource(eventmask:queue:)
    public class func makeMemoryPressureSource(
        eventMask: DispatchSource.MemoryPressureEvent, queue: DispatchQueue? = nil
    ) -> any DispatchSourceMemoryPressure {
        StandInMemoryPressureSource()
    }
}

/// https://developer.apple.com/documentation/dispatch/dispatchsourcememorypressure
public protocol DispatchSourceMemoryPressure: DispatchSourceProtocol {
    /// https://developer.apple.com/documentation/dispatch/dispatchsourcememorypressure/data
    var data: DispatchSource.MemoryPressureEvent { get }
    /// https://developer.apple.com/documentation/dispatch/dispatchsourcememorypressure/mask
    var mask: DispatchSource.MemoryPressureEvent { get }
}

// Never called: only the declaration above is part of the stand-in.
private final class StandInMemoryPressureSource {}
extension StandInMemoryPressureSource: DispatchSourceMemoryPressure {
    var data: DispatchSource.MemoryPressureEvent { [] }
    var mask: DispatchSource.MemoryPressureEvent { [] }
    func setEventHandler(qos: DispatchQoS, flags: DispatchWorkItemFlags, handler: DispatchSourceHandler?) {}
    func setEventHandler(handler: DispatchWorkItem) {}
    func setCancelHandler(qos: DispatchQoS, flags: DispatchWorkItemFlags, handler: DispatchSourceHandler?) {}
    func setCancelHandler(handler: DispatchWorkItem) {}
    func setRegistrationHandler(qos: DispatchQoS, flags: DispatchWorkItemFlags, handler: DispatchSourceHandler?) {}
    func setRegistrationHandler(handler: DispatchWorkItem) {}
    func activate() {}
    func cancel() {}
    func resume() {}
    func suspend() {}
    var handle: UInt { 0 }
    var isCancelled: Bool { false }
}
