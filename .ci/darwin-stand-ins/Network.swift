// Stand-in for Apple's Network framework, for the Darwin type-check (.ci/darwin-typecheck.sh) only: nothing
// connects here. Each declaration copies the Swift signature on its page of Apple's documentation
// (https://developer.apple.com/documentation/network), cited beside it, and only what Strata uses is declared,
// so anything else fails to type-check as it should. The security options these types hand out
// (`sec_protocol_options_t`) come from the Security stand-in, as they come from Security on Apple platforms.
//
// Sendability: the handlers below are `@Sendable` as on their pages. `NWConnection` has no `Sendable`
// conformance in the SDK (code that wants one adds `@retroactive @unchecked Sendable` itself), so none is
// declared here: a connection captured by a `@Sendable` completion fails here as it does on macOS.
import Dispatch
import Foundation
import Security

/// https://developer.apple.com/documentation/dnssd/dnsserviceerrortype (dns_sd.h, `typedef int32_t`), the
/// payload of ``NWError/dns(_:)``.
public typealias DNSServiceErrorType = Int32

/// https://developer.apple.com/documentation/network/nwerror — not `@frozen` (the SDK has added cases), so a
/// `switch` over it needs `@unknown default` here as on macOS.
public enum NWError: Error, Equatable, CustomDebugStringConvertible {
    /// https://developer.apple.com/documentation/network/nwerror/posix(_:)
    case posix(POSIXErrorCode)
    /// https://developer.apple.com/documentation/network/nwerror/dns(_:)
    case dns(DNSServiceErrorType)
    /// https://developer.apple.com/documentation/network/nwerror/tls(_:)
    case tls(OSStatus)
    /// https://developer.apple.com/documentation/network/nwerror/debugdescription
    public var debugDescription: String { "" }
}

/// https://developer.apple.com/documentation/network/nwendpoint
public enum NWEndpoint {
    /// https://developer.apple.com/documentation/network/nwendpoint/host-swift.enum
    public enum Host {
        /// https://developer.apple.com/documentation/network/nwendpoint/host-swift.enum/name(_:_:)
        case name(String, NWInterface?)
        /// https://developer.apple.com/documentation/network/nwendpoint/host-swift.enum/init(_:)
        public init(_ string: String) { self = .name(string, nil) }
    }

    /// https://developer.apple.com/documentation/network/nwendpoint/port-swift.struct
    public struct Port {
        /// https://developer.apple.com/documentation/network/nwendpoint/port-swift.struct/init(rawvalue:)
        public init?(rawValue: UInt16) {}
        /// https://developer.apple.com/documentation/network/nwendpoint/port-swift.struct/rawvalue
        public var rawValue: UInt16 { 0 }
    }
}

/// https://developer.apple.com/documentation/network/nwinterface
public final class NWInterface {}

/// https://developer.apple.com/documentation/network/nwprotocoloptions
public class NWProtocolOptions {}

/// https://developer.apple.com/documentation/network/nwprotocoltls
public class NWProtocolTLS {
    /// https://developer.apple.com/documentation/network/nwprotocoltls/options
    public class Options: NWProtocolOptions {
        /// https://developer.apple.com/documentation/network/nwprotocoltls/options/init()
        public override init() {}
        /// https://developer.apple.com/documentation/network/nwprotocoltls/options/securityprotocoloptions
        public var securityProtocolOptions: sec_protocol_options_t { fatalError("stand-in") }
    }
}

/// https://developer.apple.com/documentation/network/nwprotocoltcp
public class NWProtocolTCP {
    /// https://developer.apple.com/documentation/network/nwprotocoltcp/options
    public class Options: NWProtocolOptions {
        /// https://developer.apple.com/documentation/network/nwprotocoltcp/options/init()
        public override init() {}
        /// https://developer.apple.com/documentation/network/nwprotocoltcp/options/nodelay
        public var noDelay: Bool = false
    }
}

/// https://developer.apple.com/documentation/network/nwparameters
public final class NWParameters {
    /// https://developer.apple.com/documentation/network/nwparameters/init(tls:tcp:)
    public convenience init(tls: NWProtocolTLS.Options?, tcp: NWProtocolTCP.Options = NWProtocolTCP.Options()) {
        self.init()
    }
    /// https://developer.apple.com/documentation/network/nwparameters/init()
    public init() {}
}

/// https://developer.apple.com/documentation/network/nwconnection
public final class NWConnection {
    /// https://developer.apple.com/documentation/network/nwconnection/state-swift.enum — not `@frozen`.
    public enum State: Equatable {
        /// https://developer.apple.com/documentation/network/nwconnection/state-swift.enum/setup
        case setup
        /// https://developer.apple.com/documentation/network/nwconnection/state-swift.enum/waiting(_:)
        case waiting(NWError)
        /// https://developer.apple.com/documentation/network/nwconnection/state-swift.enum/preparing
        case preparing
        /// https://developer.apple.com/documentation/network/nwconnection/state-swift.enum/ready
        case ready
        /// https://developer.apple.com/documentation/network/nwconnection/state-swift.enum/failed(_:)
        case failed(NWError)
        /// https://developer.apple.com/documentation/network/nwconnection/state-swift.enum/cancelled
        case cancelled
    }

    /// https://developer.apple.com/documentation/network/nwconnection/contentcontext
    public final class ContentContext {
        /// https://developer.apple.com/documentation/network/nwconnection/contentcontext/defaultmessage
        public static let defaultMessage = ContentContext()
    }

    /// https://developer.apple.com/documentation/network/nwconnection/sendcompletion
    public enum SendCompletion {
        /// https://developer.apple.com/documentation/network/nwconnection/sendcompletion/contentprocessed(_:)
        case contentProcessed(@Sendable (NWError?) -> Void)
        /// https://developer.apple.com/documentation/network/nwconnection/sendcompletion/idempotent
        case idempotent
    }

    /// https://developer.apple.com/documentation/network/nwconnection/init(host:port:using:)
    public init(host: NWEndpoint.Host, port: NWEndpoint.Port, using: NWParameters) {}

    /// https://developer.apple.com/documentation/network/nwconnection/stateupdatehandler
    public var stateUpdateHandler: (@Sendable (NWConnection.State) -> Void)?

    /// https://developer.apple.com/documentation/network/nwconnection/start(queue:)
    public func start(queue: DispatchQueue) {}
    /// https://developer.apple.com/documentation/network/nwconnection/cancel()
    public func cancel() {}
    /// https://developer.apple.com/documentation/network/nwconnection/forcecancel()
    public func forceCancel() {}

    /// https://developer.apple.com/documentation/network/nwconnection/receive(minimumincompletelength:maximumlength:completion:)
    public func receive(
        minimumIncompleteLength: Int, maximumLength: Int,
        completion: @escaping @Sendable (Data?, NWConnection.ContentContext?, Bool, NWError?) -> Void
    ) {}

    /// https://developer.apple.com/documentation/network/nwconnection/send(content:contentcontext:iscomplete:completion:)-5ecuz
    public func send(
        content: Data?, contentContext: NWConnection.ContentContext = .defaultMessage, isComplete: Bool = true,
        completion: NWConnection.SendCompletion
    ) {}
}
