extension IOLoop {
    /// Connects and runs the handshake: `HELLO 3 [AUTH user pass] SETNAME name`, then checks that the
    /// server is a standalone primary. When the server does not know `HELLO` (Redis before 6, or a proxy
    /// that refuses RESP3) it falls back to RESP2: `AUTH`, `CLIENT SETNAME`, `ROLE`.
    ///
    /// Runs on the I/O thread and blocks it for at most the connect deadline plus one read and one write
    /// deadline per handshake command. RESP3 specification, "The HELLO command and connection handshake".
    ///
    /// The configuration's address first, then each fallback address in order; the first failure is the
    /// one thrown when none can be used, unless an address is a cluster node: then its refusal
    /// (``ConnectionError/clusterNodeRefused``), which the Redis tier answers by switching to the cluster.
    func open() throws(ConnectionError) -> Transport {
        let configuration = configuration
        var firstFailure: ConnectionError?
        let addresses =
            [RedisConnection.Address(host: configuration.host, port: configuration.port)]
            + configuration.fallbackAddresses
        for address in addresses {
            do throws(ConnectionError) {
                // One deadline for the TCP connect and the TLS handshake: both are "connecting".
                let socket = try Transport.connect(
                    host: address.host, port: address.port, tls: configuration.tls,
                    deadline: .now.advanced(by: configuration.connectTimeout))
                do throws(ConnectionError) {
                    try handshake(socket)
                    return socket
                } catch {
                    socket.close()
                    throw error
                }
            } catch {
                // A cluster node among the addresses is what the Redis tier needs to hear, whichever address
                // failed first: it switches to the cluster layer, seeded with every address.
                if firstFailure == nil || error == .clusterNodeRefused { firstFailure = error }
                if error == .clusterNodeRefused { break }
            }
        }
        throw firstFailure ?? ConnectionError(.connectFailed, "no address to connect to")
    }

    private func handshake(_ socket: Transport) throws(ConnectionError) {
        var hello = RESPCommand("HELLO", "3")
        if let password = configuration.password {
            hello.append("AUTH")
            hello.append(configuration.username ?? "default")
            hello.append(password)
        }
        hello.append("SETNAME")
        hello.append(configuration.clientName)
        let reply = try exchange(hello, on: socket)
        if let message = reply.errorMessage {
            guard message.hasPrefix("NOPROTO") || message.lowercased().hasPrefix("err unknown command") else {
                throw Self.handshakeError(message)
            }
            try handshakeRESP2(socket)
            return
        }
        guard case .map(let fields) = reply else {
            throw ConnectionError(.protocolViolation, "HELLO did not answer with a map")
        }
        let field = { (name: String) in fields.first { $0.key.string == name }?.value.string }
        // A cluster node answers for slots it does not serve with MOVED, a replica included, so the cluster
        // layer may talk to any node; it learns the roles from the slot map.
        if field("mode") == "cluster" && configuration.acceptsClusterNode { return }
        if let mode = field("mode"), mode != "standalone" {
            throw mode == "cluster"
                ? .clusterNodeRefused
                : ConnectionError(.clusterMode, "the server runs in \(mode) mode; a standalone primary is required")
        }
        if let role = field("role"), role != "master" {
            throw ConnectionError(.replica, "the server is a \(role); a writable primary is required")
        }
    }

    private func handshakeRESP2(_ socket: Transport) throws(ConnectionError) {
        if let password = configuration.password {
            var auth = RESPCommand("AUTH")
            if let username = configuration.username { auth.append(username) }
            auth.append(password)
            if let message = try exchange(auth, on: socket).errorMessage { throw Self.handshakeError(message) }
        }
        _ = try exchange(RESPCommand("CLIENT", "SETNAME", configuration.clientName), on: socket)
        let role = try exchange(RESPCommand("ROLE"), on: socket)
        if case .array(let parts) = role, let name = parts.first?.string, name != "master" {
            throw ConnectionError(.replica, "the server is a \(name); a writable primary is required")
        }
    }

    private static func handshakeError(_ message: String) -> ConnectionError {
        let error = ConnectionError.reply(message)
        return error.code == .serverError
            ? ConnectionError(.authenticationFailed, "handshake refused: \(message)") : error
    }

    /// Sends one command and waits for its reply, within the write and read deadlines.
    private func exchange(_ command: RESPCommand, on socket: Transport) throws(ConnectionError) -> RESPValue {
        let bytes = RESPEncoder.encode(command)
        var sent = 0
        let writeDeadline = ContinuousClock.now.advanced(by: configuration.writeTimeout)
        while sent < bytes.count {
            switch bytes.withUnsafeBytes({ socket.write(UnsafeRawBufferPointer(rebasing: $0[sent...])) }) {
            case .bytes(let count): sent += count
            case .wouldBlock:
                guard socket.wait(forWriting: true, until: writeDeadline) else {
                    throw ConnectionError(.deadlineExceeded, "the handshake missed its write deadline")
                }
            case .endOfStream, .failed:
                throw ConnectionError(.connectionClosed, "the connection failed during the handshake")
            }
        }
        let readDeadline = ContinuousClock.now.advanced(by: configuration.readTimeout)
        while true {
            if let reply = try decoder.next() {
                if case .push = reply { continue }
                return reply
            }
            switch readChunk.withUnsafeMutableBytes({ socket.read(into: $0) }) {
            case .bytes(let count): decoder.append(readChunk[0..<count])
            case .wouldBlock:
                guard socket.wait(forWriting: false, until: readDeadline) else {
                    throw ConnectionError(.deadlineExceeded, "the handshake missed its read deadline")
                }
            case .endOfStream, .failed:
                throw ConnectionError(.connectionClosed, "the server closed the connection during the handshake")
            }
        }
    }
}
