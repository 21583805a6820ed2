import GrokAudio
import GrokBasics
import GrokTestSupport
import Testing
@testable import GrokProtocol

/// Generated values survive encode then decode; random bytes never trap a decoder, and any
/// payload a decoder accepts encodes back to exactly the same bytes (the codecs are canonical).
@Suite("Vendor command layer: round trips, fuzzing and limits")
struct VendorRoundTripTests {
    private struct Gen {
        var rng: SplitMix64
        mutating func u8() -> UInt8 { UInt8.random(in: .min ... .max, using: &rng) }
        mutating func u16() -> UInt16 { UInt16.random(in: .min ... .max, using: &rng) }
        mutating func u32() -> UInt32 { UInt32.random(in: .min ... .max, using: &rng) }
        mutating func bool() -> Bool { Bool.random(using: &rng) }
        mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }
        mutating func bytes(_ range: ClosedRange<Int>) -> [UInt8] { (0..<int(range)).map { _ in u8() } }
        mutating func bank() -> VendorMemoryBank { VendorMemoryBank(rawValue: UInt8(int(0...3)))! }
        mutating func epc() -> [UInt8] { bytes(4...27) }

        mutating func radio() -> VendorRadioSettings {
            VendorRadioSettings(initialQ: u8(), initialPower: u8(), minusSensitivity: u8(), session: u8(), writePower: u8(),
                                minusWriteSensitivity: u8(), minQ: u8(), maxQ: u8(), roundsToToggleAB: u8(), minPower: u8(),
                                maxPower: u8())
        }

        mutating func inventory(form: VendorSelectForm) throws -> VendorInventoryStart {
            let maxima = (0..<3).map { _ in UInt8(int(0...208)) }
            let minima = maxima.map { UInt8(int(0...Int($0))) }
            var select: VendorSelect?
            if bool() {
                let bits = int(1...(form == .full ? 256 : 255))
                select = try VendorSelect(bitLength: UInt16(bits), bitOffset: form == .full ? u16() : 0,
                                          bank: form == .full ? bank() : .epc, mask: bytes(((bits + 7) / 8)...((bits + 7) / 8)))
            }
            let words: (first: VendorWordLocation, second: VendorWordLocation)? = bool()
                ? (try VendorWordLocation(bank: bank(), wordOffset: UInt8(int(0...63))),
                   try VendorWordLocation(bank: bank(), wordOffset: UInt8(int(0...63)))) : nil
            return VendorInventoryStart(
                soundType: UInt8(int(0...7)), reportRssi: bool(), continual: bool(), reportSubsequentFinds: bool(), flag7: bool(),
                volumeLevel: u8(), maxRoundsPerSecond: u8(), maxTidBytes: maxima[0], maxUserBytes: maxima[1],
                maxReservedBytes: maxima[2], minTidBytes: minima[0], minUserBytes: minima[1], minReservedBytes: minima[2],
                detailedPerReadData: bool(), setListenBeforeTalk: bool(), listenBeforeTalk: bool(), radio: radio(),
                perReadWords: words, select: select,
                epcs: select == nil && bool() ? (0..<int(1...4)).map { _ in bytes(1...20) } : [])
        }

