import Foundation
import GrokAudio
import GrokBasics
import GrokLink
import GrokProtocol
import GrokTestSupport
import Testing
@testable import GrokkerEmulator

/// A host-side ``VendorLink`` driven through the GrokProtocol vendor codecs against an
/// ``EmulatedGrokker`` behind the simulated cable: what any host sees of the emulated reader.
final class VendorHostBench {
    let temp: TemporaryDirectory
    private let ownsDirectory: Bool
    let store: DeviceStateStore
    let grokker: EmulatedGrokker
    let driver: LinkDriver<VendorLink>
    var host: VendorLink { driver.engine }

    /// The reader packets the host received in slave mode, decoded, with the host's clock.
    private(set) var readerPackets: [(at: Int64, packet: VendorReaderPacket)] = []
    /// What the host answers in slave mode (nil: ACK_0, acknowledging every first read).
    var slaveAnswer: ((VendorReaderPacket) -> VendorSlaveAnswer?)?
    private var context = VendorSlaveContext()

    static let nearTags: [RFScene.Tag] = [
        RFScene.Tag(epc: [0x30, 0x08, 0x33, 0xb2, 0xdd, 0xd9, 0x01, 0x40, 0, 0, 0, 1], user: [0xa0, 0xa1, 0xa2, 0xa3],
                    placement: .distance(meters: 0.5)),
        RFScene.Tag(epc: [0x30, 0x08, 0x33, 0xb2, 0xdd, 0xd9, 0x01, 0x40, 0, 0, 0, 2], accessPassword: 0x1234_5678,
                    placement: .distance(meters: 0.8)),
        RFScene.Tag(epc: [0xe2, 0x00, 0x34, 0x12, 0, 0, 0, 0, 0, 0, 0x0a, 0xbc], placement: .distance(meters: 1.2)),
    ]

    init(tags: [RFScene.Tag] = VendorHostBench.nearTags, blockSize: Int = 256,
         state: (inout DeviceState) -> Void = { _ in }) throws {
        temp = TemporaryDirectory("grok-emulator-tests")
        var rng = SplitMix64(seed: 9)
        store = try DeviceStateStore.openOrCreate(deviceDirectory: temp.file("unit"), using: &rng)
        try store.update { s in
            s.region = RegionSetting(name: "FCC (US), IC (Canada)", number: 1)
            s.provisioning.userHasSetRegion = true
            state(&s)
        }
        ownsDirectory = true
        grokker = try EmulatedGrokker(store: store, scene: RFScene(tags: tags))
        let port = SimulatedCablePort(name: "vendor-grokker", sampleRate: 44_100, configuration: .clean, peer: grokker)
        driver = LinkDriver(port: port, engine: try VendorLink(role: .host, sampleRate: 44_100), blockSize: blockSize)
        host.packets.onRequest = { [unowned self] request in self.hostAnswer(request) }
    }

    /// The same unit powered on again (after a power cut): its directory opened anew (state
    /// read back from `state.json`, flash from `flash.bin`), a new host on a new cable.
    init(powerOn earlier: VendorHostBench, tags: [RFScene.Tag] = VendorHostBench.nearTags) throws {
        temp = earlier.temp
        ownsDirectory = false
        var rng = SplitMix64(seed: 1)
        store = try DeviceStateStore.openOrCreate(deviceDirectory: earlier.store.deviceDirectory, using: &rng)
        grokker = try EmulatedGrokker(store: store, scene: RFScene(tags: tags))
        let port = SimulatedCablePort(name: "vendor-grokker", sampleRate: 44_100, configuration: .clean, peer: grokker)
        driver = LinkDriver(port: port, engine: try VendorLink(role: .host, sampleRate: 44_100), blockSize: 256)
        host.packets.onRequest = { [unowned self] request in self.hostAnswer(request) }
    }

    deinit { if ownsDirectory { temp.remove() } }

