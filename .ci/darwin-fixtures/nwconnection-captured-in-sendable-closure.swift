// Negative fixture for .ci/darwin-typecheck.sh: must FAIL to type-check. NWConnection declares no `Sendable`
// conformance in Apple's SDK (https://developer.apple.com/documentation/network/nwconnection), so a connection
// captured by a `@Sendable` completion is refused; Strata keeps it in a box whose `@unchecked Sendable` is
// argued in TLSStreamState_Network.swift instead.
// expect: non-Sendable
import Foundation
import Network

func receiveForever(_ connection: NWConnection) {
    connection.receive(minimumIncompleteLength: 1, maximumLength: 1024) { _, _, _, _ in
        receiveForever(connection)
    }
}
