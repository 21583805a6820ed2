/// The vendor's Grokker-password results (`UGI_GROKKER_PASSWORD_*`, SDK 1.8+).
public enum GrokkerPasswordResult: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Done: the password is set, changed or cleared, or this link session is authenticated.
    case success = 0
    /// A password is set and this link session has not authenticated (the answer to
    /// ``Command/grokkerAuthenticationStatus``).
    case notAuthenticated = 1
    /// The password given is not the Grokker's, or wrong passwords came too fast (the
    /// Grokker's lockout, docs/protocol.md).
    case wrongPassword = 2
    /// The Grokker has no password (authenticating needs one; setting one with a non-empty
    /// old password is refused).
    case noPasswordSet = 3
    /// No Grokker is connected (the host's answer; never sent by a Grokker).
    case notConnected = 4
    /// Anything else (the new password could not be saved).
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

/// Limits of the Grokker password.
public enum GrokkerPasswordLimits {
    /// A password has at most this many UTF-8 bytes (an empty new password clears it).
    public static let maxBytes = 32
}