    func connect(samplesPerBit: Int = 12) throws {
        try host.open(samplesPerBit: samplesPerBit)
        #expect(try driver.run(forAtMost: 3) { host.isConnected })
    }

    /// Stops a ``call(opcode:payload:slaveMode:retries:)`` early (a unit whose power went off).
    var abandon: () -> Bool = { false }

    /// Sends a request and pumps until its answer; nil when it failed.
    func call(_ request: VendorRequest, slaveMode: VendorSlaveMode? = nil) throws -> ResponsePacket? {
        try call(opcode: request.opcode.rawValue, payload: request.encodePayload(), slaveMode: slaveMode)
    }

    /// `retries: false` hands a NACK up as the answer (the vendor's "-1" timeout).
    func call(opcode: UInt8, payload: [UInt8], slaveMode: VendorSlaveMode? = nil, retries: Bool = true) throws -> ResponsePacket? {
        if case .inventory(let start, _)? = try? VendorRequest(opcode: opcode, payload: payload) {
            context = VendorSlaveContext(start)
        }
        try host.send(command: opcode, payload: payload, retries: retries, slaveMode: slaveMode)
        var answer: ResponsePacket?
        var done = false
        _ = try driver.run(forAtMost: 30) {
            for event in host.drainEvents() {
                if case .packet(.completed(_, let response)) = event { answer = response; done = true }
                if case .packet(.failed) = event { done = true }
            }
            return done || abandon()
        }
        return answer
    }

    /// Pumps `seconds` of audio.
    func run(seconds: Double, until done: () -> Bool = { false }) throws {
        _ = try driver.run(forAtMost: seconds) { _ = host.drainEvents(); return done() }
    }

    private func hostAnswer(_ request: RequestPacket) -> VendorReply {
        // What the vendor host refuses (an EPC-less 06 among it) is NACKed, as it does.
        guard let packet = try? VendorReaderPacket(opcode: request.command, payload: request.payload, context: context) else {
            return .nack
        }
        readerPackets.append((host.now, packet))
        if case .completed = packet { return VendorReply(.ack, endsSlaveMode: true) }
        var mask: [UInt8] = []
        if case .firstRead(_, _, let records, _) = packet {
            mask = (try? VendorAckMask.encode(flagged: records.map { _ in true }, anyBit0: false)) ?? []
        }
        let answer = slaveAnswer?(packet) ?? .ack(mask: mask)
        let withMask: VendorSlaveAnswer
        switch answer {
        case .ack: withMask = .ack(mask: mask)
        case .stop: withMask = .stop(mask: mask)
        case .access(_, let r): withMask = .access(mask: mask, r)
        default: withMask = answer
        }
        guard let data = try? withMask.encodeData() else { return .nack }
        return VendorReply(ResponsePacket(id: withMask.code, data: data))
    }

    /// First reads and subsequent finds per EPC, as the host counts them from the packets.
    var findsByEPC: [[UInt8]: Int] {
        var ids: [UInt8: [UInt8]] = [:]
        var finds: [[UInt8]: Int] = [:]
        for (_, packet) in readerPackets {
            switch packet {
            case .firstRead(_, _, let records, _):
                for r in records {
                    if let id = r.id { ids[id] = r.epc }
                    finds[r.epc, default: 0] += Int(r.numFinds ?? 1)
                }
            case .subsequentRead(_, let records):
                for r in records { if let epc = ids[r.id] { finds[epc, default: 0] += Int(r.numFinds) } }
            default:
                break
            }
        }
        return finds
    }

    var pingTimes: [Int64] { readerPackets.compactMap { if case .ping = $0.packet { $0.at } else { nil } } }
}

@Suite("The emulated Grokker speaking the vendor protocol, seen from the host side")
struct EmulatedGrokkerTests {
    static let locate = try! VendorRfidConfiguration.preset(.locateDistance).inventoryStart(volumeLevels: 8)
    static let inventory = try! VendorRfidConfiguration.preset(.inventoryDistance).inventoryStart(volumeLevels: 8)

