import Foundation
import GrokFleet
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

/// What a value decoded by JSONSerialization was in the JSON text: `string`, `integer`,
/// `number` (with a fraction or an exponent), `boolean`, `object`, `array` or `null`.
/// (JSONSerialization gives booleans and numbers both as NSNumber; the text tells them apart.)
func jsonKind(_ value: Any?) -> String {
    switch value {
    case nil: return "missing"
    case is String: return "string"
    case is [String: Any]: return "object"
    case is [Any]: return "array"
    case is NSNull: return "null"
    case let number as NSNumber:
        // Encoded on its own, the value shows what the text held: true/false, 12, 1.25.
        let text = String(decoding: (try? JSONSerialization.data(withJSONObject: [number], options: [.fragmentsAllowed])) ?? Data(),
                          as: UTF8.self)
        if text == "[true]" || text == "[false]" { return "boolean" }
        return text.contains(".") || text.contains("e") || text.contains("E") ? "number" : "integer"
    default: return "other"
    }
}

extension CLI {
    @Suite("--json event data keeps its types")
    struct FleetEventJSONTests {
        @Test("a real provision --json: counts are JSON integers, yes/no booleans, seconds numbers, codes strings")
        func provisionEventsAreTyped() throws {
            let world = try FleetWorld(devices: 1)
            let run = try world.provision(["--json"], devices: "sim:0")
            #expect(run.status == 0, "\(run.standardOutput)\n\(run.standardError)")
            let lines = run.standardOutput.split(separator: "\n")
            let events = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            #expect(events.count == lines.count, "every line is one JSON object")
            func data(_ name: String) -> [[String: Any]] {
                events.filter { $0["event"] as? String == name }.compactMap { $0["data"] as? [String: Any] }
            }
            // Every key keeps its name; each value its kind, in every event that has it.
            let expected: [String: [String: String]] = [
                "microphone_permission": ["granted": "boolean"],
                "automatic_firmware_update": ["enabled": "boolean"],
                "firmware_progress": ["done": "integer", "total": "integer", "image": "string"],
                "firmware_update_success": ["chunks": "integer", "resumed_chunks": "integer", "to": "string"],
                "after_firmware_update": ["updated": "boolean"],
                "step_started": ["step": "string"],
                "step_finished": ["step": "string", "result": "string", "code": "string", "detail": "string"],
                "device_finished": ["outcome": "string"],
            ]
            for (event, keys) in expected {
                let found = data(event)
                #expect(!found.isEmpty, "no \(event) event in \(run.standardOutput.prefix(2000))")
                for values in found {
                    for (key, kind) in keys {
                        #expect(jsonKind(values[key]) == kind, "\(event).\(key) is \(jsonKind(values[key])): \(values[key] ?? "nil")")
                    }
                }
            }
            // Seconds are JSON numbers (an integer when whole, as JSON writes 2.0), never text.
            for values in data("step_finished") + data("firmware_update_success") {
                for key in ["duration_s", "seconds"] where values[key] != nil {
                    #expect(["number", "integer"].contains(jsonKind(values[key])), "\(key) is \(jsonKind(values[key]))")
                }
            }
            #expect(data("step_finished").contains { jsonKind($0["duration_s"]) == "number" })
            // The update's bytes: both images, loader then reader, counted in one total.
            let progress = data("firmware_progress")
            #expect(progress.last?["done"] as? Int == 1024 + 61_440 && progress.last?["total"] as? Int == 1024 + 61_440)
            // The update says what it went from (the unit's facts are refreshed before it succeeds).
            #expect(data("firmware_update_success").first?["from"] as? String == "1.7.3")
            #expect(data("firmware_update_success").first?["to"] as? String == "1.8.0")
            let finished = try #require(events.last)
            #expect(finished["event"] as? String == "run_finished" && jsonKind(finished["devices"]) == "integer")

            // The same lines decode back into the same typed events.
            let decoded = try lines.dropLast().map { try JSONDecoder().decode(FleetEvent.self, from: Data($0.utf8)) }
            let last = try #require(decoded.last { $0.event == "firmware_progress" })
            #expect(last.data["done"] == .integer(62_464) && last.data["image"] == "reader")
            #expect(decoded.first { $0.event == "microphone_permission" }?.data["granted"] == true)
        }
    }
}
