/// SQLite's own consistency checks of the database pages.
enum Integrity {
    /// `PRAGMA quick_check`: every b-tree page well formed, every record within its page,
    /// the free list sound (O(N), without matching indexes to tables). Throws
    /// ``LedgerError/corrupt(path:detail:)`` with SQLite's first findings.
    static func quickCheck(_ connection: SQLiteConnection) throws(LedgerError) {
        try run("quick_check", connection)
    }

    /// `PRAGMA integrity_check`: the quick check plus every index matched to its table and
    /// every constraint; for `grokctl ledger check`.
    static func fullCheck(_ connection: SQLiteConnection) throws(LedgerError) {
        try run("integrity_check", connection)
    }

    private static func run(_ pragma: String, _ connection: SQLiteConnection) throws(LedgerError) {
        let findings = try connection.query("PRAGMA \(pragma)(20)") { $0.text(0) ?? "" }
        guard findings != ["ok"] else { return }
        let shown = findings.prefix(3).joined(separator: "; ")
        throw .corrupt(path: connection.path,
                       detail: "\(pragma) found \(findings.count == 20 ? "20 or more" : String(findings.count)) problems: \(shown)")
    }
}
