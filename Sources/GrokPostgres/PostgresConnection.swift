internal import CLibPQ
import Glibc

/// One connection to a PostgreSQL server through libpq.
///
/// Statements are sent with `PQexecParams` and every parameter as text (so values are never
/// spliced into SQL); results are read as text and converted by ``PostgresRow``. Not
/// thread-safe: one owner at a time (a station holds one connection per run).
public final class PostgresConnection {
    private var connection: OpaquePointer?
    /// The connection string with any password removed: what errors name.
    public let target: String

    /// Connects with a libpq connection string: a URI (`postgresql://user@host:5432/ledger`)
    /// or `key=value` pairs (`host=/tmp/sock dbname=ledger`).
    ///
    /// - Parameters:
    ///   - connectTimeoutSeconds: how long to wait for the server (libpq's `connect_timeout`);
    ///     added unless the string sets it.
    ///   - applicationName: shown in `pg_stat_activity` (the station's name).
    public init(_ conninfo: String, connectTimeoutSeconds: Int = 10, applicationName: String = "grokctl") throws(PostgresError) {
        target = Self.redacted(conninfo)
        let conn = Self.withParameters(conninfo, connectTimeoutSeconds: connectTimeoutSeconds,
                                       applicationName: applicationName) { keys, values in PQconnectdbParams(keys, values, 1) }
        guard let conn else { throw .connectFailed(target: target, detail: "out of memory") }
        guard PQstatus(conn) == CONNECTION_OK else {
            let detail = Self.message(PQerrorMessage(conn))
            PQfinish(conn)
            throw .connectFailed(target: target, detail: detail)
        }
        connection = conn
        // Notices (a NOTICE from a DO block, "there is no transaction in progress") would be
        // printed on stderr by libpq's default processor; a tool's stderr is for its own words.
        PQsetNoticeProcessor(conn, { _, _ in }, nil)
    }

    deinit { close() }

    /// What the server at `conninfo` says of new connections, without logging in (libpq's
    /// `PQpingParams`): a failed connect to a server that is ``ServerState/accepting``
    /// failed for good (no such database, a wrong password); one that is rejecting or not
    /// answering may be restarting.
    public enum ServerState: Sendable, Hashable {
        /// Running and accepting connections.
        case accepting
        /// Running but refusing connections (starting up, shutting down, in recovery).
        case rejecting
        /// Not reached (down, restarting, or the wrong host or port).
        case noResponse
        /// The connection string itself is unusable; no attempt was made.
        case badParameters
    }

    /// Asks the server at `conninfo` whether it accepts connections (see ``ServerState``).
    public static func ping(_ conninfo: String, connectTimeoutSeconds: Int = 10) -> ServerState {
        let answer = withParameters(conninfo, connectTimeoutSeconds: connectTimeoutSeconds,
                                    applicationName: "grokctl") { keys, values in PQpingParams(keys, values, 1) }
        switch answer {
        case PQPING_OK: return .accepting
        case PQPING_REJECT: return .rejecting
        case PQPING_NO_ATTEMPT: return .badParameters
        default: return .noResponse
        }
    }

