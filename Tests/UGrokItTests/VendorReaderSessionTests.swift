import GrokBasics
import GrokAudio
import GrokLink
import GrokProtocol
import Testing
@testable import UGrokIt

/// The vendor-protocol session against the captures of the vendor host library: for each
/// call, the packets our session puts on the wire equal those the vendor host sent for the
/// same call, and every answer the emulated Grokker gave the vendor host is accepted.
@Suite("ReaderSession: our packets equal the vendor host's, and the vendor peer's answers are accepted")
struct VendorReaderSessionTests {
    @Test("connect sends the vendor's GetVersion and reads the version and battery as the vendor host did")
    func connectAndBattery() throws {
        let fixtures = try VendorFixture.scenario("connect").filter { $0.step != "disconnect" }
        let bench = try VendorBench(fixtures: fixtures)
        let info = try bench.session.connect()
        let battery = try bench.session.batteryInfo()
        #expect(bench.device.hostPackets == fixtures.flatMap(\.hostSends))
        // The vendor host reported: GR-1, revision 6, firmware 1.8.0, serial 1234567, region 0,
        // 30 dBm, -85, 4 volume levels, 8 tones; 3.90 V, 87 %, 121 minutes, can scan.
        #expect(info.hardwareModel == "GR-1")
        #expect(info.hardwareRevision == 6)
        #expect(info.firmwareVersion == FirmwareVersion(major: 1, minor: 8, build: 0))
        #expect(info.serialNumber == 1_234_567)
        #expect(info.region?.name == "FCC (US), IC (Canada)")
        #expect(info.maxPowerTenthsDBm == 300)
        #expect(info.maxSensitivityTenthsDBm == -850)
        #expect(info.numVolumeLevels == 4)
        #expect(info.maxTonesInSound == 8)
        #expect(info.userCanSetRegion && !info.userMustSetRegion)
        #expect(battery.percentRemaining == 87)
        #expect(battery.minutesRemaining == 121)
        #expect(battery.millivolts == 3900)
        #expect(battery.canScan)
        #expect(bench.session.linkStatistics.sendRetries == 0)
    }

    @Test("GetVersion carries flag 01 in provisioning mode and 00 without region enforcement",
          arguments: [("provisioning-mode", true, true), ("no-region-enforcement", false, false)])
    func versionFlags(scenario: String, provisioning: Bool, enforce: Bool) throws {
        let fixtures = try VendorFixture.scenario(scenario)
        let bench = try VendorBench(fixtures: fixtures)
        bench.session.provisioningMode = provisioning
        bench.session.enforceRegion = enforce
        try bench.session.connect()
        #expect(bench.device.hostPackets == fixtures.flatMap(\.hostSends))
    }

    @Test("sounds, play sound, diagnostics, temperature, test flags, pause and battery go out as the vendor's")
    func commands() throws {
        let fixtures = try VendorFixture.scenario("commands")
        let bench = try VendorBench(fixtures: fixtures)
        let s = bench.session
        for fixture in fixtures {
            switch fixture.step {
            case "connect": try s.connect()
            case "geiger-sound":
                try s.setGeigerCounterSound(UgiGeigerCounterSound(frequency: 1000, clickDurationMsec: 20, clickRate: 2.5,
                                                                  maxClicksPerSecond: 10, historyDepthMsec: 300))
            case "found-item-sound":
                try s.setFoundItemSound([UgiTone(frequencyHz: 1500, durationMs: 100), UgiTone(frequencyHz: 2000, durationMs: 50)])
            case "found-last-item-sound": try s.setFoundLastItemSound([UgiTone(frequencyHz: 1000, durationMs: 200)])
            case "play-sound": try s.playSound(1)
            case "diagnostics": #expect(try s.diagnostics().reader == nil)
            case "temperature": #expect(try s.temperature() == nil)
            case "test-flags": try s.call(.setTestFlags(1, 2))
            case "pause-connection": try s.pause(ms: 500)
            case "battery": _ = try s.batteryInfo()
            default: Issue.record("no call for step \(fixture.step)")
            }
        }
        #expect(bench.device.hostPackets == fixtures.flatMap(\.hostSends))
        // The vendor host serves the sounds from its cache; so do we.
        if case .tones(_, let tones) = try s.configuration(.foundLastItemSound) {
            #expect(tones == [GrokProtocol.VendorTone(frequencyHz: 1000, durationMs: 200)])
        } else {
            Issue.record("found-last-item sound not cached")
        }
    }

