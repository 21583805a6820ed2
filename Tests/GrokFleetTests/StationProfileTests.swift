import Foundation
import GrokFleet
import GrokBasics
import Testing

/// The profile's `station` section: the station's name, its ledger and what to do offline
/// (docs/profiles.md, `station`).
@Suite("Profiles: the station section")
struct StationProfileTests {
    static let base = #"{"format": 1, "name": "t", "station": "#

    func parse(_ station: String) throws(FleetError) -> Profile {
        try Profile.parse(Array((Self.base + station + "}").utf8), file: "p.json")
    }

    @Test("name, shared ledger, offline mode and reconnection window are read; offline defaults to refuse, the window to 30 s; no section, no station config")
    func read() throws {
        let full = try parse(#"{"name": "bench-3", "ledger": "postgresql://grokstation@db.example/grokfleet", "offline": "spool"}"#)
        #expect(full.station == Profile.StationConfig(name: "bench-3", ledger: "postgresql://grokstation@db.example/grokfleet",
                                                     offline: .spool))
        #expect(try parse(#"{"name": "bench-3"}"#).station == Profile.StationConfig(name: "bench-3", ledger: nil, offline: .refuse))
        #expect(try parse(#"{"ledger": "/var/lib/grokctl/bench.sqlite"}"#).station?.ledger == "/var/lib/grokctl/bench.sqlite")
        #expect(try parse(#"{"ledger": "postgres://db/fleet"}"#).station?.ledger == "postgres://db/fleet")
        #expect(try Profile.parse(Array(#"{"format": 1, "name": "t"}"#.utf8), file: "p.json").station == nil)
        #expect(full.station?.ledgerReconnectSeconds == 30)
        #expect(try parse(#"{"ledger_reconnect_s": 2.5}"#).station?.ledgerReconnectSeconds == 2.5)
        #expect(full.station?.alreadyDone == .leave)
        #expect(try parse(#"{"already_done": "verify"}"#).station?.alreadyDone == .verify)
        #expect(try parse(#"{"already_done": "leave"}"#).station?.alreadyDone == .leave)
    }

    struct Bad: Sendable, CustomStringConvertible {
        var station: String
        var code: String
        var keyPath: String
        var description: String { station }
    }

    static let bad: [Bad] = [
        Bad(station: #"{"offline": "queue"}"#, code: "fleet_profile_invalid", keyPath: "station.offline"),
        Bad(station: #"{"offline": true}"#, code: "fleet_profile_invalid", keyPath: "station.offline"),
        Bad(station: #"{"name": ""}"#, code: "fleet_profile_invalid", keyPath: "station.name"),
        Bad(station: #"{"name": " bench-3"}"#, code: "fleet_profile_invalid", keyPath: "station.name"),
        Bad(station: #"{"name": "bench\n3"}"#, code: "fleet_profile_invalid", keyPath: "station.name"),
        Bad(station: #"{"name": "\#(String(repeating: "b", count: 65))"}"#, code: "fleet_profile_invalid", keyPath: "station.name"),
        Bad(station: #"{"ledger": "ledger.sqlite"}"#, code: "fleet_profile_invalid", keyPath: "station.ledger"),
        Bad(station: #"{"ledger": "mysql://db/fleet"}"#, code: "fleet_profile_invalid", keyPath: "station.ledger"),
        Bad(station: #"{"ledger": 5432}"#, code: "fleet_profile_invalid", keyPath: "station.ledger"),
        Bad(station: #"{"ledger_reconnect_s": 0}"#, code: "fleet_profile_invalid", keyPath: "station.ledger_reconnect_s"),
        Bad(station: #"{"ledger_reconnect_s": 601}"#, code: "fleet_profile_invalid", keyPath: "station.ledger_reconnect_s"),
        Bad(station: #"{"ledger_reconnect_s": "30"}"#, code: "fleet_profile_invalid", keyPath: "station.ledger_reconnect_s"),
        Bad(station: #"{"already_done": "check"}"#, code: "fleet_profile_invalid", keyPath: "station.already_done"),
        Bad(station: #"{"already_done": false}"#, code: "fleet_profile_invalid", keyPath: "station.already_done"),
        Bad(station: #"{"offlne": "spool"}"#, code: "fleet_profile_unknown_key", keyPath: "station.offlne"),
        Bad(station: #""bench-3""#, code: "fleet_profile_invalid", keyPath: "station"),
    ]

    @Test("a bad station section is refused naming the key, what it takes and what it has", arguments: bad)
    func refused(_ bad: Bad) {
        do {
            _ = try parse(bad.station)
            Issue.record("accepted \(bad.station)")
        } catch {
            #expect(error.code == bad.code, "\(error)")
            #expect(error.arguments.dropFirst().first == bad.keyPath, "\(error)")
            #expect(error.description.contains("p.json"))
        }
    }

    @Test("the refusal of an unknown offline mode lists the modes")
    func offlineModesListed() {
        #expect(throws: FleetError.profileInvalid(file: "p.json", keyPath: "station.offline", expected: ErrorDetail("one_of", ["refuse, spool"]), found: "\"queue\"")) {
            _ = try parse(#"{"offline": "queue"}"#)
        }
    }

    @Test("the refusal of an unknown already_done choice names the key, lists the choices and shows what was found")
    func alreadyDoneChoicesListed() {
        #expect(throws: FleetError.profileInvalid(file: "p.json", keyPath: "station.already_done", expected: ErrorDetail("one_of", ["leave, verify"]),
                                                  found: "\"check\"")) {
            _ = try parse(#"{"already_done": "check"}"#)
        }
    }
}
