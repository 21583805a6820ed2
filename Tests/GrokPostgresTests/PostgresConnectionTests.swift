import Foundation
import PostgresTestSupport
import Testing

@testable import GrokPostgres

/// The libpq wrapper against a real PostgreSQL server (a throwaway cluster on a Unix socket).
@Suite("PostgreSQL connection", .serialized)
struct PostgresConnectionTests {
    let cluster = PostgresCluster.shared

    @Test("connects, reports the server version, and runs a parameterized statement")
    func roundTrip() throws {
        let database = try cluster.newDatabase("round")
        let db = try PostgresConnection(cluster.conninfo(database))
        #expect(db.isOpen)
        #expect(db.serverVersion >= 100000)
        let result = try db.execute("SELECT $1::int + $2::int AS sum, $3::text AS name, NULL::text AS nothing", ["40", "2", "Grokker ü"])
        #expect(result.columns == ["sum", "name", "nothing"])
        #expect(try result.rows[0].int(0) == 42)
        #expect(result.rows[0].text("name") == "Grokker ü")
        #expect(result.rows[0].text(2) == nil)
    }

    @Test("parameters are never spliced into SQL: a quote in a value is data")
    func parametersAreData() throws {
        let database = try cluster.newDatabase("quote")
        let db = try PostgresConnection(cluster.conninfo(database))
        try db.execute("CREATE TABLE devices (serial text PRIMARY KEY)")
        let hostile = "x'); DROP TABLE devices; --"
        try db.execute("INSERT INTO devices VALUES ($1)", [hostile])
        let rows = try db.execute("SELECT serial FROM devices").rows
        #expect(rows.map { $0.text(0) } == [hostile])
    }

    @Test("a failing statement throws its SQLSTATE, and a failed transaction leaves nothing")
    func transactionsRollBack() throws {
        let database = try cluster.newDatabase("tx")
        let db = try PostgresConnection(cluster.conninfo(database))
        try db.execute("CREATE TABLE steps (id int PRIMARY KEY, name text NOT NULL)")
        #expect(throws: PostgresError.self) {
            try db.transaction { db in
                try db.execute("INSERT INTO steps VALUES (1, 'region')")
                try db.execute("INSERT INTO steps VALUES (1, 'again')")
            }
        }
        #expect(try db.execute("SELECT count(*) FROM steps").rows[0].int(0) == 0)
        do {
            try db.execute("INSERT INTO steps VALUES (2, NULL)")
            Issue.record("a NULL into NOT NULL was accepted")
        } catch {
            guard case .statementFailed(let state, let detail) = error else { Issue.record("\(error)"); return }
            #expect(state == "23502", "\(detail)")
            #expect(error.code == "postgres_statement_failed")
        }
        _ = try db.transaction { db in try db.execute("INSERT INTO steps VALUES (3, 'firmware')") }
        #expect(try db.execute("SELECT name FROM steps").rows.map { $0.text(0) } == ["firmware"])
    }

    @Test("an advisory lock is exclusive across connections and is released when its holder's connection ends")
    func advisoryLocks() throws {
        let database = try cluster.newDatabase("locks")
        let station1 = try PostgresConnection(cluster.conninfo(database), applicationName: "station-1")
        let station2 = try PostgresConnection(cluster.conninfo(database), applicationName: "station-2")
        #expect(try station1.tryLock(0x5EED))
        #expect(try !station2.tryLock(0x5EED))
        // Who holds it: what a refusal can name.
        let holder = try station2.execute("""
            SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.locktype = 'advisory' AND l.objid = $1::bigint
            """, [String(0x5EED)])
        #expect(holder.rows.map { $0.text(0) } == ["station-1"])
        station1.close()
        // The server releases the lock when station 1's backend has ended, a moment after
        // the close: wait for that (as long as it takes), not for a fixed time.
        var taken = false
        for _ in 0..<1000 where !taken {
            taken = try station2.tryLock(0x5EED)
            if !taken { usleep(10_000) }
        }
        #expect(taken)
        #expect(try station2.unlock(0x5EED))
        #expect(try !station2.unlock(0x5EED))
    }

    @Test("a server that is not there is named in the error, without the password")
    func connectFailsClearly() throws {
        let missing = cluster.socketDirectory + "-nothing-here"
        do {
            _ = try PostgresConnection("host=\(missing) user=grok password=s3cret dbname=ledger", connectTimeoutSeconds: 2)
            Issue.record("connected to nothing")
        } catch {
            guard case .connectFailed(let target, let detail) = error else { Issue.record("\(error)"); return }
            #expect(target.contains(missing) && !target.contains("s3cret") && target.contains("password=***"))
            #expect(!detail.isEmpty)
        }
    }

    @Test("passwords are redacted from URIs and key=value strings")
    func redaction() {
        #expect(PostgresConnection.redacted("postgresql://ledger:pa:ss@db.example:5432/fleet") == "postgresql://ledger:***@db.example:5432/fleet")
        #expect(PostgresConnection.redacted("postgresql://db.example/fleet?user=a&password=x&sslmode=require")
                == "postgresql://db.example/fleet?user=a&password=***&sslmode=require")
        #expect(PostgresConnection.redacted("host=db password=x dbname=fleet") == "host=db password=*** dbname=fleet")
        #expect(PostgresConnection.redacted("postgresql://ledger@db/fleet") == "postgresql://ledger@db/fleet")
    }

    @Test("the URI form of the test cluster's address connects too")
    func uriConnects() throws {
        let database = try cluster.newDatabase("uri")
        let db = try PostgresConnection(cluster.uri(database))
        #expect(try db.execute("SELECT current_database()").rows[0].text(0) == database)
    }

    @Test("a server restarted under an open connection: the next statement says the connection was lost, a new one works")
    func serverRestart() throws {
        // A cluster of its own: restarting the shared one would cut the other suites' connections.
        let cluster = try PostgresCluster()
        let database = try cluster.newDatabase("restart")
        let db = try PostgresConnection(cluster.conninfo(database))
        try db.execute("SELECT 1")
        cluster.stop(mode: "fast")
        try cluster.start()
        do {
            try db.execute("SELECT 1")
            Issue.record("a statement on a connection whose server restarted succeeded")
        } catch {
            #expect(error.isTransient, "\(error)")
        }
        let again = try PostgresConnection(cluster.conninfo(database))
        #expect(try again.execute("SELECT 2").rows[0].int(0) == 2)
    }
}