    @Test("SetRegion sends a region entry as the vendor host does (CRC-32 then 119 bytes), for each of the 22 built-in entries")
    func regions() throws {
        let fixtures = try VendorFixture.scenario("regions")
        #expect(fixtures.count == 23)
        let bench = try VendorBench(fixtures: fixtures)
        try bench.session.connect()
        for fixture in fixtures where fixture.step == "set-region" {
            let index = Int(fixture.args[0])!
            // The vendor's built-in entry, as its capture carries it.
            guard case .request(let sent) = ScriptedPacket(hex: fixture.hostSends[0]) else {
                Issue.record("not a request")
                return
            }
            let entry = try VendorRegionEntry(setRegionPayload: sent.payload)
            try bench.session.setRegion(entry)
            #expect(bench.session.version?.regionIndex == UInt8(index))
        }
        #expect(bench.device.hostPackets == fixtures.flatMap(\.hostSends))
        #expect(bench.session.info?.region?.name == "Singapore")
    }

    @Test("provisioning sub-ops 00-04 go out as the vendor's")
    func provisioning() throws {
        let fixtures = try VendorFixture.scenario("provisioning")
        let bench = try VendorBench(fixtures: fixtures)
        bench.session.provisioningMode = true
        let s = bench.session
        for fixture in fixtures {
            switch fixture.step {
            case "connect": try s.connect()
            case "provision-register":
                let constants = VendorBatteryCurves.provisioningConstants(hardwareRevision: 6)
                try s.provision(.register(hardwareRevision: 6, batteryConstantA: constants.a, batteryConstantB: constants.b,
                                          serialNumber: 4242, internalId: 0x1122_3344_5566_7788, antennaType: 1))
            case "provision-status": try s.provision(.setStatus(2))
            case "provision-antenna": try s.provision(.setAntennaType(3))
            case "provision-hw-rev": try s.provision(.setHardwareRevision(7))
            case "user-has-set-region": try s.provision(.setUserHasSetRegion(fixture.args[0] == "1"))
            default: Issue.record("no call for step \(fixture.step)")
            }
        }
        #expect(bench.device.hostPackets == fixtures.flatMap(\.hostSends))
    }

    @Test("each preset's inventory start, the answers to every reader packet and the stop equal the vendor host's")
    func inventoryPresets() throws {
        let fixtures = try VendorFixture.scenario("inventory-presets")
        let bench = try VendorBench(fixtures: fixtures)
        let s = bench.session
        var states: [VendorInventoryState] = []
        s.inventoryStateListeners.append { states.append($0) }
        try s.connect()
        var epcs: Set<[UInt8]> = []
        for fixture in fixtures where fixture.step == "inventory" {
            let type = UgiInventoryType(rawValue: Int(fixture.args[1])!)!
            try s.startInventory(UgiRfidConfiguration.config(inventoryType: type))
            // Stop where the vendor host did: [start, answers..., ACK_1, ACK_0 to completed].
            let answers = fixture.hostSends.count - 3
            try s.collect(forAtMost: 30) { s.inventory!.packetsAnswered >= answers }
            #expect(try s.stopInventory() == .completed(.ok))
            for read in s.takeReads() { epcs.insert(read.epc) }
            try s.idle(forAtMost: 0.1)
        }
        #expect(bench.device.hostPackets == fixtures.flatMap(\.hostSends))
        #expect(epcs == [hexBytes("300833b2ddd9014000000001"), hexBytes("300833b2ddd9014000000002")])
        #expect(states.count == 15)
        #expect(states.prefix(3) == [.running, .stopping, .completed(.ok)])
    }

