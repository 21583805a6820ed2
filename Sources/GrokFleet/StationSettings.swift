import Foundation
import GrokBasics
import GrokFirmware
import GrokTUF

/// A station's settings: the fleet's repository, the trusted root, the ledger, the station's
/// name and a profile directory, kept in `station.json` in the configuration directories
/// (``StationPaths/configDirectories(_:)``: `/etc/grokctl/station.json`, then the user's
/// `$XDG_CONFIG_HOME/grokctl/station.json`, each of whose settings overrides the system's).
///
/// Precedence, for every setting: the command-line option, then the environment variable
/// (``Key/environmentVariable``), then the user's file, then the system's, then the built-in
/// default (docs/cli.md, "Station settings"). A fleet profile's `station` section sits between
/// the environment and the files for the ledger and the station's name.
///
/// The file is one JSON object of strings, read strictly (GrokTUF's parser: no duplicate key,
/// no trailing comma, a syntax error with its line and column); an unknown key or a value of
/// the wrong form is refused, naming the file.
public struct StationSettings: Sendable, Equatable {
    /// A setting of the file.
    public enum Key: String, CaseIterable, Sendable {
        /// The fleet's TUF repository: `demo`, an `https://`, `http://` or `file://` URL, or an
        /// absolute directory.
        case repository
        /// The repository's pinned root.json (an absolute path).
        case trustedRoot = "trusted_root"
        /// The ledger: an absolute path of a SQLite file or a `postgresql://` address.
        case ledger
        /// The station's name in the ledger.
        case station
        /// A directory of profiles, searched before the configuration's and the shipped ones.
        case profileDirectory = "profile_directory"

        /// The environment variable that overrides the files' value.
        public var environmentVariable: String {
            switch self {
            case .repository: "GROKCTL_REPOSITORY"
            case .trustedRoot: "GROKCTL_TRUSTED_ROOT"
            case .ledger: "GROKCTL_LEDGER"
            case .station: "GROKCTL_STATION"
            case .profileDirectory: "GROKCTL_PROFILE_DIRECTORY"
            }
        }
    }

    /// Where a setting's value came from.
    public enum Origin: Sendable, Equatable {
        /// The command line.
        case option
        /// An environment variable (its name).
        case environment(String)
        /// The user's station.json (its path).
        case userFile(String)
        /// The system's station.json (its path).
        case systemFile(String)
    }

    /// A setting's value and where it came from.
    public struct Setting: Sendable, Equatable {
        public let value: String
        public let origin: Origin

        public init(value: String, origin: Origin) {
            self.value = value
            self.origin = origin
        }
    }

    /// The file's name in each configuration directory.
    public static let fileName = "station.json"
    /// The largest file read (a settings file is a few hundred bytes).
    static let maxFileBytes = 64 * 1024
    /// The longest station name (as a profile's `station.name`).
    public static let maxStationNameLength = Profile.StationConfig.maxNameLength

    /// The files' settings, the user's over the system's.
    public let fromFiles: [Key: Setting]
    /// The environment the overrides are read from.
    let environment: [String: String]

    /// The station.json files looked at, the system's first (the user's overrides it).
    public static func files(environment: [String: String]) -> [(path: String, user: Bool)] {
        StationPaths.configDirectories(environment).reversed().map { ($0.path + "/" + fileName, $0.origin != .system) }
    }

    /// The user's station.json (what `grokctl station init` writes), if a per-user
    /// configuration directory is known; else `nil`.
    public static func userFile(environment: [String: String]) -> String? {
        files(environment: environment).first(where: \.user)?.path
    }

    /// The system's station.json (what `grokctl station init --system` writes).
    public static func systemFile(environment: [String: String]) -> String {
        files(environment: environment).first { !$0.user }!.path
    }

    /// Reads the files that exist; a missing file is no setting.
    /// - Throws: ``FleetError`` naming the file that cannot be read or is not valid.
    public init(environment: [String: String]) throws(FleetError) {
        try self.init(environment: environment, files: Self.files(environment: environment))
    }

    /// Reads `files` (each later one's settings over the earlier ones'; `user`: the user's).
    init(environment: [String: String], files: [(path: String, user: Bool)]) throws(FleetError) {
        self.environment = environment
        var settings: [Key: Setting] = [:]
        for file in files {
            guard let bytes = try Self.read(file.path) else { continue }
            for (key, value) in try Self.parse(bytes, file: file.path) {
                settings[key] = Setting(value: value, origin: file.user ? .userFile(file.path) : .systemFile(file.path))
            }
        }
        fromFiles = settings
    }

    /// The value of `key`: `option` when given, else its environment variable, else the
    /// user's file, else the system's; `nil` when none says (the built-in default applies).
    public func setting(_ key: Key, option: String? = nil) -> Setting? {
        if let option { return Setting(value: option, origin: .option) }
        if let value = Self.override(key, option: nil, environment: environment) {
            return Setting(value: value, origin: .environment(key.environmentVariable))
        }
        return fromFiles[key]
    }

    /// `option`, else `key`'s environment variable (when set and not empty): what outranks a
    /// fleet profile's `station` section, which in turn outranks the files.
    public static func override(_ key: Key, option: String?, environment: [String: String]) -> String? {
        if let option { return option }
        if let value = environment[key.environmentVariable], !value.isEmpty { return value }
        return nil
    }

