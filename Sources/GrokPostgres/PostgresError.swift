/// What went wrong talking to PostgreSQL. Codes are stable; `arguments` fill the localized
/// message (`error.<code>` in the CLI's catalogs).
public enum PostgresError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The server could not be reached or refused the connection (`target` is the connection
    /// string with any password removed; `detail` is libpq's message).
    case connectFailed(target: String, detail: String)
    /// A statement failed on the server. `sqlState` is the five-character SQLSTATE
    /// (`23505` unique violation, `40001` serialization failure, `57P01` shutdown...).
    case statementFailed(sqlState: String, detail: String)
    /// The connection broke (server restarted, network gone) while a statement ran or
    /// before it was sent.
    case connectionLost(detail: String)
    /// A value in a result was not of the type asked for (`column`, what it held).
    case badValue(column: String, value: String, expected: String)
    /// The connection was closed by this side.
    case closed

    public var code: String {
        switch self {
        case .connectFailed: "postgres_connect_failed"
        case .statementFailed: "postgres_statement_failed"
        case .connectionLost: "postgres_connection_lost"
        case .badValue: "postgres_bad_value"
        case .closed: "postgres_closed"
        }
    }

    public var arguments: [String] {
        switch self {
        case .connectFailed(let target, let detail): [target, detail]
        case .statementFailed(let state, let detail): [state, detail]
        case .connectionLost(let detail): [detail]
        case .badValue(let column, let value, let expected): [column, value, expected]
        case .closed: []
        }
    }

    public var description: String {
        switch self {
        case .connectFailed(let target, let detail):
            "cannot connect to PostgreSQL at \(target): \(detail); check that the server runs and the connection string (host, port, dbname, user) is right"
        case .statementFailed(let state, let detail): "PostgreSQL refused a statement (SQLSTATE \(state)): \(detail)"
        case .connectionLost(let detail): "the connection to PostgreSQL was lost: \(detail)"
        case .badValue(let column, let value, let expected): "column \(column) holds '\(value)', not \(expected)"
        case .closed: "the PostgreSQL connection is closed"
        }
    }

    /// Whether running the same transaction again may succeed: a serialization failure or
    /// deadlock (SQLSTATE class 40), or a lost connection (after reconnecting).
    public var isTransient: Bool {
        switch self {
        case .statementFailed(let state, _): state.hasPrefix("40") || state.hasPrefix("08") || state == "57P01"
        case .connectionLost: true
        default: false
        }
    }
}