    /// Calls `body` with libpq's keyword and value arrays for `conninfo`. Keys are applied in
    /// order and a later one wins; the caller's string (expanded, expand_dbname = 1) comes
    /// last, so it overrides these defaults where it sets them.
    private static func withParameters<T>(_ conninfo: String, connectTimeoutSeconds: Int, applicationName: String,
                                          _ body: (UnsafePointer<UnsafePointer<CChar>?>, UnsafePointer<UnsafePointer<CChar>?>) -> T) -> T {
        let keys = ["connect_timeout", "application_name", "dbname"]
        let values = [String(connectTimeoutSeconds), applicationName, conninfo]
        var cKeys = keys.map { strdup($0) }
        var cValues = values.map { strdup($0) }
        defer {
            cKeys.forEach { free($0) }
            cValues.forEach { free($0) }
        }
        cKeys.append(nil)
        cValues.append(nil)
        return cKeys.withUnsafeBufferPointer { k in
            cValues.withUnsafeBufferPointer { v in
                k.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: k.count) { kp in
                    v.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: v.count) { vp in
                        body(kp, vp)
                    }
                }
            }
        }
    }


    /// Closes the connection (idempotent). A session-level advisory lock is released by the
    /// server when its connection ends.
    public func close() {
        if let connection { PQfinish(connection) }
        connection = nil
    }

    /// Whether the connection is open and healthy as far as libpq knows.
    public var isOpen: Bool {
        guard let connection else { return false }
        return PQstatus(connection) == CONNECTION_OK
    }

    /// The server's version as an integer (`150018` for 15.18).
    public var serverVersion: Int {
        guard let connection else { return 0 }
        return Int(PQserverVersion(connection))
    }

    /// The server process serving this connection (`pg_backend_pid()`), for tests that end it.
    public var backendPID: Int32 {
        guard let connection else { return 0 }
        return PQbackendPID(connection)
    }

    /// Runs one statement with `$1, $2, ...` parameters (`nil` is SQL NULL) and returns its rows.
    @discardableResult
    public func execute(_ sql: String, _ parameters: [String?] = []) throws(PostgresError) -> PostgresResult {
        guard let connection else { throw .closed }
        var cParams: [UnsafeMutablePointer<CChar>?] = parameters.map { $0.map { strdup($0) } ?? nil }
        defer { cParams.forEach { free($0) } }
        let result = cParams.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: max(buffer.count, 1)) { pointer in
                PQexecParams(connection, sql, Int32(parameters.count), nil, parameters.isEmpty ? nil : pointer, nil, nil, 0)
            }
        }
        return try PostgresResult(taking: result, connection: connection)
    }

    /// Runs several statements separated by semicolons, without parameters (a migration
    /// script), through the simple query protocol; inside a transaction they stand or fall
    /// with it.
    public func executeScript(_ sql: String) throws(PostgresError) {
        guard let connection else { throw .closed }
        _ = try PostgresResult(taking: PQexec(connection, sql), connection: connection)
    }

    /// Runs `body` in one transaction (`BEGIN` ... `COMMIT`); rolls back when it throws.
    /// `isolation` is an SQL isolation level (`SERIALIZABLE` for the halt rule's reads).
    public func transaction<T>(isolation: String? = nil, _ body: (PostgresConnection) throws -> T) throws -> T {
        try execute(isolation.map { "BEGIN ISOLATION LEVEL \($0)" } ?? "BEGIN")
        do {
            let value = try body(self)
            try execute("COMMIT")
            return value
        } catch {
            // The connection may be gone; the server rolls back an unfinished transaction then.
            if isOpen { _ = try? execute("ROLLBACK") }
            throw error
        }
    }

    /// Takes the session-level advisory lock `key` if it is free (`pg_try_advisory_lock`):
    /// held until ``unlock(_:)`` or the connection ends (a killed station's locks go with
    /// its connection).
    public func tryLock(_ key: Int64) throws(PostgresError) -> Bool {
        try execute("SELECT pg_try_advisory_lock($1)", [String(key)]).rows.first?.bool(0) ?? false
    }

    /// Releases an advisory lock this session holds; whether it held it.
    @discardableResult
    public func unlock(_ key: Int64) throws(PostgresError) -> Bool {
        try execute("SELECT pg_advisory_unlock($1)", [String(key)]).rows.first?.bool(0) ?? false
    }

    /// The two-key form of ``tryLock(_:)``: `space` names what is locked (runs, devices),
    /// `key` which one.
    public func tryLock(space: Int32, key: Int32) throws(PostgresError) -> Bool {
        try execute("SELECT pg_try_advisory_lock($1::int, $2::int)", [String(space), String(key)]).rows.first?.bool(0) ?? false
    }

    /// Releases a two-key advisory lock this session holds; whether it held it.
    @discardableResult
    public func unlock(space: Int32, key: Int32) throws(PostgresError) -> Bool {
        try execute("SELECT pg_advisory_unlock($1::int, $2::int)", [String(space), String(key)]).rows.first?.bool(0) ?? false
    }

    static func message(_ text: UnsafePointer<CChar>?) -> String {
        guard let text else { return "" }
        return String(cString: text).trimmingWhitespace()
    }

    /// `conninfo` with the value of any password removed (`password=...` or the
    /// `user:password@` of a URI), for messages and logs.
    public static func redacted(_ conninfo: String) -> String {
        var text = conninfo
        if let scheme = text.firstRange(of: "://") {
            let rest = text[scheme.upperBound...]
            let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? text.endIndex
            if let at = text[scheme.upperBound..<authorityEnd].lastIndex(of: "@"),
               let colon = text[scheme.upperBound..<at].firstIndex(of: ":") {
                text.replaceSubrange(text.index(after: colon)..<at, with: "***")
            }
        }
        // `password=...` as a key=value pair or a URI query parameter.
        var result = ""
        var rest = Substring(text)
        while let found = rest.firstRange(of: "password=") {
            result += rest[..<found.upperBound] + "***"
            let end = rest[found.upperBound...].firstIndex { $0 == " " || $0 == "&" } ?? rest.endIndex
            rest = rest[end...]
        }
        return result + rest
    }
}

@available(*, unavailable) extension PostgresConnection: Sendable {}

extension String {
    func trimmingWhitespace() -> String {
        var view = Substring(self)
        while let last = view.last, last.isWhitespace { view = view.dropLast() }
        while let first = view.first, first.isWhitespace { view = view.dropFirst() }
        return String(view)
    }
}
