import GrokAudio
import GrokLink
import GrokProtocol

/// The vendor's Grokker-password results (`UgiGrokkerPasswordResult`).
public typealias UgiGrokkerPasswordResult = GrokkerPasswordResult

extension ReaderSession {
    /// Vendor `setGrokkerPassword`: sets, changes or (with an empty `new`) clears the
    /// Grokker's password. `old` must be the current password, or empty when none is set.
    /// A Grokker with a password then refuses everything but identify, echo and these
    /// password calls (``ReaderError/authenticationRequired(port:)``) until a connection
    /// authenticates; this one stays authenticated with the new password.
    ///
    /// NOT_CONNECTED when no Grokker is connected (nothing is sent); a `new` longer than
    /// ``GrokkerPasswordLimits/maxBytes`` UTF-8 bytes is refused before anything is sent.
    public func setGrokkerPassword(old: String, new: String) throws(ReaderError) -> UgiGrokkerPasswordResult {
        guard new.utf8.count <= GrokkerPasswordLimits.maxBytes, old.utf8.count <= GrokkerPasswordLimits.maxBytes else {
            throw .invalidArgument(field: "password", value: "\(max(new.utf8.count, old.utf8.count)) bytes",
                                   allowed: "at most \(GrokkerPasswordLimits.maxBytes) UTF-8 bytes")
        }
        guard connectionState == .connected else { return .notConnected }
        let result = try passwordCall(.setGrokkerPassword(old: old, new: new))
        if result == .success { grokkerPassword = new.isEmpty ? nil : new }
        log(.connectionState, "Grokker password \(new.isEmpty ? "clear" : "set"): \(result)")
        return result
    }

    /// Vendor `authenticateGrokker`: unlocks a Grokker that has a password for this
    /// connection (a reconnect needs it again; a resumed inventory does it by itself).
    /// Wrong passwords lock the Grokker out for a while, doubling each time (docs/protocol.md).
    public func authenticateGrokker(_ password: String) throws(ReaderError) -> UgiGrokkerPasswordResult {
        guard password.utf8.count <= GrokkerPasswordLimits.maxBytes else { return .wrongPassword }
        guard connectionState == .connected else { return .notConnected }
        let result = try passwordCall(.authenticateGrokker(password))
        if result == .success { grokkerPassword = password }
        log(.connectionState, "Grokker authentication: \(result)")
        return result
    }

    /// Whether this connection may use the Grokker: SUCCESS (authenticated),
    /// NOT_AUTHENTICATED, NO_PASSWORD_SET, or NOT_CONNECTED.
    public func grokkerAuthenticationStatus() throws(ReaderError) -> UgiGrokkerPasswordResult {
        guard connectionState == .connected else { return .notConnected }
        return try passwordCall(.grokkerAuthenticationStatus)
    }

    private func passwordCall(_ command: Command) throws(ReaderError) -> UgiGrokkerPasswordResult {
        let response = try call(command)
        guard case .grokkerPassword(let result, _) = response else {
            throw .malformedResponse(port: port.name, detail: "\(command.opcode) answered with \(response.opcode)")
        }
        return result
    }
}

extension Reader {
    /// Vendor `setGrokkerPassword`, on the reader's thread.
    public func setGrokkerPassword(old: String, new: String) async throws(ReaderError) -> UgiGrokkerPasswordResult {
        try await perform { (session) throws(ReaderError) in try session.setGrokkerPassword(old: old, new: new) }
    }

    /// Vendor `authenticateGrokker`, on the reader's thread.
    public func authenticateGrokker(_ password: String) async throws(ReaderError) -> UgiGrokkerPasswordResult {
        try await perform { (session) throws(ReaderError) in try session.authenticateGrokker(password) }
    }
}

extension Ugi {
    /// Vendor `setGrokkerPassword`.
    public func setGrokkerPassword(old: String, new: String) async throws(ReaderError) -> UgiGrokkerPasswordResult {
        try await reader.setGrokkerPassword(old: old, new: new)
    }
    /// Vendor `authenticateGrokker`.
    public func authenticateGrokker(_ password: String) async throws(ReaderError) -> UgiGrokkerPasswordResult {
        try await reader.authenticateGrokker(password)
    }
}
