import Foundation
import GrokkerEmulator
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

extension CLI {
    /// `grokctl info` on the emulated bench, as a technician runs it.
    @Suite("info")
    struct InfoTests {
        /// The serial numbers the bench's state files hold, by index.
        static func serials(_ bench: String, _ indices: ClosedRange<Int>) throws -> [String] {
            try indices.map { index in
                let store = try DeviceStateStore.openOrCreate(directory: bench, index: index)
                return String(format: "%08d", store.state.serialNumber)
            }
        }

        @Test("four emulated Grokkers, in each language", arguments: Language.allCases)
        func fourGrokkers(language: Language) throws {
            let bench = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: bench) }
            let result = try runBinary(["--bench", bench, "--lang", language.rawValue, "info", "--device", "sim:0-3"])
            #expect(result.status == 0, "\(result.standardError)")
            let lines = result.standardOutput.split(separator: "\n").map(String.init)
            #expect(lines.count == 6, "\(result.standardOutput)")
            // Headings and region state in the language asked for.
            #expect(lines.first?.hasPrefix(text(.infoColumnDevice, language)) == true)
            #expect(lines.first?.contains(text(.infoColumnSerial, language)) == true)
            let serials = try Self.serials(bench, 0...3)
            for (index, serial) in serials.enumerated() {
                let row = try #require(lines.first { $0.hasPrefix("sim:\(index) ") })
                #expect(row.contains(serial))
                #expect(row.contains("1.7.3"))
                #expect(row.contains("GROKKER_1"))
                // Out of the box GetVersion says "user has set region" off: not set, not the
                // FCC its region index 0 would name.
                #expect(row.contains(text(.infoRegionNotSet, language)) && !row.contains(text(.regionFcc, language)), "\(row)")
            }
            #expect(lines.last == text(.infoSummary, language, "4", "4"))
        }

        /// The facts themselves are DeviceJobTests' (GrokFleetTests); here, their `--json` fields.
        @Test("--json gives the facts with stable fields")
        func json() throws {
            let bench = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: bench) }
            let state = ["XDG_STATE_HOME": bench + "/state"]
            let result = try runBinary(["--bench", bench, "--json", "info", "--device", "sim:0"], environment: state)
            #expect(result.status == 0, "\(result.standardError)")
            let objects = try jsonObjects(result.standardOutput)
            #expect(objects.count == 1)
            let object = try #require(objects.first)
            #expect(object["device"] as? String == "sim:0")
            #expect(object["status"] as? String == "ok")
            #expect(object["serial"] as? String == (try Self.serials(bench, 0...0)).first)
            #expect(object["firmware"] as? String == "1.7.3" && object["loader"] == nil && object["update_unfinished"] as? Bool == false)
            #expect(object["hardware_type"] as? String == "GROKKER_1" && object["hardware_revision"] as? Int == 3)
            // No region set: `region` absent, `region_set` false (docs/cli.md).
            #expect(object["region"] == nil && object["user_must_set_region"] as? Bool == false)
            #expect(object["region_set"] as? Bool == false && object["has_battery"] as? Bool != nil)
            #expect((object["connect_ms"] as? Double ?? 999) <= 1000)
            // Met for the first time: AutoConfig chose 8 samples per bit (issue 22, done-when).
            #expect(object["link_bit_rate"] as? Double == 5512.5 && object["samples_per_bit"] as? Int == 8)
            #expect(object["sample_rate"] as? Int == 44_100 && object["link_setting"] as? String == "autoconfig")
            #expect((object["packets_sent"] as? Int ?? 0) >= 1 && object["retries"] as? Int == 0)
            for field in ["packets_received", "bytes_sent", "bytes_received", "timeouts", "crc_mismatches",
                          "internal_crc_mismatches", "invalid_packets", "max_power_dbm", "reader_protocol"] {
                #expect(object[field] != nil, "\(field) missing")
            }
            // The second info reuses the stored setting: one handshake and GetVersion, about a second of audio.
            let again = try runBinary(["--bench", bench, "--json", "info", "--device", "sim:0"], environment: state)
            let second = try #require(try jsonObjects(again.standardOutput).first)
            #expect(second["link_setting"] as? String == "stored" && second["samples_per_bit"] as? Int == 8)
            #expect((second["link_setup_ms"] as? Double ?? 99_999) < 1500 && (object["link_setup_ms"] as? Double ?? 0) > 4000)
        }

        @Test("a missing ALSA device fails that device, exit 1, message in the user's language", arguments: [Language.en, .fr])
        func missingALSADevice(language: Language) throws {
            let bench = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: bench) }
            let result = try runBinary(["--bench", bench, "--lang", language.rawValue, "info", "--device", "sim:0,alsa:hw:29,0"])
            #expect(result.status == 1)
            let failure = try #require(result.standardOutput.split(separator: "\n").first { $0.hasPrefix("alsa:hw:29,0") })
            #expect(failure.contains("hw:29,0"))
            #expect(failure.contains(language == .en ? "not found" : "introuvable"))
            #expect(result.standardOutput.contains(text(.infoSummary, language, "1", "2")))
        }

        @Test("--json reports a failed device with a stable code")
        func jsonFailure() throws {
            let result = try runBinary(["--json", "info", "--device", "alsa:hw:29,0"])
            #expect(result.status == 1)
            let object = try #require(try jsonObjects(result.standardOutput).first)
            #expect(object["status"] as? String == "error")
            #expect((object["error"] as? [String: Any])?["code"] as? String == "audio_device_not_found")
        }

        @Test("an unknown device kind is a usage error")
        func unknownDevice() throws {
            let result = try runBinary(["--lang", "es", "info", "--device", "usb:3"])
            #expect(result.status == 64)
            #expect(result.standardError.contains("usb:3"))
        }
    }
}
