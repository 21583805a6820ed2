import Foundation
import GrokBasics
import GrokFleet
import GrokProtocol
import Testing
import UGrokIt

@Suite("Profiles")
struct ProfileTests {
    @Test("the shipped profiles load", arguments: ["bench-us", "rollout-eu-night", "verify-us"])
    func shipped(_ name: String) throws {
        let profile = try Profile.load(path: repositoryRoot + "/profiles/\(name).json")
        #expect(profile.name == name)
    }

    @Test("bench-us says what the bench needs")
    func benchUS() throws {
        let profile = try Profile.load(path: repositoryRoot + "/profiles/bench-us.json")
        #expect(profile.region?.set?.code == "fcc" && profile.region?.allowed.map(\.code) == ["fcc"])
        #expect(profile.firmware == Profile.FirmwarePolicy(channel: "release", target: .latest))
        #expect(profile.provisioning == Profile.ProvisioningPolicy(registerSerial: true, antennaType: 1, hardwareRevision: 3, status: .complete))
        #expect(profile.smokeTest?.referenceTags.count == 3 && profile.smokeTest?.inventoryType == .inventoryShortRange)
        #expect(profile.smokeTest?.minRSSI == -70 && profile.minimumBatteryPercent == 30)
        let night = try Profile.load(path: repositoryRoot + "/profiles/rollout-eu-night.json")
        #expect(night.rollout == RolloutPolicy(id: "2025-02-grokker-1.8.0", percentage: 25, halt: .init(afterDevices: 10, maxFailureRate: 0.1)))
        #expect(night.maintenanceWindows?.timeZone.identifier == "Europe/Berlin")
        #expect(night.firmware?.target == .version(FirmwareVersion(major: 1, minor: 8, build: 0)))
        #expect(night.locale == "de")
    }

