import GrokBasics
import Foundation
import GrokCommandLine
import GrokFirmware
import GrokFleet

/// Every place grokctl reads or writes by default, and where each came from. None depends on
/// the current directory: shipped data is found from the executable, configuration under
/// `/etc/grokctl` and `$XDG_CONFIG_HOME/grokctl`, state under `$XDG_STATE_HOME/grokctl`.
///
/// Shipped data (the demo channel, `profiles/`, the RF scenes) is looked for, in order:
/// `$GROKCTL_DATA_DIR`; the package checkout the executable was built in (the first
/// directory above the executable holding `Package.swift` and `profiles/`); the install
/// prefix's `<prefix>/share/grokctl` (the executable in `<prefix>/bin`); `/usr/local/share/grokctl`;
/// `/usr/share/grokctl`.
public struct InstallPaths: Sendable {
    /// Where a path came from (its stable code is the raw value, shown by `grokctl paths --json`).
    public enum Source: String, Sendable, Encodable {
        /// A command-line option.
        case option
        /// An environment variable (`GROKCTL_BENCH`, `GROKCTL_LEDGER`, `GROKCTL_DATA_DIR`).
        case environment
        /// `XDG_CONFIG_HOME` or `XDG_STATE_HOME`.
        case xdg
        /// The home directory (`~/.config`, `~/.local/state`), the XDG fallback.
        case home
        /// The package checkout the executable was built in.
        case checkout
        /// `<prefix>/share/grokctl` beside the executable's `<prefix>/bin`.
        case prefix
        /// A fixed system location (`/etc/grokctl`, `/usr/share/grokctl`, `/var/lib/grokctl`).
        case system
        /// Derived from another path of this list (the ledger inside the state directory).
        case derived
        /// Nowhere: no candidate exists.
        case missing
        /// The user's station settings (`$XDG_CONFIG_HOME/grokctl/station.json`).
        case userSettings = "user_settings"
        /// The system's station settings (`/etc/grokctl/station.json`).
        case systemSettings = "system_settings"
        /// grokctl's own default (the station's name: the host name).
        case builtIn = "built_in"
        /// A setting nobody gave, which has no default.
        case unset
    }

    /// A path and its origin.
    public struct Entry: Sendable, Equatable {
        /// The path; `nil` when nothing was found.
        public let path: String?
        /// Where it came from.
        public let source: Source
    }

    /// The process environment.
    public let environment: [String: String]
    /// The running executable's absolute path.
    public let executable: String
    /// Whether a path exists (injected so tests can ask about other machines).
    let exists: @Sendable (String) -> Bool

    /// - Parameters:
    ///   - environment: The process environment.
    ///   - executable: The executable's path; by default `/proc/self/exe`.
    public init(environment: [String: String], executable: String? = nil) {
        self.environment = environment
        self.executable = executable ?? Self.runningExecutable()
        self.exists = { FileManager.default.fileExists(atPath: $0) }
    }