    @Test("GetVersion reports the unit's own state and its flash: protocol 20, GR-1, revision, the application's version, serial, region flag and index")
    func versionReflectsState() throws {
        let bench = try VendorHostBench { $0.hardwareRevision = 6; $0.firmwareVersion = FirmwareVersion(major: 1, minor: 8, build: 2) }
        try bench.connect()
        let answer = try #require(try bench.call(.getVersion(VendorVersionRequest())))
        #expect(answer.id == 0)
        let v = try VendorReaderVersion(decoding: answer.data)
        let state = bench.store.state
        #expect(v.protocolVersion == 20)
        #expect(v.hardwareType == 5 && v.hardwareTypeName == "GR-1")
        #expect(v.hardwareRevision == 6)
        #expect((v.firmwareMajor, v.firmwareMinor, v.firmwareBuild) == (1, 8, 2))
        #expect(v.serialNumber == state.serialNumber)
        #expect(v.userHasSetRegion)
        #expect(v.regionIndex == 0)
        #expect(v.software == .application)
        #expect(v.maxPowerDBm == 30)
        // The factory made the flash with the version state.json held; the flash says so now.
        #expect(bench.grokker.loader.applicationRecord?.version == VendorLoader.Version(1, 8, 2))
    }

    @Test("the battery answer is the 5-byte form with the state's percent and a plausible voltage")
    func battery() throws {
        let bench = try VendorHostBench { $0.batteryPercent = 87 }
        try bench.connect()
        let answer = try #require(try bench.call(.getBatteryLevel))
        #expect(answer.data.count == 5)
        let level = try VendorBatteryLevel(decoding: answer.data)
        #expect(level.percent == 87)
        #expect(level.flags.contains(.canScan))
        #expect(level.volts > 3.3 && level.volts < 4.2)
    }

