import Foundation
import GrokAudio
import GrokkerEmulator
import GrokProtocol
import Testing
import UGrokIt

@Suite("Factory provisioning over the link")
struct ProvisioningTests {
    @Test("writes need provisioning mode; each is saved and reported; the mode ends at a restart")
    func provisioning() throws {
        let rig = try Rig()
        try rig.session.connect()
        let fresh = try rig.session.provisioningRecord()
        #expect(fresh.antennaType == 0 && fresh.status == .none && !fresh.provisioningMode && fresh.provisioned)
        #expect(fresh.serialNumber == rig.session.info?.serialNumber)

        // Outside provisioning mode every write is refused and nothing changes.
        let before = rig.grokker.handler.store.state
        #expect(throws: ReaderError.self) { try rig.session.setAntennaType(2) }
        #expect(throws: ReaderError.self) { try rig.session.registerSerialNumber(12_345_678) }
        #expect(rig.grokker.handler.store.state == before)

        #expect(try rig.session.setProvisioningMode(true).provisioningMode)
        try rig.session.registerSerialNumber(12_345_678)
        #expect(rig.session.info?.serialNumber == 12_345_678)
        #expect(try rig.session.setAntennaType(2).antennaType == 2)
        try rig.session.setHardwareRevision(4)
        #expect(rig.session.info?.hardwareRevision == 4)
        #expect(try rig.session.setProvisioningStatus(.complete).status == .complete)
        // "User has set region" needs a region; clearing it forgets the region.
        #expect(throws: ReaderError.self) { try rig.session.setUserHasSetRegion(true) }
        try rig.session.setRegion("fcc")
        #expect(rig.grokker.handler.store.state.provisioning.userHasSetRegion)
        try rig.session.setUserHasSetRegion(false)
        #expect(rig.session.info?.region == nil && rig.session.info?.userMustSetRegion == true)
        try rig.session.setProvisioningMode(false)

        let saved = rig.grokker.handler.store.state
        #expect(saved.serialNumber == 12_345_678 && saved.antennaType == 2 && saved.hardwareRevision == 4)
        #expect(saved.provisioningStatus == .complete && saved.region == nil && !saved.provisioning.userHasSetRegion)

        // The mode is RAM: a restart ends it.
        try rig.session.setProvisioningMode(true)
        rig.grokker.handler.restarted()
        #expect(!(try rig.session.provisioningRecord().provisioningMode))
        #expect(throws: ReaderError.self) { try rig.session.setAntennaType(3) }
    }

    @Test("a state.json written before provisioning existed still opens, with nothing provisioned")
    func oldStateFile() throws {
        let bench = TempBench()
        let directory = bench.path + "/sim-0"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let old = """
            {"batteryPercent": 80, "firmwareVersion": "1.7.3", "format": 1, "hardwareRevision": 3, "loaderVersion": "1.2.0",
             "provisioning": {"enforceRegion": true, "provisioned": true, "userCanSetRegion": true, "userHasSetRegion": false},
             "serialNumber": 48213377}
            """
        try Data(old.utf8).write(to: URL(fileURLWithPath: directory + "/state.json"))
        let store = try DeviceStateStore.openOrCreate(directory: bench.path, index: 0)
        #expect(store.state.serialNumber == 48_213_377 && store.state.antennaType == 0 && store.state.provisioningStatus == .none)
        #expect(store.state.batteryPercent == 80)
    }
}
