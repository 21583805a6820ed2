import GrokBasics

/// SQLite's own consistency checks of the database pages.
enum Integrity {
    /// `PRAGMA quick_check`: every b-tree page well formed, every record within its page,
    /// the free list sound (O(N), without matching indexes to tables). Throws
    /// ``LedgerError/corrupt(path:damage:)`` with the number of SQLite's findings.
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
        // SQLite's findings are English; the message counts them (`ledger check` runs the pragma).
        throw .corrupt(path: connection.path, damage: LedgerDamage("check_failed", [pragma, findings.count == 20 ? "20+" : String(findings.count)]))
    }
}