        mutating func request() throws -> VendorRequest {
            switch int(0...22) {
            case 0: return .getVersion(VendorVersionRequest(hostProtocol: int(0...1000), latencyMs: u16(),
                                                            flags: VendorVersionRequestFlags(rawValue: u8())))
            case 1: return .programReader(try VendorProgramReader(address: u16(), data: bytes(0...248)))
            case 2: return .changeSoftwareType(VendorChangeSoftwareType(length: u16(), crc16: u16(), targetType: u8(), crc32: u32(), reserved: u8()))
            case 3: return bool() ? .getBatteryLevel : .echoMaster
            case 4:
                switch int(0...4) {
                case 0: return .provisioning(.register(hardwareRevision: u8(), batteryConstantA: u8(), batteryConstantB: u8(),
                                                       serialNumber: u32(), internalId: UInt64(u32()) << 32 | UInt64(u32()), antennaType: u8()))
                case 1: return .provisioning(.setStatus(u8()))
                case 2: return .provisioning(.setAntennaType(u8()))
                case 3: return .provisioning(.setUserHasSetRegion(bool()))
                default: return .provisioning(.setHardwareRevision(u8()))
                }
            case 5: return .getDiagnostics(reset: bool())
            case 6:
                let form: VendorSelectForm = bool() ? .full : .short
                return .inventory(try inventory(form: form), form)
            case 7: return .pauseConnection(ms: u16())
            case 8: return .playSound(u8())
            case 9: return .getConfiguration(VendorGetConfiguration(kind: VendorConfigurationKind(rawValue: UInt8(int(0...3)))!, refresh: u8()))
            case 10:
                switch int(0...2) {
                case 0: return .setConfiguration(.radioDefaults(radio()))
                case 1: return .setConfiguration(.geigerCounterSound(VendorGeigerSound(frequencyHz: u16(), clickDurationMs: u16(),
                                                                                     clickRate256: u16(), maxClicksPerSecond: u8(), history8Ms: u8())))
                default:
                    let tones = (0..<int(0...20)).map { _ in VendorTone(frequencyHz: UInt16(int(1...65535)), durationMs: u16()) }
                    return .setConfiguration(.tones(bool() ? .foundItemSound : .foundLastItemSound, tones))
                }
            case 11: return .echo(try VendorEcho(bytes(0...250)))
            case 12: return .tuneAntenna
            case 13: return .getDetailedAntennaTuning(maxChannels: u8())
            case 14: return .speakerTest(VendorSpeakerTest(frequencyHz: u16(), durationMs: u16(), volumeLevel: u8()))
            case 15: return .getAntennaTuning
            case 16: return .setRegion(try VendorSetRegion(entry: bytes(120...120)))
            case 17: return .continuousTest(VendorContinuousTest(a: u8(), b: u8(), c: u16(), powerByte: u8(), volumeLevel: u8()))
            case 18: return .setTestFlags(u8(), u8())
            case 19: return .getTestFlags
            case 20: return .scanAllFrequencies(maxChannels: u8())
            case 21: return .getTemperature
            default:
                let start = u16()
                return .scanWide(try VendorScanWide(startMHz: start, endMHz: UInt16(int(Int(start)...65535)), stepMHz: UInt8(int(1...255)), mode: u8()))
            }
        }

        mutating func context() -> VendorSlaveContext {
            VendorSlaveContext(reportSubsequentFinds: bool(), reportRssi: bool(), detailedPerReadData: bool(), perReadWords: bool(),
                               readsTid: bool(), readsUser: bool(), readsReserved: bool())
        }

        mutating func perReads(_ context: VendorSlaveContext) -> [VendorPerRead]? {
            guard context.detailedPerReadData else { return nil }
            return (0..<int(0...3)).map { _ in
                VendorPerRead(msAgo: u16(), channelIndex: u8(), rssi: u8(), words: context.perReadWords ? (u16(), u16()) : nil)
            }
        }

        mutating func readerPacket(_ context: VendorSlaveContext) -> VendorReaderPacket {
            switch int(0...4) {
            case 0: return .completed(result: u8(), value: u16())
            case 1:
                let fixed = bool()
                let records = (0..<int(1...3)).map { _ in
                    VendorTagRecord(id: context.reportSubsequentFinds ? u8() : nil, numFinds: context.reportSubsequentFinds ? u8() : nil,
                                    rssi: context.reportRssi ? u8() : nil, perReads: perReads(context),
                                    epc: fixed ? bytes(12...12) : epc(), tid: context.readsTid ? bytes(0...12) : nil,
                                    user: context.readsUser ? bytes(0...8) : nil, reserved: context.readsReserved ? bytes(0...8) : nil)
                }
                return .firstRead(flags: u8(), rounds: context.reportSubsequentFinds ? u8() : nil, records: records, fixed96: fixed)
            case 2:
                return .subsequentRead(rounds: u8(), records: (0..<int(1...5)).map { _ in
                    VendorSubsequentRecord(id: u8(), numFinds: u8(), rssi: context.reportRssi ? u8() : nil, perReads: perReads(context))
                })
            case 3: return .ping(rounds: u8())
            default: return .tagAccessResult(result: u8(), epc: epc(), data: bytes(0...32))
            }
        }