    @Test("region.catalogue chooses the values SetRegion carries: ours unless the profile says vendor")
    func regionCatalogue() throws {
        let vendor = try Profile.parse(Array((Self.base + #""region": {"set": "russia", "catalogue": "vendor"}}"#).utf8), file: "p.json")
        #expect(vendor.region?.table == .vendor && vendor.region?.set?.code == "russia")
        let ours = try Profile.parse(Array((Self.base + #""region": {"set": "russia"}}"#).utf8), file: "p.json")
        #expect(ours.region?.table == .ours)
    }

    static let base = #"{"format": 1, "name": "t", "#

    struct Bad: Sendable, CustomStringConvertible {
        var json: String
        var code: String
        var arguments: [String]
        var description: String { code + " " + arguments.joined(separator: "|") }
    }

    static let bad: [Bad] = [
        Bad(json: base + #""smoke_test": {"min_reads_per_second": "fast"}}"#, code: "fleet_profile_invalid",
            arguments: ["p.json", "smoke_test.min_reads_per_second", "\"fast\"", "number_range", "0", "100000"]),
        Bad(json: base + #""smoke_test": {"min_read_per_second": 5}}"#, code: "fleet_profile_unknown_key",
            arguments: ["p.json", "smoke_test.min_read_per_second", "reference_tags, inventory_type, duration_s, min_reads_per_second, min_rssi_dbm"]),
        Bad(json: base + #""regoin": {}}"#, code: "fleet_profile_unknown_key", arguments: ["p.json", "regoin"]),
        Bad(json: base + #""region": {"set": "etsi", "allowed": ["fcc"]}}"#, code: "fleet_profile_invalid",
            arguments: ["p.json", "region.set", "\"etsi\"", "one_of_allowed", "fcc"]),
        Bad(json: base + #""region": {"set": "atlantis"}}"#, code: "fleet_profile_invalid", arguments: ["p.json", "region.set"]),
        Bad(json: base + #""region": {"allowed": ["fcc", 7]}}"#, code: "fleet_profile_invalid", arguments: ["p.json", "region.allowed[1]"]),
        Bad(json: base + #""region": {"set": "fcc", "catalogue": "theirs"}}"#, code: "fleet_profile_invalid",
            arguments: ["p.json", "region.catalogue", "\"theirs\""]),
        Bad(json: base + #""firmware": {"channel": "release", "target": "newest"}}"#, code: "fleet_profile_invalid",
            arguments: ["p.json", "firmware.target", "\"newest\"", "firmware_target"]),
        Bad(json: base + #""firmware": {"target": "1.8.0"}}"#, code: "fleet_profile_missing_key", arguments: ["p.json", "firmware.channel"]),
        Bad(json: base + #""firmware": {"channel": "release", "allow_downgrade": 1}}"#, code: "fleet_profile_invalid",
            arguments: ["p.json", "firmware.allow_downgrade", "1", "bool"]),
        Bad(json: base + #""maintenance_windows": {"time_zone": "Mars/Olympus", "windows": []}}"#, code: "fleet_profile_invalid",
            arguments: ["p.json", "maintenance_windows.time_zone"]),
        Bad(json: base + #""maintenance_windows": {"time_zone": "UTC", "windows": [{"start": "25:00", "end": "01:00"}]}}"#,
            code: "fleet_profile_invalid", arguments: ["p.json", "maintenance_windows.windows[0].start"]),
        Bad(json: base + #""maintenance_windows": {"time_zone": "UTC", "windows": [{"days": ["mon", "funday"], "start": "01:00", "end": "02:00"}]}}"#,
            code: "fleet_profile_invalid", arguments: ["p.json", "maintenance_windows.windows[0].days[1]"]),
        Bad(json: base + #""rollout": {"id": "r", "percentage": 150}}"#, code: "fleet_profile_invalid", arguments: ["p.json", "rollout.percentage"]),
        Bad(json: base + #""rollout": {"id": "r", "percentage": 10, "halt": {"after_devices": 0, "max_failure_rate": 0.1}}}"#,
            code: "fleet_profile_invalid", arguments: ["p.json", "rollout.halt.after_devices"]),
        Bad(json: base + #""provisioning": {"status": "shipped"}}"#, code: "fleet_profile_invalid", arguments: ["p.json", "provisioning.status"]),
        Bad(json: base + #""provisioning": {"antenna_type": 1.5}}"#, code: "fleet_profile_invalid", arguments: ["p.json", "provisioning.antenna_type"]),
        Bad(json: base + #""smoke_test": {"reference_tags": ["30342"]}}"#, code: "fleet_profile_invalid", arguments: ["p.json", "smoke_test.reference_tags[0]"]),
        Bad(json: base + #""smoke_test": {"inventory_type": "fast"}}"#, code: "fleet_profile_invalid", arguments: ["p.json", "smoke_test.inventory_type"]),
        Bad(json: base + #""locale": "it"}"#, code: "fleet_profile_invalid", arguments: ["p.json", "locale"]),
        Bad(json: #"{"format": 2, "name": "t"}"#, code: "fleet_profile_invalid", arguments: ["p.json", "format"]),
        Bad(json: #"{"format": 1}"#, code: "fleet_profile_missing_key", arguments: ["p.json", "name"]),
        Bad(json: #"[1, 2]"#, code: "fleet_profile_invalid", arguments: ["p.json", "$", "[…]", "object"]),
        Bad(json: #"{"format": 1, "name": }"#, code: "fleet_profile_not_json", arguments: ["p.json"]),
    ]

    @Test("a bad profile is refused with the file, the key path, what was expected and what was found", arguments: bad)
    func refused(_ bad: Bad) {
        do {
            _ = try Profile.parse(Array(bad.json.utf8), file: "p.json")
            Issue.record("accepted \(bad.json)")
        } catch {
            #expect(error.code == bad.code, "\(error)")
            #expect(Array(error.arguments.prefix(bad.arguments.count)) == bad.arguments, "\(error)")
            #expect(error.description.contains("p.json"))
        }
    }

    struct Malformed: Sendable, CustomStringConvertible {
        let json: String
        let line: Int
        let column: Int
        let detail: ErrorDetail
        var description: String { json }
    }

    static let malformed: [Malformed] = [
        // A syntax error: where the parser stopped (a value was expected after the colon).
        Malformed(json: "{\n  \"format\": 1,\n  \"name\": }\n", line: 3, column: 11, detail: ErrorDetail("unexpected_byte", ["0x7d"])),
        // A key given twice is refused at its second occurrence, naming it (JSONDecoder kept the last).
        Malformed(json: "{\"format\": 1, \"name\": \"t\",\n \"region\": {\"set\": \"etsi\",\n   \"set\": \"fcc\"}}",
                  line: 3, column: 4, detail: ErrorDetail("duplicate_key", ["set"])),
        // Trailing commas, in an object and in an array, are refused at the comma.
        Malformed(json: "{\"format\": 1,\n \"name\": \"t\",\n}", line: 2, column: 13, detail: ErrorDetail("trailing_comma", ["}"])),
        Malformed(json: "{\"format\": 1, \"name\": \"é\", \"region\": {\"allowed\": [\"fcc\", ]}}", line: 1,
                  column: 56, detail: ErrorDetail("trailing_comma", ["]"])),
    ]

    @Test("a profile that is not strict JSON is refused with the line and column where it goes wrong and what is wrong",
          arguments: malformed)
    func notStrictJSON(_ bad: Malformed) {
        #expect(throws: FleetError.profileNotJSON(file: "p.json", line: bad.line, column: bad.column, detail: bad.detail)) {
            try Profile.parse(Array(bad.json.utf8), file: "p.json")
        }
    }

    @Test("a missing file is refused naming it")
    func missing() {
        #expect(throws: FleetError.profileUnreadable(file: "/nonexistent/p.json", detail: "no_such_file")) {
            try Profile.load(path: "/nonexistent/p.json")
        }
    }

    @Test("rollout selection is deterministic, grows with the percentage, and depends on the rollout id")
    func rolloutSelection() {
        let serials = (0..<2000).map { ReaderInfo.formatSerialNumber(10_000_000 + UInt32($0) * 37) }
        let quarter = RolloutPolicy(id: "a", percentage: 25)
        let half = RolloutPolicy(id: "a", percentage: 50)
        let chosen = serials.filter { RolloutSelection.selects(quarter, serial: $0) }
        #expect(chosen == serials.filter { RolloutSelection.selects(quarter, serial: $0) })
        #expect((400...600).contains(chosen.count))
        #expect(Set(chosen).isSubset(of: Set(serials.filter { RolloutSelection.selects(half, serial: $0) })))
        let other = serials.filter { RolloutSelection.selects(RolloutPolicy(id: "b", percentage: 25), serial: $0) }
        #expect(Set(other) != Set(chosen))
        #expect(serials.filter { RolloutSelection.selects(RolloutPolicy(id: "a", percentage: 0), serial: $0) }.isEmpty)
        #expect(serials.allSatisfy { RolloutSelection.selects(RolloutPolicy(id: "a", percentage: 100), serial: $0) })
        // The documented formula: the first 8 bytes of SHA-256("a:10000000"), big-endian, scaled to 0..<100.
        #expect(abs(RolloutSelection.place(serial: "10000000", rolloutID: "a") - 54.170446346263965) < 1e-9)
    }

    @Test("maintenance windows follow the time zone and run past midnight into the next day")
    func windows() throws {
        let profile = try Profile.parse(Array((Self.base + #""maintenance_windows": {"time_zone": "America/New_York", "windows": [{"days": ["wed"], "start": "22:00", "end": "02:00"}]}}"#).utf8), file: "p.json")
        let windows = try #require(profile.maintenanceWindows)
        // Wednesday 2025-01-15 12:00 UTC = 07:00 in New York: outside.
        #expect(!windows.contains(wednesdayNoonUTC))
        // 03:30 UTC Thursday = 22:30 Wednesday in New York: inside.
        #expect(windows.contains(wednesdayNoonUTC.addingTimeInterval(15.5 * 3600)))
        // 06:30 UTC Thursday = 01:30 Thursday in New York: inside (Wednesday's window).
        #expect(windows.contains(wednesdayNoonUTC.addingTimeInterval(18.5 * 3600)))
        // 07:30 UTC Thursday = 02:30 Thursday: outside.
        #expect(!windows.contains(wednesdayNoonUTC.addingTimeInterval(19.5 * 3600)))
        // 03:30 UTC Wednesday = 22:30 Tuesday: not a Wednesday window.
        #expect(!windows.contains(wednesdayNoonUTC.addingTimeInterval(-8.5 * 3600)))
    }
}
