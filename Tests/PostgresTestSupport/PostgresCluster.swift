import Foundation
import Synchronization

/// A throwaway PostgreSQL cluster for tests: `initdb` in a temporary directory, the server
/// started by `pg_ctl` listening only on a Unix socket in that directory (no TCP port, so
/// concurrent test runs never collide), stopped and deleted at the end.
///
/// The binaries come from Debian's `postgresql` package (scripts/setup.sh --test installs
/// it): `$GROKCTL_PG_BINDIR`, else `pg_config --bindir`, else the newest
/// `/usr/lib/postgresql/*/bin`. PostgreSQL refuses to run as root, so as root the cluster
/// belongs to the `postgres` user the package creates, and its programs run through
/// `runuser`.
public final class PostgresCluster: @unchecked Sendable {
    // @unchecked: the mutable state (`running`) is only touched under `lock`.
    public let directory: String
    public let socketDirectory: String
    public let bindir: String
    /// The superuser the tests connect as.
    public let user = "grok"
    /// Whether commits reach the disk (`fsync` on, as a real server runs; a benchmark's
    /// choice). The tests' clusters run with `fsync=off`: nothing of theirs must survive a
    /// power cut, and they are faster.
    public let durable: Bool
    private let lock = NSLock()
    private var running = false

    /// The cluster every suite of this test process shares (created on first use); each
    /// test makes its own database in it (``newDatabase(_:)``).
    public static let shared: PostgresCluster = {
        do {
            let cluster = try PostgresCluster()
            sharedForExit.withLock { $0 = cluster }
            // A static is never deinitialized: stop the server and remove its files when the
            // test process exits.
            atexit {
                PostgresCluster.sharedForExit.withLock { cluster in
                    cluster?.stop(mode: "immediate")
                    if let directory = cluster?.directory { try? FileManager.default.removeItem(atPath: directory) }
                }
            }
            return cluster
        } catch {
            fatalError("\(error)")
        }
    }()
    private static let sharedForExit = Mutex<PostgresCluster?>(nil)

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public init(durable: Bool = false) throws {
        self.durable = durable
        bindir = try Self.findBindir()
        directory = NSTemporaryDirectory() + "grokpg-" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
        socketDirectory = directory + "/socket"
        try FileManager.default.createDirectory(atPath: socketDirectory, withIntermediateDirectories: true)
        if getuid() == 0 {
            try Self.run("/bin/chown", ["-R", "postgres:postgres", directory], asPostgres: false)
        }
        try run("initdb", ["-D", directory + "/data", "-U", user, "-A", "trust", "-E", "UTF8", "--locale=C"] + (durable ? [] : ["--no-sync"]))
        try start()
    }

    deinit {
        stop(mode: "immediate")
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// libpq's connection string for `database`.
    public func conninfo(_ database: String = "postgres") -> String {
        "host=\(socketDirectory) port=5432 user=\(user) dbname=\(database)"
    }

    /// The same as a URI (`postgresql://grok@/db?host=%2Ftmp%2F...`), the form grokctl's
    /// `--ledger` takes.
    public func uri(_ database: String) -> String {
        let host = socketDirectory.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? socketDirectory
        return "postgresql://\(user)@/\(database)?host=\(host)&port=5432"
    }

    /// Creates a fresh, empty database named after `prefix` plus a random suffix; returns its name.
    public func newDatabase(_ prefix: String = "t") throws -> String {
        let name = prefix.lowercased().filter { $0.isLetter || $0.isNumber || $0 == "_" } + "_" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
        try psql("postgres", "CREATE DATABASE \(name)")
        return name
    }

    /// Runs SQL through `psql` (a second client, as another station would be).
    @discardableResult
    public func psql(_ database: String, _ sql: String) throws -> String {
        try run("psql", ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", socketDirectory, "-U", user, "-d", database, "-c", sql])
    }

    /// Starts the server (waits until it accepts connections).
    public func start() throws {
        lock.lock(); defer { lock.unlock() }
        guard !running else { return }
        try run("pg_ctl", ["-D", directory + "/data", "-l", directory + "/server.log", "-w", "-t", "60",
                           "-o", "-k \(socketDirectory) -c listen_addresses=''\(durable ? "" : " -c fsync=off") -c max_connections=200", "start"])
        running = true
    }

    /// Stops the server: `fast` (clients disconnected, a clean shutdown) or `immediate`
    /// (as a crash).
    public func stop(mode: String = "fast") {
        lock.lock(); defer { lock.unlock() }
        guard running else { return }
        _ = try? run("pg_ctl", ["-D", directory + "/data", "-m", mode, "-w", "stop"])
        running = false
    }

    /// The server's log so far (for a failing test's message).
    public var log: String {
        (try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)) ?? ""
    }

    @discardableResult
    private func run(_ program: String, _ arguments: [String]) throws -> String {
        try Self.run(bindir + "/" + program, arguments, asPostgres: getuid() == 0)
    }

    /// Runs a program to its end and returns what it printed (stdout and stderr, through a
    /// temporary file: a server `pg_ctl` starts must not hold a pipe of ours open). Spawned
    /// with posix_spawn and reaped with waitpid, so nothing depends on a run loop.
    @discardableResult
    private static func run(_ path: String, _ arguments: [String], asPostgres: Bool) throws -> String {
        let argv = asPostgres ? ["/usr/sbin/runuser", "-u", "postgres", "--", path] + arguments : [path] + arguments
        let outputPath = NSTemporaryDirectory() + "grokpg-out-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        defer { unlink(outputPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing else of this process may reach the child: the server pg_ctl starts lives on,
        // and an inherited end of the pipe Foundation's Process watches for another child's
        // exit would keep that child's waitUntilExit() waiting for ever.
        closeFrom3(&actions)
        var cArguments = argv.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, argv[0], &actions, nil, &cArguments, environ)
        guard spawned == 0 else {
            throw Failure(description: "cannot start \(argv[0]): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        let exited = (status & 0x7f) == 0
        let code = (status >> 8) & 0xff
        guard exited, code == 0 else {
            throw Failure(description: "\((path as NSString).lastPathComponent) \(arguments.joined(separator: " ")) failed (status \(status)): \(text)")
        }
        return text
    }

    /// posix_spawn_file_actions_addclosefrom_np (glibc 2.34 and later; Swift's Glibc module
    /// does not show it, so it is looked up), else a close for each descriptor open now.
    private static func closeFrom3(_ actions: inout posix_spawn_file_actions_t) {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
            return
        }
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
            if let fd = Int32(entry), fd > 2 { posix_spawn_file_actions_addclose(&actions, fd) }
        }
    }

    private static func findBindir() throws -> String {
        let fm = FileManager.default
        if let dir = ProcessInfo.processInfo.environment["GROKCTL_PG_BINDIR"] { return dir }
        if let out = try? run("/usr/bin/pg_config", ["--bindir"], asPostgres: false) {
            let dir = out.trimmingCharacters(in: .whitespacesAndNewlines)
            if fm.isExecutableFile(atPath: dir + "/initdb") { return dir }
        }
        let versions = ((try? fm.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []).compactMap(Int.init).sorted()
        if let newest = versions.last, fm.isExecutableFile(atPath: "/usr/lib/postgresql/\(newest)/bin/initdb") {
            return "/usr/lib/postgresql/\(newest)/bin"
        }
        throw Failure(description: "no PostgreSQL server binaries (initdb, pg_ctl): run `scripts/setup.sh --test` (installs Debian's postgresql) or set GROKCTL_PG_BINDIR")
    }
}
