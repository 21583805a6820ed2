import GrokAudio
import Foundation
import GrokBasics
import GrokProtocol
import GrokTestSupport
import Testing

@testable import GrokkerEmulator

@Suite("Device state")
struct DeviceStateTests {
    @Test("a Grokker used for the first time starts out of the box")
    func outOfBox() throws {
        let temp = TemporaryDirectory("grok-emulator-tests")
        defer { temp.remove() }
        var rng = SplitMix64(seed: 7)
        let store = try DeviceStateStore.openOrCreate(deviceDirectory: temp.file("unit"), using: &rng)
        let state = store.state
        #expect(DeviceState.serialNumberRange.contains(state.serialNumber))
        #expect(ReaderInfo.formatSerialNumber(state.serialNumber).count == 8)
        #expect(state.firmwareVersion == FirmwareVersion(major: 1, minor: 7, build: 3))
        #expect(state.loaderVersion == DeviceState.outOfBoxLoader)
        #expect(state.region == nil)
        #expect(state.provisioning == .outOfBox)
        #expect(!state.provisioning.userHasSetRegion)
        #expect(state.userMustSetRegion)
        #expect(state.batteryPercent == 100)
        // Saved before openOrCreate returns.
        #expect(store.stateFile == temp.file("unit/state.json"))
        let json = try String(contentsOfFile: store.stateFile, encoding: .utf8)
        #expect(json.contains("\"format\" : 1"))
        #expect(json.contains("\"firmwareVersion\" : \"1.7.3\""))
    }

    @Test("each new unit draws its own serial number, and keeps it")
    func serialNumbers() throws {
        let temp = TemporaryDirectory("grok-emulator-tests")
        defer { temp.remove() }
        let first = try DeviceStateStore.openOrCreate(directory: temp.path, index: 0)
        let second = try DeviceStateStore.openOrCreate(directory: temp.path, index: 1)
        #expect(first.deviceDirectory == temp.file("sim-0"))
        #expect(second.deviceDirectory == temp.file("sim-1"))
        #expect(first.state.serialNumber != second.state.serialNumber)
        let reopened = try DeviceStateStore.openOrCreate(directory: temp.path, index: 0)
        #expect(reopened.state == first.state)
    }

    @Test("a second open sees what the first changed")
    func persistence() throws {
        let temp = TemporaryDirectory("grok-emulator-tests")
        defer { temp.remove() }
        var rng = SplitMix64(seed: 1)
        let store = try DeviceStateStore.openOrCreate(deviceDirectory: temp.path, using: &rng)
        let region = RegionSetting(name: "ETSI (EU)", number: 2)
        try store.update {
            $0.region = region
            $0.provisioning.userHasSetRegion = true
            $0.firmwareVersion = FirmwareVersion(major: 1, minor: 8, build: 0)
            $0.batteryPercent = 42
        }
        #expect(store.state.region == region)
        var other = SplitMix64(seed: 2)
        let again = try DeviceStateStore.openOrCreate(deviceDirectory: temp.path, using: &other)
        #expect(again.state == store.state)
        #expect(again.state.region == region)
        #expect(again.state.provisioning.userHasSetRegion)
        #expect(again.state.firmwareVersion.description == "1.8.0")
        #expect(!again.state.userMustSetRegion)
        // Only state.json is left behind: no temp files.
        #expect(try FileManager.default.contentsOfDirectory(atPath: temp.path) == ["state.json"])
    }

    @Test("an update that changes nothing writes nothing")
    func noOpUpdate() throws {
        let temp = TemporaryDirectory("grok-emulator-tests")
        defer { temp.remove() }
        var rng = SplitMix64(seed: 3)
        let store = try DeviceStateStore.openOrCreate(deviceDirectory: temp.path, using: &rng)
        try FileManager.default.removeItem(atPath: store.stateFile)
        try store.update { $0.batteryPercent = 100 }
        #expect(!FileManager.default.fileExists(atPath: store.stateFile))
    }