    /// The path of the running executable (`/proc/self/exe`, else `argv[0]` made absolute).
    static func runningExecutable() -> String {
        if let resolved = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return resolved }
        let first = CommandLine.arguments.first ?? "grokctl"
        return URL(fileURLWithPath: first).standardizedFileURL.path
    }

    // MARK: Shipped data

    /// The directory of shipped data (holding `profiles/` and `firmware/demo-channel`).
    public var data: Entry {
        if let value = Self.absolute(environment["GROKCTL_DATA_DIR"]) { return Entry(path: value, source: .environment) }
        var directory = URL(fileURLWithPath: executable).deletingLastPathComponent().standardizedFileURL
        while directory.path != "/" {
            if exists(directory.path + "/Package.swift"), exists(directory.path + "/profiles") {
                return Entry(path: directory.path, source: .checkout)
            }
            directory.deleteLastPathComponent()
        }
        let bin = URL(fileURLWithPath: executable).deletingLastPathComponent()
        let prefixShare = bin.deletingLastPathComponent().appendingPathComponent("share/grokctl").standardizedFileURL.path
        if exists(prefixShare) { return Entry(path: prefixShare, source: .prefix) }
        for system in ["/usr/local/share/grokctl", "/usr/share/grokctl"] where exists(system) {
            return Entry(path: system, source: .system)
        }
        return Entry(path: nil, source: .missing)
    }

    /// A path inside the shipped data directory.
    private func inData(_ tail: String) -> Entry {
        let data = data
        guard let root = data.path else { return data }
        return Entry(path: joinPath(root, tail), source: data.source)
    }

    /// The shipped fleet profiles (`bench-us.json`, ...).
    public var profiles: Entry { inData("profiles") }
    /// The shipped RF scenes for emulated Grokkers.
    public var scenes: Entry { inData("profiles/scenes") }
    /// grokctl's documentation (profiles.md, fleet.md, ...), which messages point at: the
    /// checkout's `docs/`, or installed beside the shipped data, `<prefix>/share/doc/grokctl`.
    public var docs: Entry {
        let data = data
        guard let root = data.path else { return data }
        switch data.source {
        case .prefix, .system:
            return Entry(path: joinPath(URL(fileURLWithPath: root).deletingLastPathComponent().path, "doc/grokctl"), source: data.source)
        default:
            return Entry(path: joinPath(root, "docs"), source: data.source)
        }
    }
    /// The shipped demo channel: a TUF repository on disk, its `root.json` beside it.
    public var demoChannel: Entry { inData("firmware/demo-channel") }

    // MARK: Configuration

    /// System configuration: `/etc/grokctl`.
    public var systemConfig: Entry { configEntry(user: false) }

    /// Per-user configuration: `$XDG_CONFIG_HOME/grokctl`, else `~/.config/grokctl`.
    public var userConfig: Entry { configEntry(user: true) }

    /// One of ``StationPaths/configDirectories(_:)`` (the one lookup of the configuration).
    private func configEntry(user: Bool) -> Entry {
        guard let directory = StationPaths.configDirectories(environment).first(where: { ($0.origin == .system) != user }) else {
            return Entry(path: nil, source: .missing)
        }
        return Entry(path: directory.path, source: Self.source(directory.origin))
    }

    /// A configuration directory's origin as a path's source.
    static func source(_ origin: StationPaths.ConfigOrigin) -> Source {
        switch origin {
        case .xdg: .xdg
        case .home: .home
        case .system: .system
        }
    }

    /// The station's trust root when neither `--trusted-root` nor the station settings name
    /// one: the first `root.json` of the configuration directories (``StationPaths``).
    public var trustedRoot: Entry {
        for directory in StationPaths.configDirectories(environment) where exists(directory.path + "/root.json") {
            return Entry(path: directory.path + "/root.json", source: Self.source(directory.origin))
        }
        return Entry(path: nil, source: .missing)
    }

    // MARK: State

    /// The state directory: `$XDG_STATE_HOME/grokctl`, else `~/.local/state/grokctl`.
    public var state: Entry {
        let source: Source = Self.absolute(environment["XDG_STATE_HOME"]) != nil ? .xdg : .home
        return Entry(path: StateDirectory.path(environment: environment), source: source)
    }

    /// The bench of emulated Grokkers when `--bench` is not given.
    public var bench: Entry {
        if let bench = environment["GROKCTL_BENCH"], !bench.isEmpty { return Entry(path: bench, source: .environment) }
        return Entry(path: GlobalOptions.defaultBench(environment: environment), source: .derived)
    }

    /// The ledger when `--ledger` is not given: `$GROKCTL_LEDGER`, else the station settings',
    /// else `<state dir>/ledger.sqlite`.
    public func ledger(_ settings: StationSettings) -> Entry {
        setting(.ledger, in: settings) ?? Entry(path: StateDirectory.builtInLedger(environment: environment), source: .derived)
    }

    /// A station setting as the environment or the station settings give it, and where from;
    /// `nil` when neither says.
    public func setting(_ key: StationSettings.Key, in settings: StationSettings) -> Entry? {
        guard let setting = settings.setting(key) else { return nil }
        switch setting.origin {
        case .option: return Entry(path: setting.value, source: .option)
        case .environment: return Entry(path: setting.value, source: .environment)
        case .userFile: return Entry(path: setting.value, source: .userSettings)
        case .systemFile: return Entry(path: setting.value, source: .systemSettings)
        }
    }

    /// Device locks.
    public var locks: Entry { Entry(path: StateDirectory.locks(environment: environment), source: .derived) }
    /// Run reports when `--report` is not given.
    public var reports: Entry { Entry(path: StateDirectory.reports(environment: environment), source: .derived) }
    /// The station's trusted TUF metadata and verified images when `--state` is not given.
    public var tufState: Entry {
        guard let path = StationPaths.stateDirectory(explicit: nil, environment: environment) else {
            return Entry(path: nil, source: .missing)
        }
        return Entry(path: path, source: path == "/var/lib/grokctl" ? .system : .derived)
    }

    // MARK: Profiles by name

    /// Where a profile named by its name (`--profile bench-us`) is looked for, in order: the
    /// station settings' `profile_directory` (``StationSettings``), then `profiles/` in the
    /// per-user and system configuration directories, then the shipped ones.
    /// - Throws: ``CLIError/coded(code:arguments:)`` for a station settings file that is not valid.
    public func profileDirectories() throws(CLIError) -> [String] {
        let configured = try stationSettings().setting(.profileDirectory)?.value
        let configuration: [String?] = StationPaths.configDirectories(environment).map { joinPath($0.path, "profiles") }
        return ([configured] + configuration + [profiles.path]).compactMap { $0 }
    }

    /// The station settings; a file that is not valid is an error naming it, a failure (exit 1)
    /// as in every command that reads them.
    public func stationSettings() throws(CLIError) -> StationSettings {
        do {
            return try StationSettings(environment: environment)
        } catch {
            throw .configuration(code: error.code, arguments: error.arguments)
        }
    }

    /// The file a `--profile` value names.
    ///
    /// A value with a `/` or ending in `.json` is a file: as given when it exists (relative
    /// to the current directory, since the user typed it), else, when relative, the same
    /// path inside the shipped data (`profiles/bench-us.json` works from any folder). Any
    /// other value is a profile's name: `NAME.json` in ``profileDirectories``.
    ///
    /// - Throws: ``CLIError/badValue(value:option:rule:)`` naming where it looked and the
    ///   profiles there.
    public func profile(_ value: String, option: String) throws(CLIError) -> String {
        if value.contains("/") || value.hasSuffix(".json") { return shippedFile(value) }
        let directories = try profileDirectories()
        for directory in directories {
            let candidate = joinPath(directory, value + ".json")
            if exists(candidate) { return candidate }
        }
        throw .badValue(value: value, option: option, rule: .profile(directories: directories, names: try knownProfiles()))
    }

    /// A file the user named as the README names shipped data (`profiles/bench-us.json`,
    /// `firmware/demo/GR-1_1-8-0_demo.ugif`): as given when it exists (a relative path from
    /// the current directory, since the user typed it) or is absolute or `-`; else, when the
    /// same relative path is inside the shipped data, that file; else as given (its error
    /// then names it as typed).
    public func shippedFile(_ value: String) -> String {
        if value.hasPrefix("/") || value == "-" || exists(value) { return value }
        if let root = data.path, exists(joinPath(root, value)) { return joinPath(root, value) }
        return value
    }

    /// The names of the profiles in ``profileDirectories()``, sorted.
    public func knownProfiles() throws(CLIError) -> [String] {
        var names = Set<String>()
        for directory in try profileDirectories() {
            for file in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] where file.hasSuffix(".json") {
                names.insert(String(file.dropLast(5)))
            }
        }
        return names.sorted()
    }

    // MARK: Helpers

    static func absolute(_ value: String?) -> String? {
        guard let value, value.hasPrefix("/") else { return nil }
        return value
    }
}