        mutating func access() -> VendorTagAccessRequest {
            switch int(0...5) {
            case 0: return .read(epc: epc(), bank: bank(), wordOffset: u16(), maxBytes: u8(), minBytes: u8())
            case 1:
                let bits = int(0...64)
                return .custom(epc: epc(), receiveTimeout: u16(), commandBits: UInt16(bits), responseBitsNoHeader: u8(),
                               responseBitsWithHeader: u8(), command: bytes(((bits + 7) / 8)...((bits + 7) / 8)))
            case 2: return .changePower(initial: u8(), min: u8(), max: u8())
            case 3: return .write(epc: epc(), password: u32(), bank: bank(), wordOffset: u16(), data: bytes(0...64))
            case 4: return .programEpc(epc: epc(), password: u32(), newEpc: epc())
            default: return .lock(epc: epc(), password: u32(), maskAndAction: u32())
            }
        }
    }

    @Test("Every generated host request survives encode then decode", arguments: [1, 2, 3] as [UInt64])
    func requestRoundTrip(seed: UInt64) throws {
        var gen = Gen(rng: SplitMix64(seed: seed))
        for _ in 0..<2000 {
            let request = try gen.request()
            let payload = try request.encodePayload()
            #expect(payload.count <= VendorWireLimits.maxPayloadBytes)
            var protocolVersion = 20
            if case .inventory(_, .short) = request { protocolVersion = 14 }
            let decoded = try VendorRequest(opcode: request.opcode.rawValue, payload: payload, readerProtocol: protocolVersion)
            #expect(decoded == request, "\(request)")
        }
    }

    @Test("Every generated reader packet and host answer survives encode then decode", arguments: [4, 5] as [UInt64])
    func slaveRoundTrip(seed: UInt64) throws {
        var gen = Gen(rng: SplitMix64(seed: seed))
        for _ in 0..<2000 {
            let context = gen.context()
            let packet = gen.readerPacket(context)
            let payload = try packet.encode(context: context)
            #expect(try VendorReaderPacket(opcode: packet.opcode.rawValue, payload: payload, context: context) == packet)

            let mask = gen.bytes(0...2)
            let answer: VendorSlaveAnswer = switch gen.int(0...4) {
            case 0: .ack(mask: mask)
            case 1: .stop(mask: mask)
            case 2: .pause(ms: gen.u16())
            case 3: .nack
            default: .access(mask: mask, gen.access())
            }
            let data = try answer.encodeData()
            #expect(try VendorSlaveAnswer(code: answer.code, data: data, maskBytes: mask.count) == answer)
        }
    }

    @Test("Every generated response survives encode then decode")
    func responseRoundTrip() throws {
        var gen = Gen(rng: SplitMix64(seed: 6))
        let version = VendorReaderVersion(
            protocolVersion: 20, hardwareType: gen.u16(), hardwareRevision: gen.u8(), firmwareMajor: gen.u8(), firmwareMinor: gen.u8(),
            firmwareBuild: gen.u8(), antennaType: gen.u8(), maxPowerByte: gen.u8(), minusMaxSensitivity: gen.u8(), volumeLevels: gen.u8(),
            deviceFlags: gen.u8(), softwareType: gen.u8(), maxProgramBytes: gen.u8(), provisioningStatus: gen.u8(),
            internalId: UInt64(gen.u32()), serialNumber: gen.u32(), initStatus: gen.u8(), maxTones: gen.u8(), regionIndex: gen.u8())
        let cases: [(VendorRequest, VendorResponse)] = [
            (.getVersion(VendorVersionRequest()), .version(version)),
            (.getBatteryLevel, .battery(VendorBatteryLevel(raw: gen.u16(), voltageCode: gen.u8(), flags: [.charging], percent: 42))),
            (.getBatteryLevel, .battery(VendorBatteryLevel(raw: gen.u16(), voltageCode: gen.u8(), flags: [], percent: nil))),
            (.getDiagnostics(reset: false), .diagnostics(VendorDiagnostics(bytesSent: gen.u32(), sendRetries: gen.u16()))),
            (.getConfiguration(VendorGetConfiguration(kind: .radioDefaults)), .configuration(.radioDefaults(gen.radio()))),
            (.getConfiguration(VendorGetConfiguration(kind: .foundLastItemSound)),
             .configuration(.tones(.foundLastItemSound, [VendorTone(frequencyHz: 440, durationMs: 10)]))),
            (.echo(try VendorEcho([1, 2, 3])), .echo([1, 2, 3])),
            (.getAntennaTuning, .antennaTuning(VendorAntennaTuning(staticAverage: gen.u16(), dynamicAverage: gen.u16()))),
            (.getDetailedAntennaTuning(maxChannels: 54), .detailedAntennaTuning((0..<51).map { _ in
                VendorDetailedTuning(value: gen.u16(), a: gen.u8(), b: gen.u8(), c: gen.u8()) })),
            (.getTestFlags, .testFlags(gen.u8(), gen.u8())),
            (.scanAllFrequencies(maxChannels: 3), .scanAllFrequencies([VendorChannelScan(i: 1, q: -1, dBm: -90)])),
            (.getTemperature, .temperature(VendorTemperature(raw: gen.u16(), degreesC: gen.u8()))),
            (.scanWide(try VendorScanWide(startMHz: 900, endMHz: 910, stepMHz: 5, mode: 0)), .scanWide([1, 2, 3])),
            (.inventory(try VendorRfidConfiguration.preset(.locateDistance).inventoryStart(volumeLevels: 8), .full),
             .inventoryError(VendorInventoryStartError(code: 7))),
            (.setRegion(try VendorSetRegion(entry: Array(repeating: 0, count: 119))), .ack),
        ]
        for (request, response) in cases {
            #expect(try request.decodeResponse(response.encodeData()) == response, "\(request)")
        }
    }

    @Test("Random bytes never trap a decoder, and whatever a decoder accepts encodes back to the same bytes")
    func fuzz() throws {
        var gen = Gen(rng: SplitMix64(seed: 0xF00D))
        let contexts = (0..<128).map { bits in
            VendorSlaveContext(reportSubsequentFinds: bits & 1 != 0, reportRssi: bits & 2 != 0, detailedPerReadData: bits & 4 != 0,
                               perReadWords: bits & 8 != 0, readsTid: bits & 16 != 0, readsUser: bits & 32 != 0, readsReserved: bits & 64 != 0)
        }
        var accepted = 0
        for round in 0..<30_000 {
            // Mostly short payloads (where structure is likeliest to be hit), sometimes long ones.
            let payload = gen.bytes(round % 10 == 0 ? 0...250 : 0...40)
            let opcode = UInt8(gen.int(0...0x17))
            for protocolVersion in [14, 20] {
                if let request = try? VendorRequest(opcode: opcode, payload: payload, readerProtocol: protocolVersion) {
                    accepted += 1
                    #expect(try request.encodePayload() == payload, "\(request)")
                    if let response = try? request.decodeResponse(payload) {
                        #expect(try response.encodeData() == payload, "\(response)")
                    }
                }
            }
            let context = contexts[gen.int(0...127)]
            if let packet = try? VendorReaderPacket(opcode: UInt8(gen.int(0...7)), payload: payload, context: context) {
                accepted += 1
                #expect(try packet.encode(context: context) == payload, "\(packet)")
            }
            let maskBytes = gen.int(0...2)
            if let answer = try? VendorSlaveAnswer(code: UInt8(gen.int(0...8)), data: payload, maskBytes: maskBytes) {
                accepted += 1
                #expect(try answer.encodeData() == payload, "\(answer)")
            }
        }
        #expect(accepted > 1000, "the fuzzer reaches the decoders' success paths too")
    }

    @Test("Every strict prefix of a valid payload is refused with a typed error")
    func truncations() throws {
        let start = try VendorRfidConfiguration.preset(.locateDistance).inventoryStart(volumeLevels: 8)
        let payloads: [(UInt8, [UInt8])] = [
            (0x00, try VendorVersionRequest().encode()),
            (0x07, try start.encode(form: .full)),
            (0x04, VendorProvisioning.register(hardwareRevision: 1, batteryConstantA: 2, batteryConstantB: 3, serialNumber: 4,
                                               internalId: 5, antennaType: 6).encode()),
            (0x11, try VendorSetRegion(entry: Array(repeating: 1, count: 120)).encode()),
            (0x02, hex("28 00 62 68 01 f4 8d 1a 02 00")),
            (0x0b, hex("02 dc05 6400 d007 3200 00000000")),
        ]
        for (opcode, payload) in payloads {
            for cut in 0..<payload.count where opcode != 0x07 || cut != 22 {
                #expect(throws: VendorCommandError.self, "opcode \(opcode) cut at \(cut)") {
                    try VendorRequest(opcode: opcode, payload: Array(payload.prefix(cut)))
                }
            }
        }
        let context = VendorSlaveContext(reportSubsequentFinds: true, reportRssi: true, readsTid: true)
        let packet = hex("00 01 01 01 5a 0c 3034 1234 5678 9abc def0 1122 02 e280")
        for cut in 0..<packet.count {
            #expect(throws: VendorCommandError.self) { try VendorReaderPacket(opcode: 1, payload: Array(packet.prefix(cut)), context: context) }
        }
    }

    @Test("Each documented limit is refused with an error naming the field and the range")
    func limits() throws {
        func refused(_ change: (inout VendorRfidConfiguration) -> Void) -> VendorCommandError? {
            var configuration = VendorRfidConfiguration.preset(.inventoryDistance)
            change(&configuration)
            do {
                _ = try configuration.inventoryStart(volumeLevels: 8)
                return nil
            } catch {
                return error
            }
        }
        #expect(refused { $0.initialPowerLevel = 30.5 } == .outOfRange(field: "initialPowerLevel", value: "30.5", allowed: "5...30 dBm"))
        #expect(refused { $0.minPowerLevel = 4.9 }?.code == "vendor_out_of_range")
        #expect(refused { $0.powerLevelWrite = 31 } != nil)
        #expect(refused { $0.maxPowerLevel = 30 } == nil)
        #expect(refused { $0.minPowerLevel = 5 } == nil)
        #expect(refused { $0.initialQValue = 1 } == .outOfRange(field: "initialQValue", value: "1", allowed: "2...12"))
        #expect(refused { $0.maxQValue = 13 } != nil)
        #expect(refused { $0.maxQValue = 12 } == nil)
        #expect(refused { $0.roundsWithNoFindsToToggleAB = 251 } == .outOfRange(field: "roundsWithNoFindsToToggleAB", value: "251", allowed: "0...250"))
        #expect(refused { $0.roundsWithNoFindsToToggleAB = 250 } == nil)
        #expect(refused { $0.maxTidBytes = 209 } == .outOfRange(field: "maxTidBytes", value: "209", allowed: "0...208"))
        #expect(refused { $0.maxUserBytes = 208 } == nil)
        #expect(refused { $0.session = 4 } != nil)
        #expect(refused { $0.volume = 1.5 } != nil)
        #expect(refused { $0.detailedPerReadNumReads = 3 } != nil)
        #expect(refused { $0.selectMask = Array(repeating: 0, count: 33) } != nil)
        #expect(refused { $0.selectMask = [1]; $0.selectMaskBitLength = 9 } != nil)
        // Like the library, a minimum above its maximum is lowered, not refused.
        var configuration = VendorRfidConfiguration.preset(.inventoryDistance)
        configuration.minTidBytes = 20
        configuration.maxTidBytes = 8
        #expect(try configuration.inventoryStart(volumeLevels: 8).minTidBytes == 8)
        #expect(throws: VendorCommandError.self) { try VendorUnits.powerByte(dBm: .nan, field: "p") }
        #expect(throws: VendorCommandError.self) { try VendorWordLocation(bank: .user, wordOffset: 64) }
        #expect(throws: VendorCommandError.self) { try VendorSelect(bitLength: 0, bitOffset: 0, bank: .epc, mask: []) }
        #expect(throws: VendorCommandError.self) { try VendorScanWide(startMHz: 10, endMHz: 9, stepMHz: 1, mode: 0) }
    }
}