    @Test("a failed save leaves the state as it was")
    func failedSave() throws {
        let temp = TemporaryDirectory("grok-emulator-tests")
        defer { temp.remove() }
        var rng = SplitMix64(seed: 4)
        let store = try DeviceStateStore.openOrCreate(deviceDirectory: temp.file("unit"), using: &rng)
        let before = store.state
        try FileManager.default.removeItem(atPath: store.deviceDirectory)
        #expect {
            try store.update { $0.batteryPercent = 5 }
        } throws: { error in
            guard let error = error as? EmulatorError, case .stateWriteFailed(let path, _) = error else { return false }
            return path == store.stateFile && error.code == "emulator_state_write_failed"
        }
        #expect(store.state == before)
    }

    @Test(
        "a corrupt state file is an error naming the file, never a silent reset",
        arguments: [
            "{not json",
            "",
            "{\"format\": 1}",
            "{\"format\": 1, \"serialNumber\": -5}",
        ])
    func corrupt(contents: String) throws {
        let temp = TemporaryDirectory("grok-emulator-tests")
        defer { temp.remove() }
        let file = temp.file("state.json")
        try Data(contents.utf8).write(to: URL(fileURLWithPath: file))
        var rng = SplitMix64(seed: 5)
        #expect {
            _ = try DeviceStateStore.openOrCreate(deviceDirectory: temp.path, using: &rng)
        } throws: { error in
            guard let error = error as? EmulatorError, case .stateCorrupt(let path, _) = error else { return false }
            return path == file && error.description.contains(file) && error.description.contains("delete it")
        }
        // The file is left as it was for the technician to inspect.
        #expect(try String(contentsOfFile: file, encoding: .utf8) == contents)
    }

    @Test("out-of-range values and newer formats are refused")
    func invalidValues() throws {
        let temp = TemporaryDirectory("grok-emulator-tests")
        defer { temp.remove() }
        var rng = SplitMix64(seed: 6)
        let store = try DeviceStateStore.openOrCreate(deviceDirectory: temp.path, using: &rng)
        let good = try String(contentsOfFile: store.stateFile, encoding: .utf8)

        try Data(good.replacingOccurrences(of: "\"batteryPercent\" : 100", with: "\"batteryPercent\" : 150").utf8)
            .write(to: URL(fileURLWithPath: store.stateFile))
        #expect {
            _ = try DeviceStateStore.openOrCreate(deviceDirectory: temp.path, using: &rng)
        } throws: { error in
            guard case .stateCorrupt(_, let detail) = error as? EmulatorError else { return false }
            return detail == ErrorDetail("battery_above_100")
        }

        try Data(good.replacingOccurrences(of: "\"format\" : 1", with: "\"format\" : 99").utf8)
            .write(to: URL(fileURLWithPath: store.stateFile))
        #expect(throws: EmulatorError.stateTooNew(path: store.stateFile, format: 99, supported: DeviceState.currentFormat)) {
            _ = try DeviceStateStore.openOrCreate(deviceDirectory: temp.path, using: &rng)
        }
    }

    @Test("an unreadable state file (a directory, a FIFO) or unusable directory is an error naming it, without blocking")
    func unreadable() throws {
        let temp = TemporaryDirectory("grok-emulator-tests")
        defer { temp.remove() }
        // state.json is a directory: it exists but cannot be read as a file.
        try FileManager.default.createDirectory(atPath: temp.file("unit/state.json"), withIntermediateDirectories: true)
        var rng = SplitMix64(seed: 8)
        #expect {
            _ = try DeviceStateStore.openOrCreate(deviceDirectory: temp.file("unit"), using: &rng)
        } throws: { error in
            guard let error = error as? EmulatorError, case .stateUnreadable(let path, _) = error else { return false }
            return path == temp.file("unit/state.json") && error.description.contains(path)
        }
        // state.json is a FIFO (issue 27, item 6): refused at once, naming it, instead of a read
        // that waits for a writer forever.
        try FileManager.default.createDirectory(atPath: temp.file("fifo"), withIntermediateDirectories: true)
        #expect(mkfifo(temp.file("fifo/state.json"), 0o644) == 0)
        #expect {
            _ = try DeviceStateStore.openOrCreate(deviceDirectory: temp.file("fifo"), using: &rng)
        } throws: { error in
            guard let error = error as? EmulatorError, case .stateUnreadable(let path, let detail) = error else { return false }
            return path == temp.file("fifo/state.json") && detail.code == "not_a_regular_file" && error.description.contains(path)
        }
        // The device directory is a regular file.
        try Data("x".utf8).write(to: URL(fileURLWithPath: temp.file("plain")))
        #expect {
            _ = try DeviceStateStore.openOrCreate(deviceDirectory: temp.file("plain"), using: &rng)
        } throws: { error in
            guard case .directory(let path, _) = error as? EmulatorError else { return false }
            return path == temp.file("plain")
        }
    }

    @Test("the state encodes to JSON and back")
    func codable() throws {
        var state = DeviceState.outOfBox(serialNumber: 12_345_678)
        state.region = RegionSetting(name: "Japan (unlicensed)", number: 6)
        let data = try JSONEncoder().encode(state)
        #expect(try JSONDecoder().decode(DeviceState.self, from: data) == state)
    }

    @Test("the region table a SetRegion gave is kept in state.json as its 120 bytes in hex; anything else there is refused")
    func regionTable() throws {
        var state = DeviceState.outOfBox(serialNumber: 12_345_679)
        state.region = RegionSetting(name: "Japan (unlicensed)", number: 6)
        state.regionTable = try VendorRegionEntry(try #require(RegionCatalog.entry(number: 6)))
        let data = try JSONEncoder().encode(state)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect((object["regionTable"] as? String)?.count == 2 * VendorRegionEntry.byteCount)
        #expect(try JSONDecoder().decode(DeviceState.self, from: data) == state)
        for bad in ["zz", "00", String(repeating: "0", count: 2 * VendorRegionEntry.byteCount - 1)] {
            var broken = object
            broken["regionTable"] = bad
            let text = try JSONSerialization.data(withJSONObject: broken)
            #expect(throws: DecodingError.self, "\(bad)") { _ = try JSONDecoder().decode(DeviceState.self, from: text) }
        }
    }
}