    /// A file's bytes; `nil` when there is nothing at `path`.
    static func read(_ path: String) throws(FleetError) -> [UInt8]? {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return nil }
        guard !isDirectory.boolValue, let handle = FileHandle(forReadingAtPath: path) else {
            throw .stationSettingsUnreadable(file: path, detail: isDirectory.boolValue ? "read_error" : "permission_denied")
        }
        defer { try? handle.close() }
        let data: Data
        do {
            data = try handle.read(upToCount: maxFileBytes + 1) ?? Data()
        } catch {
            throw .stationSettingsUnreadable(file: path, detail: "read_error")
        }
        guard data.count <= maxFileBytes else { throw .stationSettingsUnreadable(file: path, detail: "too_large") }
        return Array(data)
    }

    /// Checks a settings file's bytes; `file` names it in errors.
    public static func parse(_ bytes: [UInt8], file: String) throws(FleetError) -> [Key: String] {
        let root: JSON
        do {
            root = try JSONParser.parse(bytes)
        } catch {
            guard case .json(let detail, let offset) = error else { throw .stationSettingsUnreadable(file: file, detail: "read_error") }
            let (line, column) = position(of: offset, in: bytes)
            throw .stationSettingsNotJSON(file: file, line: line, column: column, detail: detail)
        }
        guard let object = root.object else { throw .stationSettingsNotObject(file: file) }
        var values: [Key: String] = [:]
        for (name, value) in object.members {
            guard let key = Key(rawValue: name) else {
                throw .stationSettingsUnknownKey(file: file, key: name, known: Key.allCases.map(\.rawValue))
            }
            guard let text = value.string else {
                throw .stationSettingsInvalid(file: file, key: name, found: found(value), rule: rule(key))
            }
            guard valid(key, text) else {
                throw .stationSettingsInvalid(file: file, key: name, found: "\"\(text)\"", rule: rule(key))
            }
            values[key] = text
        }
        return values
    }

    /// Whether `value` is a valid `key` (the checks ``parse(_:file:)`` and
    /// ``write(_:to:force:)`` make).
    public static func valid(_ key: Key, _ value: String) -> Bool {
        guard !value.isEmpty, !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else { return false }
        switch key {
        case .repository:
            let lower = value.lowercased()
            return value == "demo" || value.hasPrefix("/")
                || ["https://", "http://", "file:///"].contains { lower.hasPrefix($0) && lower.count > $0.count }
        case .trustedRoot, .profileDirectory:
            return value.hasPrefix("/")
        case .ledger:
            return value.hasPrefix("/") || value.lowercased().hasPrefix("postgresql://") || value.lowercased().hasPrefix("postgres://")
        case .station:
            return value.count <= maxStationNameLength && value == value.trimmingCharacters(in: .whitespaces)
        }
    }

    /// The rule a value of `key` breaks, as a code under `station.rule`.
    public static func rule(_ key: Key) -> String {
        switch key {
        case .repository: "repository"
        case .trustedRoot, .profileDirectory: "absolute_path"
        case .ledger: "ledger"
        case .station: "station"
        }
    }

    /// The file's bytes for `values`: one object, keys in the order of ``Key``, two-space indent.
    public static func encode(_ values: [Key: String]) -> [UInt8] {
        let members = Key.allCases.compactMap { key in values[key].map { (key.rawValue, JSON.string($0)) } }
        return JSONWriter.encode(.object(JSONObject(members)!), indent: 2) + [0x0A]
    }

    /// Writes `values` to `path` (``encode(_:)``), atomically (a temporary file renamed into
    /// place, mode 0644, missing directories made); refuses an existing file unless `force`.
    /// - Throws: ``FleetError/stationSettingsInvalid(file:key:found:rule:)`` for a value that
    ///   is not valid, ``FleetError/stationSettingsExists(file:)``, or
    ///   ``FleetError/stationSettingsNotWritten(file:detail:)``.
    public static func write(_ values: [Key: String], to path: String, force: Bool) throws(FleetError) {
        for key in Key.allCases {
            guard let value = values[key] else { continue }
            guard valid(key, value) else {
                throw .stationSettingsInvalid(file: path, key: key.rawValue, found: "\"\(value)\"", rule: rule(key))
            }
            // A trust root or profile directory that is not there would break every command later.
            var isDirectory: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: value, isDirectory: &isDirectory)
            if key == .trustedRoot, !exists || isDirectory.boolValue {
                throw .stationSettingsInvalid(file: path, key: key.rawValue, found: "\"\(value)\"", rule: "existing_file")
            }
            if key == .profileDirectory, !exists || !isDirectory.boolValue {
                throw .stationSettingsInvalid(file: path, key: key.rawValue, found: "\"\(value)\"", rule: "existing_directory")
            }
        }
        do {
            let written = try AtomicFile.write(encode(values), to: path,
                                               options: AtomicFile.Options(mode: 0o644, exclusive: !force, createsDirectories: true))
            guard written else { throw FleetError.stationSettingsExists(file: path) }
        } catch let error as FleetError {
            throw error
        } catch let error as SystemCallError {
            throw .stationSettingsNotWritten(file: path, detail: systemErrorName(error.errno))
        } catch {
            throw .stationSettingsNotWritten(file: path, detail: String(describing: error))
        }
    }

    /// The 1-based line and column (in characters) of byte `offset`.
    static func position(of offset: Int, in bytes: [UInt8]) -> (line: Int, column: Int) {
        let upTo = bytes[..<min(max(offset, 0), bytes.count)]
        let lineStart = (upTo.lastIndex(of: 0x0A).map { $0 + 1 }) ?? 0
        let line = upTo.reduce(1) { $1 == 0x0A ? $0 + 1 : $0 }
        let column = String(decoding: bytes[lineStart..<upTo.endIndex], as: UTF8.self).count + 1
        return (line, column)
    }

    /// How a value of the wrong type is named.
    static func found(_ value: JSON) -> String {
        switch value {
        case .object: "{…}"
        case .array: "[…]"
        default: String(decoding: JSONWriter.encode(value), as: UTF8.self)
        }
    }
}
