import Foundation
import GrokProtocol
import GrokTestSupport
import Testing

@testable import GrokkerEmulator

/// Scene files (docs/scene.md): the demo scene, malformed files, and the field's saved state.
@Suite struct RFSceneTests {
    static let demoPath = packageRoot + "/profiles/scenes/demo.json"

    @Test func theDemoSceneLoadsAndEveryKindOfTagIsThere() throws {
        let scene = try RFScene.load(path: Self.demoPath)
        #expect((20...40).contains(scene.tags.count))
        #expect(scene.tags.filter { $0.epc.first == 0x30 }.count >= 3)  // SGTIN-96
        #expect(scene.tags.filter { $0.epc.first == 0x31 }.count >= 3)  // SSCC-96
        #expect(scene.tags.filter { $0.tid.map { Array($0.prefix(12)) } == $0.epc }.count == 2)  // unprogrammed
        #expect(scene.tags.contains { $0.lock.epc == .writeRestricted && $0.accessPassword != 0 })
        for tag in scene.tags {
            if case .distance(let meters) = tag.placement { #expect((0.3...6).contains(meters)) }
        }
        // Every tag is in range at full power on the middle channel, at t = 0.
        var field = RFField(scene: scene)
        field.setCarrier(RFCarrier(powerDBm: 30, frequencyMHz: 915), at: 0)
        #expect(field.tags.indices.allSatisfy { field.isReachable($0, at: 0, carrier: field.carrier!) })
        // And an inventory finds them all.
        var inventory = Gen2Inventory(configuration: RFFixtures.configuration(toggleAfter: 2))
        var found: Set<Int> = []
        inventory.run(in: &field, from: 0, maxRounds: 20) { round in
            found.formUnion(round.reads.map(\.tagIndex))
            return true
        }
        #expect(found.count == scene.tags.count)
    }

    @Test func encodingAndDecodingGiveTheSameScene() throws {
        let scene = try RFScene.load(path: Self.demoPath)
        let again = try RFScene.decode(scene.encoded(), path: "memory")
        #expect(again == scene)
    }

    /// A minimal valid tag object with one key replaced or added.
    static func sceneJSON(tags: [String]) -> Data {
        Data("{\"format\": 1, \"tags\": [\(tags.joined(separator: ","))]}".utf8)
    }

    static let good = "{\"epc\": \"3034257BF4789000000003E8\", \"distance_m\": 1}"

    static let malformed: [(name: String, json: Data, code: String, keyPath: String?, mentions: String)] = [
        ("bad JSON", Data("{\"tags\": [".utf8), "scene_not_json", nil, "not valid JSON"),
        ("tags not an array", Data("{\"tags\": 3}".utf8), "scene_invalid_value", "tags", "the number 3"),
        (
            "wrong-length EPC", sceneJSON(tags: [good, "{\"epc\": \"3034257BF4\", \"distance_m\": 1}"]),
            "scene_invalid_value", "tags[1].epc", "5 bytes"
        ),
        (
            "odd hex", sceneJSON(tags: ["{\"epc\": \"3034257BF4789000000003E\", \"distance_m\": 1}"]),
            "scene_invalid_value", "tags[0].epc", "23 hex digits"
        ),
        (
            "not hex", sceneJSON(tags: [good, good, good, "{\"epc\": \"3034257BF47890000000G3E8\", \"distance_m\": 1}"]),
            "scene_invalid_value", "tags[3].epc", "'G' at position 21"
        ),
        (
            "unknown lock value", sceneJSON(tags: ["{\"epc\": \"3034257BF4789000000003E8\", \"distance_m\": 1, \"lock\": {\"user\": \"locked\"}}"]),
            "scene_invalid_value", "tags[0].lock.user", "write_restricted"
        ),
        (
            "distance and path loss", sceneJSON(tags: [good, "{\"epc\": \"3034257BF4789000000003E8\", \"distance_m\": 1, \"path_loss_db\": 40}"]),
            "scene_conflicting_keys", "tags[1]", "path_loss_db"
        ),
        (
            "negative distance", sceneJSON(tags: ["{\"epc\": \"3034257BF4789000000003E8\", \"distance_m\": -2}"]),
            "scene_invalid_value", "tags[0].distance_m", "-2"
        ),
        (
            "no placement", sceneJSON(tags: ["{\"epc\": \"3034257BF4789000000003E8\"}"]),
            "scene_missing_key", "tags[0].distance_m", "path_loss_db"
        ),
        (
            "no EPC", sceneJSON(tags: ["{\"distance_m\": 1}"]),
            "scene_missing_key", "tags[0].epc", "hex"
        ),
        (
            "misspelt key", sceneJSON(tags: ["{\"epc\": \"3034257BF4789000000003E8\", \"distance\": 1}"]),
            "scene_unknown_key", "tags[0].distance", "distance_m"
        ),
        (
            "EPC of the wrong type", sceneJSON(tags: ["{\"epc\": 12, \"distance_m\": 1}"]),
            "scene_invalid_value", "tags[0].epc", "the number 12"
        ),
        (
            "short password", sceneJSON(tags: ["{\"epc\": \"3034257BF4789000000003E8\", \"distance_m\": 1, \"access_password\": \"1234\"}"]),
            "scene_invalid_value", "tags[0].access_password", "8 hex digits"
        ),
        (
            "motion going back in time",
            sceneJSON(tags: ["{\"epc\": \"3034257BF4789000000003E8\", \"motion\": [{\"t_s\": 2, \"distance_m\": 1}, {\"t_s\": 1, \"distance_m\": 2}]}"]),
            "scene_invalid_value", "tags[0].motion[1].t_s", "previous waypoint"
        ),
        (
            "PC disagreeing with the EPC", sceneJSON(tags: ["{\"epc\": \"3034257BF4789000000003E8\", \"pc\": \"3800\", \"distance_m\": 1}"]),
            "scene_invalid_value", "tags[0].pc", "7 words"
        ),
        ("newer format", Data("{\"format\": 2, \"tags\": []}".utf8), "scene_too_new", nil, "format 2"),
    ]

    @Test("malformed scenes name the file, the key path, what was expected and found", arguments: malformed.indices)
    func malformedScene(index: Int) throws {
        let example = Self.malformed[index]
        let directory = TemporaryDirectory("grok-emulator-tests")
        defer { directory.remove() }
        let path = directory.file("scene-\(index).json")
        try example.json.write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: SceneError.self, "\(example.name)") { try RFScene.load(path: path) }
        #expect(error?.code == example.code, "\(example.name): \(String(describing: error))")
        #expect(error?.keyPath == example.keyPath, "\(example.name): \(String(describing: error))")
        #expect(error?.description.contains(path) == true)
        #expect(error?.description.contains(example.mentions) == true, "\(example.name): \(String(describing: error))")
        #expect(error?.arguments.first == path)
    }

