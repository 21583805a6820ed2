import Foundation
import GrokAudio
import GrokTestSupport
import GrokkerEmulator
import GrokProtocol
import Testing
import UGrokIt

@Suite("Factory provisioning over the link")
struct ProvisioningTests {
    @Test("the record is GetVersion's; each Provision* write is saved on the reader and GetVersion reports it")
    func provisioning() throws {
        let rig = try Rig()
        try rig.session.connect()
        let fresh = try rig.session.provisioningRecord()
        #expect(fresh.antennaType == 0 && fresh.status == .none && !fresh.provisioningMode)
        #expect(fresh.serialNumber == rig.session.info?.serialNumber)

        // Provisioning mode is GetVersion flag 01 instead of 02.
        #expect(try rig.session.setProvisioningMode(true).provisioningMode)
        #expect(rig.session.versionRequest.flags == .provisioningMode)
        try rig.session.registerSerialNumber(12_345_678)
        #expect(rig.session.info?.serialNumber == 12_345_678)
        #expect(try rig.session.setAntennaType(2).antennaType == 2)
        try rig.session.setHardwareRevision(4)
        #expect(rig.session.info?.hardwareRevision == 4)
        #expect(try rig.session.setProvisioningStatus(.complete).status == .complete)
        #expect(try rig.session.provisioningRecord().provisioned)
        try rig.session.setRegion("fcc")
        try rig.session.setUserHasSetRegion(false)
        #expect(try !rig.session.provisioningRecord().userHasSetRegion)
        try rig.session.setProvisioningMode(false)
        #expect(rig.session.versionRequest.flags == .enforceRegion)

        let saved = rig.grokker.store.state
        #expect(saved.serialNumber == 12_345_678 && saved.antennaType == 2 && saved.hardwareRevision == 4)
        #expect(saved.provisioningStatus == .complete && !saved.provisioning.userHasSetRegion)
    }

    @Test("a state.json written before provisioning existed still opens, with nothing provisioned")
    func oldStateFile() throws {
        let bench = TemporaryDirectory("ugrokit")
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