    @Test("tag access rides in the answer to the next reader packet and returns the vendor result code")
    func tagAccess() throws {
        let fixtures = try VendorFixture.scenario("tag-access")
        let bench = try VendorBench(fixtures: fixtures)
        let s = bench.session
        let all = fixtures.flatMap(\.hostSends)
        let tag = try UgiEpc(hex: "300833b2ddd9014000000001")
        var sent = 0
        /// Lets the reader's packets be answered until the vendor host made the next call.
        func upTo(_ fixture: VendorFixture) throws {
            let before = sent + fixture.hostSends.count - 1 - 2  // minus GetVersion and the inventory start
            try s.collect(forAtMost: 30) { s.inventory!.packetsAnswered >= before }
        }
        for fixture in fixtures {
            switch fixture.step {
            case "connect": try s.connect()
            case "inventory-start":
                var configuration = UgiRfidConfiguration.config(inventoryType: .locateDistance)
                configuration.volume = 1
                try s.startInventory(configuration)
            case "read-tag":
                try upTo(fixture)
                let (result, data) = try s.readTag(tag, bank: .user, offset: 0, minBytes: 2, maxBytes: 4)
                #expect(result == .ok)
                #expect(data == hexBytes("a0a1a2a3a4a5a6a7"))
            case "write-tag":
                try upTo(fixture)
                #expect(try s.writeTag(tag, bank: .user, offset: 0, data: hexBytes("11112222")) == .ok)
            case "lock-tag":
                try upTo(fixture)
                // InventoryLockUnlockTag(epc, 3, 2): the second int (the password slot) goes first.
                #expect(try s.lockUnlockTag(tag, maskAndAction: 3, password: 2) == .ok)
            case "program-tag":
                try upTo(fixture)
                #expect(try s.programTag(tag, to: try UgiEpc(hex: "300833b2ddd90140000000ff")) == .ok)
            case "change-power":
                try upTo(fixture)
                try s.changePower(initial: 20, min: 15, max: 25)
            case "inventory-stop":
                // The vendor's ACK_1 answered the second packet of this step.
                try s.collect(forAtMost: 30) { s.inventory!.packetsAnswered >= sent - 2 + 1 }
                #expect(try s.stopInventory() == .completed(.ok))
                try s.idle(forAtMost: 0.1)
            default: Issue.record("no call for step \(fixture.step)")
            }
            sent += fixture.hostSends.count
        }
        #expect(bench.device.hostPackets == all)
        // The 06 result the peer sent after the power change ([00][00], no EPC) is refused, as the vendor did.
        #expect(s.inventory?.nacksSent == 1)
    }

    @Test("SINGLE_FIND stops after the first tag: ACK_1 after the mask in the answer to its first read")
    func singleFindStopsAfterOneTag() throws {
        let bench = try VendorBench(script: ["f0", "8111000101010c300833b2ddd90140000000018a", "800300160051"])
        try bench.session.connect(script: ())
        var configuration = UgiRfidConfiguration.config(inventoryType: .locateDistance)
        configuration.singleFindMode = true
        try bench.session.startInventory(configuration)
        try bench.session.collect(forAtMost: 10)
        try bench.session.idle(forAtMost: 0.2)
        #expect(bench.session.inventory?.state == .completed(.ok))
        #expect(bench.session.takeReads().map(\.epc) == [hexBytes("300833b2ddd9014000000001")])
        let stop = try ResponsePacket(id: 1, data: [0x02]).encoded()
        #expect(bench.device.hostPackets.suffix(2) == [hexText(stop), "f0"])
    }

    @Test("testConnection reconnects, sends ten echoes of 100 bytes as the vendor's and closes")
    func testConnection() throws {
        let fixture = try VendorFixture.scenario("extras").first { $0.step == "test-connection" }!
        let connect = try VendorFixture.scenario("extras").first { $0.step == "connect" }!
        let bench = try VendorBench(script: connect.hostReceived + connect.hostReceived)
        bench.device.echoes = true
        try bench.session.connect()
        #expect(try bench.session.testConnection() == 10)
        let ours = Array(bench.device.hostPackets.dropFirst())
        #expect(ours.count == fixture.hostSends.count)
        #expect(ours.first == fixture.hostSends.first)
        for (mine, theirs) in zip(ours.dropFirst(), fixture.hostSends.dropFirst()) {
            // 0x8c 0x64: echo, 100 bytes (random content on both sides).
            #expect(mine.prefix(4) == theirs.prefix(4))
            #expect(mine.count == theirs.count)
        }
        #expect(!bench.session.link.isConnected)
    }