    @Test func aMissingFileIsUnreadable() {
        let error = #expect(throws: SceneError.self) { try RFScene.load(path: "/nonexistent/scene.json") }
        #expect(error?.code == "scene_unreadable")
        #expect(error?.description.contains("/nonexistent/scene.json") == true)
    }

    @Test func stateSurvivesSaveAndLoad() throws {
        let directory = TemporaryDirectory("grok-emulator-tests")
        defer { directory.remove() }
        let scene = try RFScene.load(path: Self.demoPath)
        var field = RFField(scene: scene)
        field.setCarrier(RFCarrier(powerDBm: 30, frequencyMHz: 915), at: 0)
        let first = scene.tags[0].epc
        let newEPC: [UInt8] = [0x30, 0x34, 0x25, 0x7B, 0xF4, 0x78, 0x90, 0, 0, 0, 0x12, 0x34]
        #expect(field.programEPC(epc: first, newEPC: newEPC, at: 1) == .ok)
        #expect(field.write(epc: scene.tags[1].epc, bank: .user, wordPointer: 0, words: [], at: 1) == .generalError)
        // Tag 2 (5.5 m) is read at 30 dBm but gets too little power to write (or lock); tag 3 (1.8 m) has it.
        #expect(field.lock(epc: scene.tags[2].epc, payload: Gen2LockPayload(setting: [.epc: .permanentlyNotWritable]), at: 1) == .generalError)
        #expect(field.lock(epc: scene.tags[3].epc, payload: Gen2LockPayload(setting: [.epc: .permanentlyNotWritable]), at: 1) == .ok)
        let locked = try #require(scene.tags.firstIndex { $0.accessPassword != 0 && $0.killPassword != 0 })
        #expect(field.kill(epc: scene.tags[locked].epc, killPassword: scene.tags[locked].killPassword, at: 1) == .ok)

        let path = directory.file("field-state.json")
        try field.saveState(to: path)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["field-state.json"])

        var restored = RFField(scene: scene)
        #expect(try restored.loadState(from: path))
        #expect(restored.state == field.state)
        #expect(restored.tags[0].epc == newEPC)
        #expect(restored.tags[0].memory.storedCRC == field.tags[0].memory.storedCRC)
        #expect(restored.tags[3].memory.locks.epc == .permanentlyNotWritable)
        #expect(restored.tags[2].memory.locks.epc == .writable)
        #expect(restored.tags[locked].isKilled)

        // No file: nothing changes.
        var fresh = RFField(scene: scene)
        #expect(try fresh.loadState(from: directory.file("none.json")) == false)
        #expect(fresh.tags[0].epc == first)

        // A state of another scene is refused.
        var other = RFField(scene: RFFixtures.uniformScene(count: 3))
        let error = #expect(throws: SceneError.self) { try other.loadState(from: path) }
        #expect(error?.code == "scene_state_mismatch")

        // A damaged state names the key.
        let text = try String(contentsOfFile: path, encoding: .utf8).replacingOccurrences(of: "\"killed\" : true", with: "\"killed\" : 1")
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let damaged = #expect(throws: SceneError.self) { try restored.loadState(from: path) }
        #expect(damaged?.code == "scene_invalid_value")
        #expect(damaged?.keyPath == "tags[\(locked)].killed")
    }

    @Test func motionIsInterpolatedLinearly() {
        let placement = TagPlacement.motion([.init(time: 0, distance: 5), .init(time: 10, distance: 1), .init(time: 20, distance: 5)])
        #expect(placement.distance(at: -1) == 5)
        #expect(placement.distance(at: 5) == 3)
        #expect(placement.distance(at: 15) == 3)
        #expect(placement.distance(at: 30) == 5)
        #expect(abs(RFLinkBudget.freeSpacePathLoss(meters: 1, frequencyMHz: 915) - 31.67) < 0.01)
        #expect(RFLinkBudget.freeSpacePathLoss(meters: 0, frequencyMHz: 915) == 0)
    }
}
