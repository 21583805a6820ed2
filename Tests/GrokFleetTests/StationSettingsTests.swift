import Foundation
import GrokBasics
import GrokTestSupport
import Testing

@testable import GrokFleet

/// A station's settings file (station.json): read strictly, the user's over the system's, the
/// environment and the options over both; written atomically (docs/cli.md, "Station settings").
@Suite("Station settings")
struct StationSettingsTests {
    static func parse(_ text: String) throws(FleetError) -> [StationSettings.Key: String] {
        try StationSettings.parse(Array(text.utf8), file: "/s.json")
    }

    @Test("a syntax error, a duplicate key or a trailing comma is refused with its line and column, naming the file")
    func strictJSON() {
        for (text, line, column) in [("{\n  \"station\": \"a\",\n  \"station\": \"b\"\n}", 3, 3),
                                     ("{\n  \"repository\": \"demo\",\n}\n", 2, 23),
                                     ("{\"station\" \"a\"}", 1, 12)] {
            #expect {
                _ = try Self.parse(text)
            } throws: { error in
                guard case .stationSettingsNotJSON(let file, let l, let c, _) = error as? FleetError else { return false }
                return file == "/s.json" && l == line && c == column
            }
        }
        #expect(throws: FleetError.stationSettingsNotObject(file: "/s.json")) { try Self.parse("[]") }
    }

    @Test("an unknown key, a value of the wrong type or form is refused naming the key and its rule")
    func strictValues() throws {
        #expect(throws: FleetError.stationSettingsUnknownKey(file: "/s.json", key: "repo", known: StationSettings.Key.allCases.map(\.rawValue))) {
            try Self.parse(#"{"repo": "demo"}"#)
        }
        #expect(throws: FleetError.stationSettingsInvalid(file: "/s.json", key: "trusted_root", found: "\"root.json\"", rule: "absolute_path")) {
            try Self.parse(#"{"trusted_root": "root.json"}"#)
        }
        #expect(throws: FleetError.stationSettingsInvalid(file: "/s.json", key: "repository", found: "\"ftp://x\"", rule: "repository")) {
            try Self.parse(#"{"repository": "ftp://x"}"#)
        }
        #expect(throws: FleetError.stationSettingsInvalid(file: "/s.json", key: "station", found: "3", rule: "station")) {
            try Self.parse(#"{"station": 3}"#)
        }
        let all = try Self.parse(#"{"repository": "https://fleet.example/r", "trusted_root": "/etc/r.json", "ledger": "postgresql://s@db/f", "station": "bench-3", "profile_directory": "/srv/p"}"#)
        #expect(all == [.repository: "https://fleet.example/r", .trustedRoot: "/etc/r.json", .ledger: "postgresql://s@db/f",
                        .station: "bench-3", .profileDirectory: "/srv/p"])
    }

    @Test("option > environment > the user's file > the system's file; a setting nobody gives is nil (the built-in default)")
    func precedence() throws {
        let directory = TemporaryDirectory()
        let system = directory.path + "/etc/station.json", user = directory.path + "/home/station.json"
        try StationSettings.write([.repository: "https://system.example/r", .station: "system-name", .ledger: "/var/l.sqlite"],
                                  to: system, force: false)
        try StationSettings.write([.station: "user-name"], to: user, force: false)
        let settings = try StationSettings(environment: ["GROKCTL_LEDGER": "/env/l.sqlite"], files: [(system, false), (user, true)])
        #expect(settings.setting(.station) == .init(value: "user-name", origin: .userFile(user)))
        #expect(settings.setting(.repository) == .init(value: "https://system.example/r", origin: .systemFile(system)))
        #expect(settings.setting(.ledger) == .init(value: "/env/l.sqlite", origin: .environment("GROKCTL_LEDGER")))
        #expect(settings.setting(.station, option: "bench-9") == .init(value: "bench-9", origin: .option))
        #expect(settings.setting(.profileDirectory) == nil)
        // A missing file is no setting; the lookup is the configuration directories' (system first, user over it).
        #expect(try StationSettings(environment: [:], files: [(directory.path + "/none.json", true)]).fromFiles.isEmpty)
        #expect(StationSettings.files(environment: ["XDG_CONFIG_HOME": "/x"]).map(\.path) == ["/etc/grokctl/station.json", "/x/grokctl/station.json"])
        #expect(StationSettings.files(environment: ["XDG_CONFIG_HOME": "rel", "HOME": "/h"]).map(\.path)
                == ["/etc/grokctl/station.json", "/h/.config/grokctl/station.json"])
    }

    @Test("written atomically at 0644 as one object, an existing file kept unless forced, a bad value refused before anything is written")
    func write() throws {
        let directory = TemporaryDirectory()
        let file = directory.path + "/config/grokctl/station.json"
        try StationSettings.write([.repository: "demo", .station: "bench-3"], to: file, force: false)
        let attributes = try FileManager.default.attributesOfItem(atPath: file)
        #expect((attributes[.posixPermissions] as? Int) == 0o644)
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "{\n  \"repository\": \"demo\",\n  \"station\": \"bench-3\"\n}\n")
        #expect(throws: FleetError.stationSettingsExists(file: file)) { try StationSettings.write([.station: "other"], to: file, force: false) }
        try StationSettings.write([.station: "other"], to: file, force: true)
        #expect(try StationSettings.parse(Array(FileManager.default.contents(atPath: file)!), file: file) == [.station: "other"])
        #expect(throws: FleetError.stationSettingsInvalid(file: file, key: "trusted_root", found: "\"/nonexistent/root.json\"", rule: "existing_file")) {
            try StationSettings.write([.trustedRoot: "/nonexistent/root.json"], to: file, force: true)
        }
        #expect(try StationSettings.parse(Array(FileManager.default.contents(atPath: file)!), file: file) == [.station: "other"])
        // No temporary file is left beside it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path + "/config/grokctl") == ["station.json"])
    }
}
