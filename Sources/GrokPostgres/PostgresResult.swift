internal import CLibPQ

/// The rows a statement returned, copied out of libpq's result (which is freed at once).
public struct PostgresResult: Sendable {
    /// Column names, in order.
    public let columns: [String]
    public let rows: [PostgresRow]
    /// Rows a command touched (`INSERT`, `UPDATE`, `DELETE`: `PQcmdTuples`).
    public let affected: Int

    init(taking result: OpaquePointer?, connection: OpaquePointer) throws(PostgresError) {
        guard let result else {
            throw PostgresConnection.isBroken(connection)
                ? .connectionLost(detail: PostgresConnection.message(PQerrorMessage(connection)))
                : .statementFailed(sqlState: "", detail: PostgresConnection.message(PQerrorMessage(connection)))
        }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK else {
            let detail = PostgresConnection.message(PQresultErrorMessage(result))
            let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) } ?? ""
            if state.isEmpty || PostgresConnection.isBroken(connection) {
                throw .connectionLost(detail: detail.isEmpty ? PostgresConnection.message(PQerrorMessage(connection)) : detail)
            }
            throw .statementFailed(sqlState: state, detail: detail)
        }
        let columnCount = Int(PQnfields(result))
        var names: [String] = []
        for column in 0..<columnCount { names.append(String(cString: PQfname(result, Int32(column)))) }
        var rows: [PostgresRow] = []
        let rowCount = Int(PQntuples(result))
        rows.reserveCapacity(rowCount)
        for row in 0..<rowCount {
            var values: [String?] = []
            values.reserveCapacity(columnCount)
            for column in 0..<columnCount {
                if PQgetisnull(result, Int32(row), Int32(column)) != 0 {
                    values.append(nil)
                } else {
                    values.append(String(cString: PQgetvalue(result, Int32(row), Int32(column))))
                }
            }
            rows.append(PostgresRow(columns: names, values: values))
        }
        columns = names
        self.rows = rows
        affected = Int(String(cString: PQcmdTuples(result))) ?? 0
    }
}

/// One row of a result, its values as PostgreSQL's text output.
public struct PostgresRow: Sendable {
    let columns: [String]
    /// The values, `nil` for SQL NULL.
    public let values: [String?]

    /// The text of column `index`.
    public func text(_ index: Int) -> String? { values[index] }

    /// The text of the column named `name`.
    public func text(_ name: String) -> String? {
        columns.firstIndex(of: name).flatMap { values[$0] }
    }

    /// Column `index` as an integer (`int2`/`int4`/`int8`, or text holding one).
    public func int(_ index: Int) throws(PostgresError) -> Int64? {
        guard let text = values[index] else { return nil }
        guard let value = Int64(text) else { throw .badValue(column: columns[index], value: text, expected: "an integer") }
        return value
    }

    /// Column `index` as a Boolean (`t`/`f`).
    public func bool(_ index: Int) -> Bool? {
        values[index].map { $0 == "t" || $0 == "true" }
    }

    /// Column `index` as a floating-point number.
    public func double(_ index: Int) throws(PostgresError) -> Double? {
        guard let text = values[index] else { return nil }
        guard let value = Double(text) else { throw .badValue(column: columns[index], value: text, expected: "a number") }
        return value
    }
}

extension PostgresConnection {
    /// Whether libpq sees the connection as broken (the server went away).
    static func isBroken(_ connection: OpaquePointer) -> Bool {
        PQstatus(connection) != CONNECTION_OK
    }
}
