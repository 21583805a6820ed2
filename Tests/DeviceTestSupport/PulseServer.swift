import Foundation
import Synchronization

/// A throwaway PulseAudio for tests, as a technician's desktop runs one: `pulseaudio` as an
/// ordinary process (no system daemon, no D-Bus), its runtime and state
/// directories and its socket (`module-native-protocol-unix`) in a temporary directory, two
/// null sinks (`host_out`, the default sink grokctl plays to; `unit_out`, whose monitor is the
/// default source grokctl hears), stopped and deleted at the end.
///
/// ALSA's `pulse` PCM and mixer (Debian's `libasound2-plugins`) reach it through
/// `PULSE_SERVER`: ``shared`` sets that variable in this process, so one server serves the
/// whole test process and the suites using it run serialized (they share its default sink).
/// scripts/setup.sh --test installs `pulseaudio`, `pulseaudio-utils` (pactl) and
/// `libasound2-plugins`.
public final class PulseServer: @unchecked Sendable {
    // @unchecked: `pid` is only touched under `lock`.
    public let directory: String
    /// `unix:<directory>/native`, the value of `PULSE_SERVER`.
    public let address: String
    private var pid: pid_t = 0
    private let lock = NSLock()

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The server this test process shares (started on first use); sets `PULSE_SERVER`.
    public static let shared: PulseServer = {
        do {
            let server = try PulseServer()
            setenv("PULSE_SERVER", server.address, 1)
            sharedForExit.withLock { $0 = server }
            atexit { PulseServer.sharedForExit.withLock { $0?.stop() } }
            return server
        } catch {
            fatalError("\(error)")
        }
    }()
    private static let sharedForExit = Mutex<PulseServer?>(nil)

    /// Starts a server and waits (up to 10 s) until `pactl info` reaches it.
    public init() throws {
        directory = NSTemporaryDirectory() + "grokpulse-" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
        address = "unix:\(directory)/native"
        for sub in ["run", "state", "home"] {
            try FileManager.default.createDirectory(atPath: directory + "/" + sub, withIntermediateDirectories: true)
        }
        let script = """
            load-module module-native-protocol-unix socket=\(directory)/native auth-anonymous=1
            load-module module-null-sink sink_name=host_out rate=44100 channels=1
            load-module module-null-sink sink_name=unit_out rate=44100 channels=1
            set-default-sink host_out
            set-default-source unit_out.monitor

            """
        try script.write(toFile: directory + "/default.pa", atomically: true, encoding: .utf8)
        pid = try Self.spawn(try Self.find("pulseaudio"),
                             ["-n", "--daemonize=no", "--system=false", "--exit-idle-time=-1", "--disallow-exit",
                              "--use-pid-file=no", "--disable-shm", "-F", directory + "/default.pa",
                              "--log-target=file:\(directory)/server.log"],
                             environment: Self.environment(directory: directory), output: "/dev/null")
        let deadline = Date().addingTimeInterval(10)
        while (try? pactl(["info"])) == nil {
            var status: Int32 = 0
            guard waitpid(pid, &status, WNOHANG) == 0, Date() < deadline else {
                stop()
                throw Failure(description: "pulseaudio did not start: \(log)")
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    deinit { stop() }

    /// Stops the server and removes its directory.
    public func stop() {
        lock.lock(); defer { lock.unlock() }
        if pid > 0 {
            kill(pid, SIGTERM)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
            pid = 0
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The server's log so far (for a failing test's message).
    public var log: String { (try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)) ?? "" }

    /// Runs `pactl` against this server; returns its standard output.
    @discardableResult
    public func pactl(_ arguments: [String]) throws -> String {
        var environment = Self.environment(directory: directory)
        environment["PULSE_SERVER"] = address
        let output = directory + "/pactl-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        defer { unlink(output) }
        let child = try Self.spawn(try Self.find("pactl"), arguments, environment: environment, output: output)
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0, errno == EINTR {}
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        guard status == 0 else {
            throw Failure(description: "pactl \(arguments.joined(separator: " ")) failed (status \(status)): \(text)")
        }
        return text
    }

    /// A sink's volume in percent (its first channel), as `pactl get-sink-volume` shows it.
    public func sinkVolume(_ sink: String = "host_out") throws -> Int {
        let text = try pactl(["get-sink-volume", sink])
        guard let percent = text.split(separator: "/").dropFirst().first?.trimmingCharacters(in: .whitespaces),
              let value = Int(percent.dropLast())
        else { throw Failure(description: "unreadable volume: \(text)") }
        return value
    }

    /// Sets a sink's volume in percent.
    public func setSinkVolume(_ percent: Int, sink: String = "host_out") throws {
        try pactl(["set-sink-volume", sink, "\(percent)%"])
    }

    /// Whether a sink is muted.
    public func sinkMuted(_ sink: String = "host_out") throws -> Bool {
        try pactl(["get-sink-mute", sink]).contains("yes")
    }

    /// The environment a client of this server gets (also for a spawned grokctl): its
    /// runtime and home directories.
    public static func environment(directory: String) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = directory + "/home"
        environment["XDG_RUNTIME_DIR"] = directory + "/run"
        environment["PULSE_RUNTIME_PATH"] = directory + "/run"
        environment["PULSE_STATE_PATH"] = directory + "/state"
        environment.removeValue(forKey: "DBUS_SESSION_BUS_ADDRESS")
        return environment
    }

    /// Starts `path` with posix_spawn, its output (and errors) to the file `output`, nothing
    /// else of this process inherited: a server that lives on must not hold a pipe Foundation's
    /// `Process` watches for another child's exit (PostgresCluster does the same).
    private static func spawn(_ path: String, _ arguments: [String], environment: [String: String], output: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
            if let fd = Int32(entry), fd > 2 { posix_spawn_file_actions_addclose(&actions, fd) }
        }
        var cArguments = ([path] + arguments).map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        var cEnvironment = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { cEnvironment.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, nil, &cArguments, &cEnvironment)
        guard spawned == 0 else { throw Failure(description: "cannot start \(path): \(String(cString: strerror(spawned)))") }
        return pid
    }

    private static func find(_ program: String) throws -> String {
        for directory in ["/usr/bin", "/bin", "/usr/local/bin"] where FileManager.default.isExecutableFile(atPath: directory + "/" + program) {
            return directory + "/" + program
        }
        throw Failure(description: "\(program) is missing; run scripts/setup.sh --test (it installs pulseaudio, pulseaudio-utils, libasound2-plugins)")
    }
}