    @Test("SetRegion with a good CRC is stored and reported by GetVersion; a bad CRC is refused with ACK_7")
    func setRegion() throws {
        let bench = try VendorHostBench { $0.region = nil; $0.provisioning.userHasSetRegion = false }
        try bench.connect()
        let entry = try VendorRegionEntry(try #require(RegionCatalog.entry(number: 3)))
        let good = try VendorSetRegion(entry: entry.encode())
        var bad = good.encode()
        bad[0] ^= 0x01
        let refused = try #require(try bench.call(opcode: 0x11, payload: bad, retries: false))
        #expect(refused.isNack)
        #expect(bench.store.state.region == nil)
        let accepted = try #require(try bench.call(.setRegion(good)))
        #expect(accepted.id == 0)
        #expect(bench.store.state.region?.number == 3)
        let v = try VendorReaderVersion(decoding: try #require(try bench.call(.getVersion(VendorVersionRequest()))).data)
        #expect(v.regionIndex == 2 && v.userHasSetRegion)
    }

    @Test("an inventory start is refused with code 3 while the region is not set, code 2 when the unit is not provisioned")
    func inventoryRefusals() throws {
        let noRegion = try VendorHostBench { $0.region = nil }
        try noRegion.connect()
        #expect(try noRegion.call(.inventory(Self.locate, .full), slaveMode: .inventory)?.id == 3)
        let unprovisioned = try VendorHostBench { $0.provisioning.provisioned = false }
        try unprovisioned.connect()
        #expect(try unprovisioned.call(.inventory(Self.locate, .full), slaveMode: .inventory)?.id == 2)
    }

    @Test("an inventory reports every tag of the scene once as a first read, then its finds, and ends with 00 completed after ACK_1")
    func inventoryReportsTheScene() throws {
        let bench = try VendorHostBench()
        try bench.connect()
        let ack = try #require(try bench.call(.inventory(Self.locate, .full), slaveMode: .inventory))
        #expect(ack.id == 0)
        #expect(bench.grokker.inventoryRunning)
        let stopAt = bench.host.now + 44_100 * 2
        bench.slaveAnswer = { [unowned bench] _ in bench.host.now >= stopAt ? .stop(mask: []) : nil }
        try bench.run(seconds: 8) { !bench.host.packets.isInSlaveMode && !bench.grokker.inventoryRunning }
        #expect(!bench.host.packets.isInSlaveMode)
        let first = bench.readerPackets.flatMap { p -> [[UInt8]] in
            if case .firstRead(_, _, let records, _) = p.packet { records.map(\.epc) } else { [] }
        }
        #expect(Set(first) == Set(VendorHostBench.nearTags.map(\.epc)))
        #expect(first.count == 3, "each tag has one first read")
        guard case .completed(let result, _)? = bench.readerPackets.last?.packet else {
            Issue.record("the last reader packet is not 00 completed")
            return
        }
        #expect(result == 0)
        let log = try #require(bench.grokker.inventoryLog.last)
        #expect(log.finished)
        #expect(log.rounds > 0)
        #expect(log.finds == bench.findsByEPC, "the host counts exactly the finds the reader sent")
        #expect(bench.findsByEPC.values.allSatisfy { $0 > 1 }, "subsequent finds are reported: \(bench.findsByEPC.values.sorted())")
    }

    @Test("an inventory start with an EPC list: the unit reports only those tags and beeps only for them")
    func epcListOnTheReader() throws {
        let bench = try VendorHostBench()
        try bench.connect()
        let wanted = [VendorHostBench.nearTags[0].epc, VendorHostBench.nearTags[2].epc]
        let start = try VendorRfidConfiguration.preset(.inventoryDistance).inventoryStart(volumeLevels: 8, tags: .only(wanted))
        #expect(start.soundType == 2, "first-find sound")
        #expect(try bench.call(.inventory(start, .full), slaveMode: .inventory)?.id == 0)
        try bench.run(seconds: 2)
        #expect(Set(bench.findsByEPC.keys) == Set(wanted))
        #expect(bench.grokker.soundLog.foundItem == 2)
    }

    @Test("without subsequent finds each tag is reported once, and no record carries an id")
    func inventoryWithoutSubsequentFinds() throws {
        let bench = try VendorHostBench()
        try bench.connect()
        #expect(try bench.call(.inventory(Self.inventory, .full), slaveMode: .inventory)?.id == 0)
        try bench.run(seconds: 2)
        #expect(bench.findsByEPC == Dictionary(uniqueKeysWithValues: VendorHostBench.nearTags.map { ($0.epc, 1) }))
        for (_, packet) in bench.readerPackets {
            if case .subsequentRead = packet { Issue.record("a subsequent read without subsequent finds") }
            if case .firstRead(_, let rounds, let records, _) = packet {
                #expect(rounds == nil)
                #expect(records.allSatisfy { $0.id == nil && $0.numFinds == nil })
            }
        }
    }

    @Test("with nothing in the field the reader pings at least every 2 s (the host's 3.3 s limit never runs out)")
    func pingsWhenNothingIsFound() throws {
        let bench = try VendorHostBench(tags: [])
        try bench.connect()
        let start = bench.host.now
        #expect(try bench.call(.inventory(Self.locate, .full), slaveMode: .inventory)?.id == 0)
        try bench.run(seconds: 6)
        #expect(bench.host.packets.isInSlaveMode, "the host stayed in slave mode")
        let times = [start] + bench.pingTimes
        #expect(bench.pingTimes.count >= 3)
        for (a, b) in zip(times, times.dropFirst()) { #expect(b - a <= 2 * 44_100) }
    }

    @Test("each tag access the host's answers carry comes back as 06 with the field's result code")
    func tagAccessResults() throws {
        let bench = try VendorHostBench()
        try bench.connect()
        #expect(try bench.call(.inventory(Self.locate, .full), slaveMode: .inventory)?.id == 0)
        bench.grokker.inventory.keepsRounds = true
        let tags = VendorHostBench.nearTags
        let newEPC: [UInt8] = [0x30, 0x08, 0x33, 0xb2, 0xdd, 0xd9, 0x01, 0x40, 0, 0, 0, 0xff]
        var requests: [VendorTagAccessRequest] = [
            // Power bytes: 25 dBm, within 23-27 dBm (docs/vendor-protocol.md, encodings).
            .changePower(initial: 200, min: 180, max: 220),
            .read(epc: tags[0].epc, bank: .user, wordOffset: 0, maxBytes: 4, minBytes: 4),
            .read(epc: tags[0].epc, bank: .user, wordOffset: 200, maxBytes: 2, minBytes: 2),
            .read(epc: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], bank: .user, wordOffset: 0, maxBytes: 1, minBytes: 1),
            .write(epc: tags[1].epc, password: 0x1111_1111, bank: .user, wordOffset: 0, data: [0x11, 0x22]),
            .write(epc: tags[0].epc, password: 0, bank: .user, wordOffset: 0, data: [0x11, 0x22]),
            .programEpc(epc: tags[2].epc, password: 0, newEpc: newEPC),
        ]
        var answered = 0
        bench.slaveAnswer = { packet in
            if case .tagAccessResult = packet {
                answered += 1
                if answered == 6 { return .stop(mask: []) }
            }
            if case .firstRead = packet { return nil }
            if requests.isEmpty { return nil }
            return .access(mask: [], requests.removeFirst())
        }
        try bench.run(seconds: 30) { !bench.grokker.inventoryRunning }
        let results = bench.readerPackets.compactMap { p -> (UInt8, [UInt8], [UInt8])? in
            if case .tagAccessResult(let r, let epc, let data) = p.packet { (r, epc, data) } else { nil }
        }
        try #require(results.count == 6, "a change power has no result")
        #expect(results[0].0 == 0 && results[0].2 == [0xa0, 0xa1, 0xa2, 0xa3], "read: OK with the USER words")
        #expect(results[1].0 == 3, "read past the bank: memory overrun")
        #expect(results[2].0 == 1, "wrong access password")
        #expect(results[3].0 == 0, "write: OK")
        #expect(results[4].0 == 0, "program EPC: OK")
        // The reader looked for the unknown EPC on its next rounds before it gave up: last.
        #expect(results[5].0 == 4 && results[5].1 == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], "unknown EPC: tag not found")
        #expect(bench.host.packets.statistics.nacksReturned == 0, "the host refused no reader packet")
        // The preset's range is 23-30 dBm; after the change the radio stays within 23-27.
        let last = bench.grokker.inventory.roundLog.suffix(5).map(\.powerDBm)
        #expect(last.count == 5 && last.allSatisfy { (23...27).contains($0) }, "the change power reached the radio: \(last) dBm")
        let user = bench.grokker.field.tags.first { $0.epc == tags[0].epc }?.memory.words(of: .user)
        #expect(user?.first == 0x1122, "the write reached the tag's memory")
        #expect(bench.grokker.field.tags.contains { $0.epc == newEPC }, "the new EPC is on the tag")
        let saved = try String(contentsOfFile: bench.grokker.fieldStatePath, encoding: .utf8)
        #expect(!saved.isEmpty, "tag memory changes are kept in field-state.json")
    }

    @Test("the answers do not depend on how the audio is cut into blocks (1 sample, 37, 256)")
    func dripFeedIndependence() throws {
        var versions: [[UInt8]] = []
        for block in [1, 37, 256] {
            let bench = try VendorHostBench(blockSize: block)
            try bench.connect()
            let version = try #require(try bench.call(.getVersion(VendorVersionRequest())))
            let echo = try #require(try bench.call(.echo(VendorEcho(Array(0..<100)))))
            #expect(echo.data == Array(0..<100))
            versions.append(version.data)
        }
        #expect(Set(versions).count == 1)
    }

    @Test("the emulated reader never plays an exact-zero sample inside a tone")
    func noExactZeros() throws {
        let bench = try VendorHostBench()
        var input = [Float](repeating: 0, count: 512)
        var output = [Float](repeating: 0, count: 512)
        var zeros = 0
        var started = false
        for _ in 0..<200 {
            input.withUnsafeBufferPointer { i in output.withUnsafeMutableBufferPointer { bench.grokker.process(input: i, output: $0) } }
            for s in output {
                if s != 0 { started = true } else if started { zeros += 1 }
            }
            input = output.map { _ in 0 }
        }
        #expect(started, "the request tone plays")
        #expect(zeros == 0)
    }

    @Test("a reset silences the modem, then the request tone comes back")
    func resetRestartsTheModem() throws {
        let bench = try VendorHostBench()
        try bench.connect()
        bench.grokker.reset()
        #expect(!bench.grokker.link.isConnected)
        #expect(try bench.driver.run(forAtMost: 6) { bench.host.isConnected && bench.grokker.link.isConnected })
        #expect(bench.grokker.resets == 1)
    }

    @Test("the vendor's Locate presets (session 0, no A/B toggle) find each tag again on every channel visit (0.4 s under FCC), so the Geiger counter keeps clicking")
    func locatePresetsKeepFinding() throws {
        for preset in [VendorInventoryType.locateDistance, .locateShortRange] {
            let bench = try VendorHostBench()
            try bench.connect()
            let start = try VendorRfidConfiguration.preset(preset).inventoryStart(volumeLevels: 8)
            #expect(start.radio.session == 0 && start.radio.roundsToToggleAB == 0)
            #expect(try bench.call(.inventory(start, .full), slaveMode: .inventory)?.id == 0)
            try bench.run(seconds: 4)
            let finds = bench.findsByEPC
            #expect(Set(finds.keys) == Set(VendorHostBench.nearTags.map(\.epc)), "\(preset)")
            #expect(finds.values.allSatisfy { $0 >= 10 }, "\(preset): finds \(finds.values.sorted())")
            let subsequent = bench.readerPackets.filter { if case .subsequentRead = $0.packet { true } else { false } }
            #expect(subsequent.count >= 5, "\(preset): subsequent reads keep coming")
            #expect(bench.grokker.soundLog.clicks > 10, "\(preset): the Geiger counter clicks on")
        }
    }

    @Test("the requests this reader refuses (0x05, 0x0d, 0x0e, 0x12, 0x14, 0x16) are answered ACK_7 at once, and the unit answers on")
    func refusedRequestsGetACK7() throws {
        let bench = try VendorHostBench()
        try bench.connect()
        let refused: [VendorRequest] = [
            .echoMaster, .tuneAntenna, .getDetailedAntennaTuning(maxChannels: 50),
            .continuousTest(VendorContinuousTest(a: 1, b: 0, c: 100, powerByte: 200, volumeLevel: 0xff)),
            .scanAllFrequencies(maxChannels: 50), .scanWide(try VendorScanWide(startMHz: 902, endMHz: 928, stepMHz: 1, mode: 0)),
        ]
        for request in refused {
            let sentAt = bench.host.now
            let answer = try #require(try bench.call(opcode: request.opcode.rawValue, payload: request.encodePayload(), retries: false),
                                      "\(request.opcode)")
            #expect(answer.isNack, "\(request.opcode): \(answer)")
            #expect(bench.host.now - sentAt < 44_100, "\(request.opcode): answered at once")
            #expect(bench.host.isConnected && !bench.host.packets.isInSlaveMode)
        }
        #expect(try bench.call(.getVersion(VendorVersionRequest()))?.id == 0)
    }
}
