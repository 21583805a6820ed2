import GrokTestSupport
import Testing
@testable import GrokProtocol

/// The wire vectors of shared/reference/vendor-wire-protocol.md (seen with the vendor host
/// library against an emulated reader) and the facts read from the library, checked against
/// the vendor command codecs.
@Suite("Vendor command layer: wire vectors")
struct VendorCommandVectorTests {
    /// crc8 is the low byte of CRC-16/MCRF4XX over the packet before it.
    private func crc8(_ bytes: [UInt8]) -> UInt8 { UInt8(truncatingIfNeeded: VendorChecksums.crc16MCRF4XX(bytes)) }

    @Test("The checksums match their catalogue check values and the seen packets' crc8 bytes")
    func checksums() {
        #expect(VendorChecksums.crc16MCRF4XX(Array("123456789".utf8)) == 0x6F91)
        #expect(VendorChecksums.crc32MPEG2(Array("123456789".utf8)) == 0x0376_E6E7)
        #expect(crc8(hex("80 05 06 14 e8 03 02")) == 0xd9)
        #expect(crc8(hex("c0 05 06 14 e8 03 02")) == 0xdf)
        #expect(crc8(hex("03")) == 0x1c)
        #expect(crc8(hex("78 01 02")) == 0xe3)
    }

    @Test("GetVersion's request is host protocol 20, 1000 ms of latency, region enforced: 06 14 e8 03 02")
    func getVersionRequest() throws {
        let request = VendorRequest.getVersion(VendorVersionRequest())
        #expect(request.opcode.rawValue == 0x00)
        #expect(try request.encodePayload() == hex("06 14 e8 03 02"))
        let decoded = try VendorRequest(opcode: 0x00, payload: hex("06 14 e8 03 01"))
        #expect(decoded == .getVersion(VendorVersionRequest(hostProtocol: 20, latencyMs: 1000, flags: .provisioningMode)))
    }

    @Test("A GetVersion response of 31 bytes decodes every field with its unit")
    func getVersionResponse() throws {
        let bytes = hex("06 14  0300 06  01 07 10  02  fa 55 08 80 00 40 01  0102030405060708  4e61bc00  00 10 00")
        #expect(bytes.count == VendorReaderVersion.byteCount)
        let version = try VendorReaderVersion(decoding: bytes)
        #expect(version.protocolVersion == 20)
        #expect(version.hardwareType == 3 && version.hardwareTypeName == "ProtoMicro")
        #expect(version.hardwareRevision == 6)
        #expect((version.firmwareMajor, version.firmwareMinor, version.firmwareBuild) == (1, 7, 16))
        #expect(version.maxPowerDBm == 30)
        #expect(version.maxSensitivityDB == -85)
        #expect(version.volumeLevels == 8)
        #expect(version.userHasSetRegion)
        #expect(version.software == .application)
        #expect(version.maxProgramBytes == 64)
        #expect(version.internalId == 0x0807_0605_0403_0201)
        #expect(version.serialNumber == 12_345_678)
        #expect(version.maxTones == 16)
        #expect(try version.encode() == bytes)
        #expect(version.userCanSetRegion && version.hardwareRequiresSetRegion)
        #expect(!version.userMustSetRegion(enforceRegion: true), "the region is set already (flags bit 7)")
    }

    @Test("A version whose first byte is below 6 is refused, not wrapped")
    func versionEncoding() throws {
        #expect(throws: VendorCommandError.self) { try VendorReaderVersion(decoding: hex("05 14") + Array(repeating: 0, count: 29)) }
        #expect(try VendorUnits.versionBytes(20, field: "v") == [6, 20])
        #expect(try VendorUnits.versionBytes(300, field: "v") == [7, 44])
    }

