import GrokAudio
import GrokProtocol

/// The results of the Grokker-password calls.
public enum UgiGrokkerPasswordResult: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Done.
    case success = 0
    /// A password is set and this connection has not authenticated.
    case notAuthenticated = 1
    /// The password given is not the Grokker's.
    case wrongPassword = 2
    /// The Grokker has no password. On the vendor protocol this is every Grokker's answer.
    case noPasswordSet = 3
    /// No Grokker is connected (nothing was sent).
    case notConnected = 4
    /// Anything else.
    case otherError = 5

    public var description: String {
        switch self {
        case .success: "SUCCESS"
        case .notAuthenticated: "NOT_AUTHENTICATED"
        case .wrongPassword: "WRONG_PASSWORD"
        case .noPasswordSet: "NO_PASSWORD_SET"
        case .notConnected: "NOT_CONNECTED"
        case .otherError: "OTHER_ERROR"
        }
    }
}

/// Grokker passwords: the vendor host library (SDK 1.7.16) and its reader protocol have
/// no command for them (no opcode, no JNI entry, nothing in the headers: `nm -D
/// libugrokitapi.so | grep -i -E 'passw|auth'` finds nothing). The calls stay so that code
/// written for them compiles; a Grokker on the vendor protocol has no password, so the
/// status is NO_PASSWORD_SET and setting or authenticating is
/// ``ReaderError/notSupported(port:feature:)`` (nothing is sent).
extension ReaderSession {
    /// Setting, changing or clearing the Grokker's password: not on the vendor protocol.
    /// NOT_CONNECTED when no Grokker is connected; otherwise ``ReaderError/notSupported(port:feature:)``.
    public func setGrokkerPassword(old: String, new: String) throws(ReaderError) -> UgiGrokkerPasswordResult {
        guard connectionState == .connected else { return .notConnected }
        throw .notSupported(port: port.name, feature: "setGrokkerPassword")
    }

    /// Authenticating with a Grokker password: not on the vendor protocol. NOT_CONNECTED
    /// when no Grokker is connected; otherwise ``ReaderError/notSupported(port:feature:)``.
    public func authenticateGrokker(_ password: String) throws(ReaderError) -> UgiGrokkerPasswordResult {
        guard connectionState == .connected else { return .notConnected }
        throw .notSupported(port: port.name, feature: "authenticateGrokker")
    }

    /// NO_PASSWORD_SET on a connected Grokker (the vendor protocol has no passwords),
    /// NOT_CONNECTED otherwise.
    public func grokkerAuthenticationStatus() throws(ReaderError) -> UgiGrokkerPasswordResult {
        connectionState == .connected ? .noPasswordSet : .notConnected
    }
}

extension Reader {
    /// ``ReaderSession/setGrokkerPassword(old:new:)``, on the reader's thread.
    public func setGrokkerPassword(old: String, new: String) async throws(ReaderError) -> UgiGrokkerPasswordResult {
        try await perform { (session) throws(ReaderError) in try session.setGrokkerPassword(old: old, new: new) }
    }

    /// ``ReaderSession/authenticateGrokker(_:)``, on the reader's thread.
    public func authenticateGrokker(_ password: String) async throws(ReaderError) -> UgiGrokkerPasswordResult {
        try await perform { (session) throws(ReaderError) in try session.authenticateGrokker(password) }
    }
}

extension Ugi {
    /// ``ReaderSession/setGrokkerPassword(old:new:)``.
    public func setGrokkerPassword(old: String, new: String) async throws(ReaderError) -> UgiGrokkerPasswordResult {
        try await reader.setGrokkerPassword(old: old, new: new)
    }
    /// ``ReaderSession/authenticateGrokker(_:)``.
    public func authenticateGrokker(_ password: String) async throws(ReaderError) -> UgiGrokkerPasswordResult {
        try await reader.authenticateGrokker(password)
    }
}