    @Test("AutoConfig runs 12 spb 16 rounds, 10 spb 21, 8 spb 21 (a GetVersion and echoes each), keeps 8 and reconnects at it")
    func autoConfigKeepsTheFastest() throws {
        let capture = try VendorFixture.scenario("autoconfig")[0]
        let version = capture.hostReceived[0]
        let bench = try VendorBench(script: Array(repeating: version, count: 4))
        bench.device.echoes = true
        let kept = try bench.session.autoConfig()
        #expect(kept == 8)
        #expect(bench.device.echoSettings == Array(repeating: 12, count: 15) + Array(repeating: 10, count: 20)
            + Array(repeating: 8, count: 20))
        #expect(bench.session.link.samplesPerBit == 8 && bench.session.isConnected)
        // The vendor's capture, packet for packet: GetVersion (8005) and echoes of 100 bytes (8c64).
        #expect(bench.device.hostPackets.map { String($0.prefix(4)) } == capture.hostSends.map { String($0.prefix(4)) })
    }

    @Test("AutoConfig falls back to 36 spb when the first echo at 12 spb fails")
    func autoConfigFallsBack() throws {
        let version = try VendorFixture.scenario("autoconfig")[0].hostReceived[0]
        let bench = try VendorBench(script: Array(repeating: version, count: 3))
        bench.device.echoes = true
        bench.device.refuseEchoesBelowSamplesPerBit = 36
        #expect(try bench.session.autoConfig() == 36)
        #expect(bench.device.echoSettings.first == 12)
        #expect(bench.device.echoSettings.filter { $0 == 12 }.count == 1)
        #expect(bench.device.echoSettings.filter { $0 == 36 }.count == 15)
        #expect(bench.session.link.samplesPerBit == 36 && bench.session.isConnected)
    }

    @Test("AutoConfig fastest first: connected at 8 spb, 20 echoes there finish it; no second handshake, no second GetVersion")
    func autoConfigFastestFirstKeepsTheFirstThatPasses() throws {
        let version = try VendorFixture.scenario("autoconfig")[0].hostReceived[0]
        let bench = try VendorBench(script: Array(repeating: version, count: 2))
        bench.device.echoes = true
        bench.session.samplesPerBit = 8
        try bench.session.connect()
        #expect(try bench.session.autoConfig(order: .fastestFirst(startingAt: 8)) == 8)
        #expect(bench.device.echoSettings == Array(repeating: 8, count: 20))
        #expect(bench.device.hostPackets.filter { $0.hasPrefix("8005") }.count == 1)
        #expect(bench.session.link.samplesPerBit == 8 && bench.session.isConnected)
    }

    @Test("AutoConfig fastest first drops one step at a time: 8 and 10 fail at their first echo, 12 passes and is kept")
    func autoConfigFastestFirstDropsOneStep() throws {
        let version = try VendorFixture.scenario("autoconfig")[0].hostReceived[0]
        let bench = try VendorBench(script: Array(repeating: version, count: 4))
        bench.device.echoes = true
        bench.device.refuseEchoesBelowSamplesPerBit = 12
        #expect(try bench.session.autoConfig(order: .fastestFirst(startingAt: 8)) == 12)
        #expect(bench.device.echoSettings == [8, 10] + Array(repeating: 12, count: 15))
        #expect(bench.session.link.samplesPerBit == 12 && bench.session.isConnected)
    }

    @Test("AutoConfig's order is a pure decision: the vendor's climbs 12 -> 10 -> 8 and falls to 36 -> 72; ours walks down from where it starts")
    func autoConfigOrder() {
        #expect(AutoConfigOrder.vendor.next(after: []) == .run(AutoConfigStep(samplesPerBit: 12, rounds: 16)))
        #expect(AutoConfigOrder.vendor.next(after: [(12, true), (10, false)]) == .keep(12))
        #expect(AutoConfigOrder.vendor.next(after: [(12, false)]) == .run(AutoConfigStep(samplesPerBit: 36, rounds: 16)))
        #expect(AutoConfigOrder.vendor.next(after: [(12, false), (36, false), (72, false)]) == .keep(nil))
        #expect(AutoConfigOrder.fastestFirst(startingAt: 10).next(after: [(10, false)]) == .run(AutoConfigStep(samplesPerBit: 12, rounds: 16)))
        #expect(AutoConfigOrder.fastestFirst(startingAt: 16).next(after: []) == .run(AutoConfigStep(samplesPerBit: 36, rounds: 16)))
        #expect(AutoConfigOrder.fastestFirst(startingAt: 36).next(after: [(36, false), (72, false)]) == .keep(nil))
        #expect(ReaderSession.autoConfigStep(below: 12) == 36)
        #expect(ReaderSession.autoConfigStep(below: 72) == nil)
    }

    @Test("nothing plugged in is NOT_PLUGGED_IN and a silent port is CANNOT_HANDSHAKE")
    func connectionFailures() throws {
        let unplugged = try ReaderSession(port: UnpluggedPort())
        #expect(!unplugged.isAnythingPluggedIntoAudioJack)
        #expect(throws: ReaderError.notPluggedIn(port: "unplugged")) { try unplugged.connect() }
        var options = ReaderOptions()
        options.handshakeTimeout = 1
        let silent = try ReaderSession(port: UnpluggedPort(plugged: nil), options: options)
        #expect(throws: ReaderError.cannotHandshake(port: "unplugged", seconds: 1)) { try silent.connect() }
    }

    @Test("AutoConfig that finds no setting on a port whose card stands below a session's levels names the control, not just the silence")
    func autoConfigNamesALowLevel() throws {
        var options = ReaderOptions()
        options.handshakeTimeout = 0.2
        let low = LevelShortfall(control: "Master", side: "playback", percent: 5, muted: false, loudestInputDBFS: "-inf")
        let quiet = try ReaderSession(port: UnpluggedPort(plugged: nil, shortfall: low), options: options)
        #expect(throws: ReaderError.levelTooLow(port: "unplugged", shortfall: low)) {
            try quiet.autoConfig(order: .fastestFirst(startingAt: 8))
        }
        let silent = try ReaderSession(port: UnpluggedPort(plugged: nil), options: options)
        #expect(throws: ReaderError.cannotHandshake(port: "unplugged", seconds: 0.2)) {
            try silent.autoConfig(order: .fastestFirst(startingAt: 8))
        }
    }

    @Test("a reader speaking reader protocol 10 is INCOMPATIBLE_READER")
    func oldReaderIsIncompatible() throws {
        var old = try VendorReaderVersion(decoding: hexBytes("061405000601080001fa550480004001112233445566778887d61200000800"))
        old.protocolVersion = 10
        let answer = try ResponsePacket(id: 0, data: old.encode()).encoded()
        let bench = try VendorBench(script: [hexText(answer)])
        #expect(throws: ReaderError.incompatibleReader(port: "vendor-grokker", detail: ErrorDetail("protocol_too_old", ["10", "11"]))) {
            try bench.session.connect()
        }
    }
}

extension ReaderSession {
    /// Connects (the argument only names the call in tests whose script has no GetVersion answer
    /// first: the script's first packet is the inventory's ACK_0, so the version is faked).
    fileprivate func connect(script: ()) throws {
        let version = try VendorReaderVersion(decoding: hexBytes("061405000601080001fa550480004001112233445566778887d61200000800"))
        try handshake(samplesPerBit: samplesPerBit, timeout: options.handshakeTimeout)
        setVersionForTesting(version)
    }
}

/// A port whose jack is empty (or that cannot tell, and hears only silence), its card's
/// levels at `shortfall`.
final class UnpluggedPort: AudioPort {
    let name = "unplugged"
    let sampleRate = 44_100
    let plugged: Bool?
    let levelShortfall: LevelShortfall?
    init(plugged: Bool? = false, shortfall: LevelShortfall? = nil) {
        self.plugged = plugged
        levelShortfall = shortfall
    }
    var jackPlugged: Bool? { plugged }
    func transfer(output: UnsafeBufferPointer<Float>, input: UnsafeMutableBufferPointer<Float>) throws(AudioError) {
        for i in input.indices { input[i] = 0 }
    }
    func close() {}
}