    @Test("Battery is a one-byte request (03 1c) and answers in the 4- and 5-byte forms")
    func battery() throws {
        #expect(try VendorRequest.getBatteryLevel.encodePayload().isEmpty)
        let five = try VendorRequest.getBatteryLevel.decodeResponse(hex("5403 9b 07 4b"))
        #expect(five == .battery(VendorBatteryLevel(raw: 0x0354, voltageCode: 0x9b, flags: [.externalPower, .charging, .canScan], percent: 75)))
        let four = try VendorBatteryLevel(decoding: hex("5403 9b 02"))
        #expect(four.percent == nil)
        #expect(abs(four.volts - 3.55) < 1e-9)
        #expect(four.encode() == hex("5403 9b 02"))
        #expect(VendorBatteryLevel.responseLength(readerProtocol: 13) == 4)
        #expect(VendorBatteryLevel.responseLength(readerProtocol: 14) == 5)
        #expect(throws: VendorCommandError.self) { try VendorBatteryLevel(decoding: hex("5403 9b 07 65")) }
    }

    @Test("Battery percent follows the library's curves below protocol 14 and on hardware revision 3 or lower")
    func batteryCurves() {
        // Revision 1 on battery: 700 is 0 %, 911 is 100 %, 756..787 is the 4 %..8 % step.
        #expect(VendorBatteryCurves.percent(raw: 700, charging: false, hardwareRevision: 1) == (0, false))
        #expect(VendorBatteryCurves.percent(raw: 911, charging: false, hardwareRevision: 1) == (100, true))
        #expect(VendorBatteryCurves.percent(raw: 771, charging: false, hardwareRevision: 1).percent == 4 + (4 * 15 + 31 / 8) / 31)
        #expect(VendorBatteryCurves.percent(raw: 701, charging: false, hardwareRevision: 1) == (0, false))
        // Revision 4's charging curve falls at the top: anything above its first point is 100 %.
        #expect(VendorBatteryCurves.percent(raw: 731, charging: true, hardwareRevision: 4) == (100, true))
        for curve in [VendorBatteryCurves.revision1and2, VendorBatteryCurves.revision3, VendorBatteryCurves.revision4AndLater] {
            #expect(curve.charging.count == 26 && curve.discharging.count == 26)
        }
        // Protocol 13 ignores the reader's percent byte and uses the curve (revision 5: the 509...635 curve).
        let low = VendorBatteryLevel(raw: 509, voltageCode: 100, flags: [.canScan], percent: 90)
        let lowInfo = low.info(readerProtocol: 13, hardwareRevision: 5, capacityMinutes: 240)
        #expect(lowInfo.percentRemaining == 0 && !lowInfo.canScan)
        let full = VendorBatteryLevel(raw: 635, voltageCode: 100, flags: [], percent: nil)
        #expect(full.info(readerProtocol: 13, hardwareRevision: 5, capacityMinutes: 240).minutesRemaining == 240)
        // Protocol 14 on revision 3 still uses the curve.
        #expect(low.info(readerProtocol: 14, hardwareRevision: 3, capacityMinutes: 240).percentRemaining == 0)
        let new = VendorBatteryLevel(raw: 0, voltageCode: 100, flags: [.canScan], percent: 50)
        let newInfo = new.info(readerProtocol: 14, hardwareRevision: 6, capacityMinutes: 240)
        #expect(newInfo.percentRemaining == 50 && newInfo.minutesRemaining == 120 && newInfo.canScan)
        #expect(VendorBatteryCurves.provisioningConstants(hardwareRevision: 1) == (180, 150))
        #expect(VendorBatteryCurves.provisioningConstants(hardwareRevision: 3) == (199, 185))
        #expect(VendorBatteryCurves.provisioningConstants(hardwareRevision: 0) == (137, 128))
    }

    @Test("SetConfiguration of the found-item sound is the seen tone list 02 dc05 6400 d007 3200 00000000")
    func toneList() throws {
        let configuration = VendorConfiguration.tones(.foundItemSound, [VendorTone(frequencyHz: 1500, durationMs: 100),
                                                                       VendorTone(frequencyHz: 2000, durationMs: 50)])
        let payload = hex("02 dc05 6400 d007 3200 00000000")
        #expect(try VendorRequest.setConfiguration(configuration).encodePayload() == payload)
        #expect(try VendorRequest(opcode: 0x0b, payload: payload) == .setConfiguration(configuration))
        #expect(throws: VendorCommandError.self) { try VendorRequest(opcode: 0x0b, payload: hex("02 dc05 6400")) }
    }