@Suite("Device state: password and antenna tuning")
struct DeviceStateLaterFieldsTests {
    @Test("a format-1 state without password or tuning still loads; a state with a password is format 2 and round-trips")
    func compatibility() throws {
        let old = """
        { "batteryPercent" : 100, "firmwareVersion" : "1.7.3", "format" : 1, "hardwareRevision" : 3,
          "loaderVersion" : "1.2.0", "provisioning" : { "enforceRegion" : true, "provisioned" : true,
          "userCanSetRegion" : true, "userHasSetRegion" : false }, "serialNumber" : 48213377 }
        """
        let state = try DeviceStateStore.decodeState(Data(old.utf8), path: "state.json")
        #expect(state.password == nil)
        #expect(state.antennaTuning.isEmpty)
        #expect(String(decoding: DeviceStateStore.encodeState(state), as: UTF8.self).contains("\"format\" : 1"))
        var locked = state
        locked.password = PasswordHash(salt: String(repeating: "ab", count: 16), sha256: String(repeating: "0", count: 64))
        locked.antennaTuning = ["865700": 7]
        let data = DeviceStateStore.encodeState(locked)
        #expect(String(decoding: data, as: UTF8.self).contains("\"format\" : 2"))
        #expect(try DeviceStateStore.decodeState(data, path: "state.json") == locked)
    }

    @Test("the antenna model: tuning finds the best setting, at least 3 steps from the factory's")
    func antennaModel() {
        for kHz in AntennaModel.channelsKHz(for: RegionCatalog.find("fcc")!.setting) {
            let best = AntennaModel.tune(serial: 48_213_377, kHz: kHz)
            #expect(best == AntennaModel.bestCode(serial: 48_213_377, kHz: kHz))
            #expect(abs(best - AntennaModel.factoryCode) >= 3)
            #expect(AntennaModel.returnLossDB(code: best, serial: 48_213_377, kHz: kHz)
                >= AntennaModel.returnLossDB(code: AntennaModel.factoryCode, serial: 48_213_377, kHz: kHz) + 3.5)
        }
    }
}