    @Test("The Geiger sound carries round(clickRate x 256) and (historyMs + 4) >> 3")
    func geiger() throws {
        let sound = try VendorGeigerSound(frequencyHz: 2000, clickDurationMs: 5, clickRate: 1.5, maxClicksPerSecond: 20, historyMs: 500)
        #expect(try VendorRequest.setConfiguration(.geigerCounterSound(sound)).encodePayload() == hex("01 d007 0500 8001 14 3f"))
        #expect(sound.clickRate == 1.5 && sound.historyMs == 504)
    }

    @Test("GetConfiguration asks [kind][refresh]; configuration 0 is the reader's 11 radio bytes")
    func getConfiguration() throws {
        let request = VendorRequest.getConfiguration(VendorGetConfiguration(kind: .radioDefaults))
        #expect(try request.encodePayload() == hex("00 01"))
        let answer = try request.decodeResponse(hex("04 dc 55 00 be 3c 02 07 00 b4 fa"))
        guard case .configuration(.radioDefaults(let radio)) = answer else { Issue.record("not radio defaults"); return }
        #expect(radio.initialQ == 4 && radio.initialPower == 0xdc && radio.maxPower == 0xfa)
    }

    @Test("Echo carries its bytes both ways, up to 250")
    func echo() throws {
        let data = (0..<100).map { UInt8($0) }
        let request = VendorRequest.echo(try VendorEcho(data))
        #expect(try request.encodePayload() == data)
        #expect(try request.decodeResponse(data) == .echo(data))
        #expect(throws: VendorCommandError.tooLong(field: "echo.data", length: 251, limit: 250)) {
            try VendorEcho(Array(repeating: 0, count: 251))
        }
    }

    @Test("The default preset (Locate Distance, 8 volume levels) is the seen inventory start b1 16 08 ... b4 fa")
    func defaultInventoryStart() throws {
        let start = try VendorRfidConfiguration.preset(.locateDistance).inventoryStart(volumeLevels: 8)
        let payload = hex("b1 16 08 00 00 00 00 00 00 00 00 04 dc 55 00 be 3c 02 07 00 b4 fa")
        #expect(try start.encode(form: .full) == payload)
        #expect(try VendorInventoryStart(decoding: payload, form: .full) == start)
        #expect(try VendorRequest(opcode: 0x07, payload: payload) == .inventory(start, .full))
    }

    @Test("The select block has the seen full form 10 00 20 00 01 30 34 and a short form below protocol 15")
    func selectForms() throws {
        var configuration = VendorRfidConfiguration.preset(.inventoryDistance)
        configuration.selectMask = [0x30, 0x34]
        configuration.selectOffset = 32
        let start = try configuration.inventoryStart(volumeLevels: 8)
        let full = try start.encode(form: .full)
        #expect(full[0] & 0x40 != 0)
        #expect(Array(full.suffix(7)) == hex("10 00 20 00 01 30 34"))
        #expect(try VendorInventoryStart(decoding: full, form: .full) == start)
        #expect(throws: VendorCommandError.self) { try start.encode(form: .short) }
        configuration.selectOffset = 0
        let short = try configuration.inventoryStart(volumeLevels: 8).encode(form: .short)
        #expect(Array(short.suffix(3)) == hex("10 30 34"))
        #expect(try VendorInventoryStart(decoding: short, form: .short).select?.mask == [0x30, 0x34])
    }

    @Test("EPCs to find follow the struct as [length][EPC] when they fit in 226 bytes and there is no select mask; else the host filters (flag 7 clear)")
    func epcList() throws {
        let configuration = VendorRfidConfiguration.preset(.inventoryDistance)
        let a = hex("30 34 25 7b f7 19 4e 40 00 00 1a 85")
        let b = hex("35 ff ff ff f9 9c 70 a0")
        let start = try configuration.inventoryStart(volumeLevels: 8, tags: .only([a, b]))
        #expect(start.epcs == [a, b] && start.flag7)
        let payload = try start.encode(form: .full)
        #expect(payload.count == 22 + 13 + 9 && payload[1] == 22)
        #expect(payload[0] & 0xc0 == 0x80, "no select block, flag 7")
        #expect(Array(payload.suffix(22)) == [12] + a + [8] + b)
        #expect(try VendorInventoryStart(decoding: payload, form: .full) == start)
        #expect(try VendorRequest(opcode: 0x07, payload: payload) == .inventory(start, .full))

        // Seventeen 96-bit EPCs are 221 bytes and go; an eighteenth (234) does not.
        let many = (0..<18).map { i in Array(a.dropLast()) + [UInt8(i)] }
        #expect(try configuration.inventoryStart(volumeLevels: 8, tags: .only(Array(many.prefix(17)))).epcs.count == 17)
        let tooMany = try configuration.inventoryStart(volumeLevels: 8, tags: .only(many))
        #expect(tooMany.epcs.isEmpty && !tooMany.flag7)
        #expect(try tooMany.encode(form: .full).count == 22)
        // A select mask leaves the filtering to the host; so does a list to ignore.
        var selecting = configuration
        selecting.selectMask = [0x30]
        let selected = try selecting.inventoryStart(volumeLevels: 8, tags: .only([a]))
        #expect(selected.epcs.isEmpty && !selected.flag7 && selected.select != nil)
        let ignoring = try configuration.inventoryStart(volumeLevels: 8, tags: .ignoring([a]))
        #expect(ignoring.epcs.isEmpty && !ignoring.flag7)
        #expect(try configuration.inventoryStart(volumeLevels: 8).flag7)
        // A list the vendor would not send, or that does not parse, is refused.
        var oversized = start
        oversized.epcs = many
        #expect(throws: VendorCommandError.self) { try oversized.encode(form: .full) }
        #expect(throws: VendorCommandError.self) { try VendorInventoryStart(decoding: Array(payload.dropLast()), form: .full) }
    }

    @Test("Per-read words make the struct 24 bytes; one word is sent twice")
    func perReadWords() throws {
        var configuration = VendorRfidConfiguration.preset(.inventoryShortRange)
        configuration.detailedPerReadData = true
        configuration.detailedPerReadNumReads = 1
        configuration.detailedPerReadMemoryBank1 = .tid
        configuration.detailedPerReadWordOffset1 = 3
        let payload = try configuration.inventoryStart(volumeLevels: 4).encode(form: .full)
        #expect(payload.count == 24 && payload[1] == 24)
        #expect(payload[10] == 0x09)
        #expect(payload[22] == 0x0e && payload[23] == 0x0e)
        #expect(payload[0] == 0x92, "first-find sound, continual, flag 7")
        #expect(payload[2] == 4)
    }

    @Test("A zero volume sends sound type 0 and level 0")
    func silentInventory() throws {
        var configuration = VendorRfidConfiguration.preset(.locateShortRange)
        configuration.volume = 0
        let payload = try configuration.inventoryStart(volumeLevels: 8).encode(form: .full)
        #expect(payload[0] & 0x07 == 0 && payload[2] == 0)
    }

    @Test("ChangeSoftwareType decodes the seen loader vector 28 00 62 68 01 f4 8d 1a 02 00")
    func changeSoftwareType() throws {
        let payload = hex("28 00 62 68 01 f4 8d 1a 02 00")
        let request = try VendorChangeSoftwareType(decoding: payload)
        #expect(request.length == 40 && request.crc16 == 0x6862 && request.targetType == 1 && request.crc32 == 0x021a_8df4)
        #expect(request.encode() == payload)
        let image = (0..<40).map { UInt8($0) }
        let computed = try VendorChangeSoftwareType(image: image, target: .loader)
        #expect(computed.crc16 == VendorChecksums.crc16MCRF4XX(image) && computed.length == 40)
    }

    @Test("ProgramReader is [addr LE16] to start and [addr LE16][data] per chunk")
    func programReader() throws {
        #expect(try VendorRequest.programReader(VendorProgramReader(address: 0x8000)).encodePayload() == hex("00 80"))
        let chunk = try VendorRequest.programReader(VendorProgramReader(address: 0x8040, data: [1, 2, 3]))
        #expect(try chunk.encodePayload() == hex("40 80 01 02 03"))
        #expect(try VendorRequest(opcode: 0x01, payload: hex("40 80 01 02 03")) == chunk)
    }

    @Test("Provisioning sub-ops 00-04 have their layouts")
    func provisioning() throws {
        let register = VendorProvisioning.register(hardwareRevision: 6, batteryConstantA: 137, batteryConstantB: 128,
                                                   serialNumber: 0x0102_0304, internalId: 0x1122_3344_5566_7788, antennaType: 2)
        #expect(register.encode() == hex("00 06 89 80 04030201 8877665544332211 02"))
        #expect(VendorProvisioning.setUserHasSetRegion(true).encode() == hex("03 01"))
        #expect(VendorProvisioning.setHardwareRevision(7).encode() == hex("04 07"))
        #expect(throws: VendorCommandError.unknownValue(field: "provisioning.subOp", value: 5)) {
            try VendorProvisioning(decoding: hex("05 00"))
        }
        #expect(throws: VendorCommandError.self) { try VendorProvisioning(decoding: hex("03 02")) }
    }

    @Test("SetRegion sends the CRC-32/MPEG-2 of the entry's first 119 bytes, then those bytes; a bad CRC is refused")
    func setRegion() throws {
        let entry = (0..<120).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let request = try VendorSetRegion(entry: entry)
        let payload = request.encode()
        #expect(payload.count == 123)
        let crc = VendorChecksums.crc32MPEG2(entry.prefix(119))
        #expect(Array(payload.prefix(4)) == [UInt8(crc & 0xff), UInt8(crc >> 8 & 0xff), UInt8(crc >> 16 & 0xff), UInt8(crc >> 24)])
        #expect(try VendorSetRegion(decoding: payload) == request)
        var corrupted = payload
        corrupted[50] ^= 1
        #expect(throws: VendorCommandError.self) { try VendorSetRegion(decoding: corrupted) }
        #expect(throws: VendorCommandError.self) { try VendorSetRegion(entry: Array(entry.prefix(100))) }
    }

    @Test("The maintenance commands have the layouts the library builds")
    func maintenance() throws {
        #expect(try VendorRequest.pauseConnection(ms: 1500).encodePayload() == hex("dc 05"))
        #expect(try VendorRequest.playSound(0).encodePayload() == hex("00"))
        #expect(try VendorRequest.getDiagnostics(reset: true).encodePayload() == hex("01"))
        #expect(try VendorRequest.speakerTest(VendorSpeakerTest(frequencyHz: 1000, durationMs: 200, volumeLevel: 8)).encodePayload()
            == hex("e8 03 c8 00 08"))
        #expect(try VendorRequest.setTestFlags(1, 2).encodePayload() == hex("01 02"))
        #expect(try VendorRequest(opcode: 0x13, payload: []) == .getTestFlags)
        #expect(try VendorRequest(opcode: 0x13, payload: hex("01 02")) == .setTestFlags(1, 2))
        let wide = try VendorScanWide(startMHz: 902, endMHz: 928, stepMHz: 2, mode: 1)
        #expect(try VendorRequest.scanWide(wide).encodePayload() == hex("86 03 a0 03 02 01"))
        #expect(wide.steps == 14)
        #expect(try VendorRequest.getTemperature.decodeResponse(hex("3412 1e")) == .temperature(VendorTemperature(raw: 0x1234, degreesC: 30)))
        #expect(try VendorRequest.getAntennaTuning.decodeResponse(hex("0100 0200")) == .antennaTuning(VendorAntennaTuning(staticAverage: 1, dynamicAverage: 2)))
        #expect(try VendorRequest.scanAllFrequencies(maxChannels: 2).decodeResponse(hex("ff 01 c4 02 fe b5"))
            == .scanAllFrequencies([VendorChannelScan(i: -1, q: 1, dBm: -60), VendorChannelScan(i: 2, q: -2, dBm: -75)]))
        #expect(throws: VendorCommandError.self) { try VendorRequest.scanAllFrequencies(maxChannels: 1).decodeResponse(hex("ff 01 c4 02 fe b5")) }
        let diagnostics = VendorDiagnostics(clockSlew16: 65536, bytesSent: 1, bytesReceived: 2, subsequentReadTimeouts: 3,
                                            packetsSent: 4, packetsReceived: 5, sendFailures: 6, crcMismatches: 7, forgottenNotSentTags: 9)
        let bytes = diagnostics.encode()
        #expect(bytes.count == 52 && bytes[12] == 3 && bytes[34] == 7 && bytes[50] == 9)
        #expect(try VendorRequest.getDiagnostics(reset: false).decodeResponse(bytes) == .diagnostics(diagnostics))
    }

    @Test("The other slave-mode sessions: tune antenna, continuous test, echo master")
    func otherSessions() throws {
        let frequency = VendorTuneAntennaPacket.oneFrequency(channel: 18050, reflectedPower: 300, values: [1, 2, 3, 4, 5])
        #expect(try frequency.encode() == hex("8246 2c01 0102030405"))
        #expect(try VendorTuneAntennaPacket(opcode: 1, payload: hex("8246 2c01 0102030405")) == frequency)
        #expect(throws: VendorCommandError.self) { try VendorTuneAntennaPacket(opcode: 1, payload: hex("8246 2c01 01020304")) }
        #expect(try VendorTuneAntennaPacket(opcode: 0, payload: hex("00 0100")) == .completed(result: 0, value: 1))
        #expect(try VendorContinuousTestPacket(opcode: 1, payload: []) == .ping)
        #expect(throws: VendorCommandError.self) { try VendorContinuousTestPacket(opcode: 1, payload: [0]) }
        #expect(try VendorContinuousTestPacket(opcode: 0, payload: [3]) == .completed(result: 3))
        #expect(try VendorEchoMasterPacket(opcode: 0, payload: hex("6400 0200")) == .completed(successes: 100, failures: 2))
        #expect(throws: VendorCommandError.self) { try VendorEchoMasterPacket(opcode: 0, payload: hex("6400 02")) }
        #expect(try VendorEchoMasterPacket(opcode: 1, payload: [9, 8]).encode() == [9, 8])
    }

    @Test("Every opcode the library sends has a number, and unknown ones are refused")
    func opcodes() throws {
        #expect(VendorOpcode.allCases.map(\.rawValue) == [0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c,
                                                        0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16])
        #expect(throws: VendorCommandError.unknownValue(field: "request.opcode", value: 0x17)) { try VendorRequest(opcode: 0x17, payload: []) }
        #expect(try VendorRequest(opcode: 5, payload: []) == .echoMaster)
        #expect(throws: VendorCommandError.self) { try VendorRequest(opcode: 5, payload: [0]) }
        #expect(VendorOpcode.setRegion.description == "SetRegion (0x11)")
        let error = VendorCommandError.truncated(field: "x", needed: 2, available: 1)
        #expect(error.code == "vendor_truncated" && error.arguments == ["x", "2", "1"])
    }

    @Test("a request payload longer than a packet can carry is refused, not decoded (fuzzing found an inventory start of 255 bytes)")
    func overlongPayloadRefused() throws {
        let start = try VendorRequest.inventory(VendorRfidPresets.configuration(.locateDistance).inventoryStart(volumeLevels: 8), .full).encodePayload()
        let padded = start + [UInt8](repeating: 0, count: 251 - start.count)
        #expect(throws: VendorCommandError.tooLong(field: "\(VendorOpcode.inventory) request", length: 251, limit: 250)) {
            try VendorRequest(opcode: VendorOpcode.inventory.rawValue, payload: padded)
        }
    }
}
