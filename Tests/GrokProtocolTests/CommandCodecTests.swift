import GrokAudio
import Foundation
import Testing

@testable import GrokProtocol

@Suite("Command codec")
struct CommandCodecTests {
    // MARK: Round trips

    @Test("every request survives encode and decode", arguments: Samples.requests)
    func requestRoundTrip(_ message: RequestMessage) throws {
        let bytes = message.encode()
        #expect(bytes.count <= WireLimits.maxMessageBytes)
        #expect(try RequestMessage.decode(bytes) == message)
        // Any Collection<UInt8> decodes, not only arrays.
        #expect(try RequestMessage.decode(bytes[...]) == message)
    }

    @Test("every response survives encode and decode", arguments: Samples.responses)
    func responseRoundTrip(_ message: ResponseMessage) throws {
        let bytes = message.encode()
        #expect(bytes.count <= WireLimits.maxMessageBytes)
        #expect(try ResponseMessage.decode(bytes) == message)
    }

    @Test("the largest echo fills a message exactly")
    func largestEcho() {
        let response = ResponseMessage(id: 1, response: .echo(Samples.maxEcho)).encode()
        #expect(response.count == WireLimits.maxMessageBytes)
        let request = RequestMessage(id: 1, command: .echo(Samples.maxEcho)).encode()
        #expect(request.count == WireLimits.maxMessageBytes - 1)
    }

    // MARK: Known byte vectors (the layout must not drift silently)

    @Test("identify request bytes")
    func identifyRequestVector() throws {
        let bytes = RequestMessage(id: 0x1234, command: .identify).encode()
        #expect(bytes == hex("01 00 01 00 0100 3412 0000"))
        #expect(try RequestMessage.decode(bytes) == RequestMessage(id: 0x1234, command: .identify))
    }

    @Test("identify response bytes")
    func identifyResponseVector() throws {
        let expected = hex(
            """
            01 00 02 00 0100 3412 2700
            00
            05 03 01 07 0300 01 02 0000 4E61BC00 1400 FD00 2C01 E0FC 08 10 F000 E803
            07 4772 6F6B 6B65 72
            0100
            """)
        let message = ResponseMessage(id: 0x1234, response: .identify(Samples.grokker))
        #expect(message.encode() == expected)
        #expect(try ResponseMessage.decode(expected) == message)
    }

    @Test("factory provisioning bytes")
    func provisioningVectors() throws {
        let request = RequestMessage(id: 7, command: .provisioning(.registerSerialNumber(12_345_678)))
        #expect(request.encode() == hex("01 00 01 00 0305 0700 0400 4E61BC00"))
        let response = ResponseMessage(id: 0x1234, response: .provisioning(Samples.provisioningRecord, for: .provisioningStatus))
        let expected = hex("01 00 02 00 0105 3412 0900 00 4E61BC00 03 01 02 0D")
        #expect(response.encode() == expected)
        #expect(try ResponseMessage.decode(expected) == response)
        // A mode flag other than 0 or 1 is malformed.
        #expect(throws: ProtocolError.self) { try RequestMessage.decode(hex("01 00 01 00 0205 0100 0100 02")) }
    }

    @Test("echo and failure bytes")
    func echoAndFailureVectors() {
        #expect(RequestMessage(id: 7, command: .echo([0xAA, 0xBB])).encode() == hex("01 00 01 00 0200 0700 0400 0200 AABB"))
        #expect(ResponseMessage(id: 7, response: .echo([0xAA])).encode() == hex("01 00 02 00 0200 0700 0400 00 0100 AA"))
        let failure = ResponseMessage(id: 7, response: .failure(opcode: Opcode(rawValue: 0x0999), status: .unsupportedOpcode, message: "no"))
        #expect(failure.encode() == hex("01 00 02 00 9909 0700 0400 01 02 6E6F"))
    }

    @Test("announcements survive encode and decode; every strict prefix fails",
          arguments: [Samples.grokker, Samples.minimal, Samples.maximal, Samples.outOfBox])
    func announcementRoundTrip(_ info: ReaderInfo) throws {
        let bytes = Announcement(info: info).encode()
        #expect(try Announcement.decode(bytes) == Announcement(info: info))
        for length in 0..<bytes.count {
            #expect(throws: ProtocolError.self) { try Announcement.decode(bytes.prefix(length)) }
        }
    }

    @Test("a region outside the vendor's 22 travels with its name")
    func customRegionVector() throws {
        var info = Samples.grokker
        info.region = RegionSetting(name: "Lab", number: 900)
        let bytes = ResponseMessage(id: 1, response: .identify(info)).encode()
        #expect(Array(bytes.suffix(6)) == hex("8403 03 4C6162"))
        #expect(try ResponseMessage.decode(bytes) == ResponseMessage(id: 1, response: .identify(info)))
    }

    @Test("setRegion round trip")
    func setRegionRoundTrip() throws {
        let request = RequestMessage(id: 9, command: .setRegion(RegionCatalog.all[1].setting))
        #expect(request.encode() == hex("01 00 01 00 0103 0900 0C00 0200 09") + Array("ETSI (EU)".utf8))
        #expect(try RequestMessage.decode(request.encode()) == request)
        let response = ResponseMessage(id: 9, response: .setRegion(Samples.grokker))
        #expect(try ResponseMessage.decode(response.encode()) == response)
    }

    @Test("announcement bytes and kind checks")
    func announcementVector() throws {
        let expected = hex(
            """
            01 00 03 00 0100 0000 2600
            05 03 01 07 0300 01 02 0000 4E61BC00 1400 FD00 2C01 E0FC 08 10 F000 E803
            07 4772 6F6B 6B65 72
            0100
            """)
        #expect(Announcement(info: Samples.grokker).encode() == expected)
        let request = RequestMessage(id: 1, command: .identify).encode()
        #expect(throws: ProtocolError.unexpectedKind(expected: .event, received: .request)) { try Announcement.decode(request) }
        #expect(throws: ProtocolError.unexpectedKind(expected: .response, received: .event)) { try ResponseMessage.decode(expected) }
        var otherEvent = expected
        otherEvent[4] = 0x01
        otherEvent[5] = 0x01
        #expect(throws: ProtocolError.unknownOpcode(0x0101)) { try Announcement.decode(otherEvent) }
    }

    // MARK: Truncation

    @Test("every strict prefix of a request fails with a typed error", arguments: Samples.requests.filter { $0.encode().count < 600 })
    func requestPrefixes(_ message: RequestMessage) {
        let bytes = message.encode()
        for length in 0..<bytes.count {
            #expect(throws: ProtocolError.self) { try RequestMessage.decode(bytes.prefix(length)) }
        }
    }

    @Test("every strict prefix of a response fails with a typed error", arguments: Samples.responses.filter { $0.encode().count < 600 })
    func responsePrefixes(_ message: ResponseMessage) {
        let bytes = message.encode()
        for length in 0..<bytes.count {
            #expect(throws: ProtocolError.self) { try ResponseMessage.decode(bytes.prefix(length)) }
        }
    }

    @Test("a cut payload with a consistent header fails inside the payload", arguments: Samples.responses.filter { $0.encode().count < 600 })
    func payloadPrefixes(_ message: ResponseMessage) {
        let bytes = message.encode()
        for length in MessageHeader.size..<bytes.count {
            var cut = Array(bytes.prefix(length))
            let payload = UInt16(length - MessageHeader.size)
            cut[8] = UInt8(payload & 0xFF)
            cut[9] = UInt8(payload >> 8)
            do {
                _ = try ResponseMessage.decode(cut)
                Issue.record("decoded a payload cut to \(payload) bytes")
            } catch {
                guard case .truncated(let field, _, _) = error else {
                    Issue.record("expected truncated, got \(error)")
                    continue
                }
                #expect(field != "payload")
            }
        }
    }

    @Test("header length disagreeing with the message is refused")
    func lengthChecks() {
        var bytes = RequestMessage(id: 1, command: .echo([1, 2, 3])).encode()
        bytes.append(0)
        #expect(throws: ProtocolError.lengthMismatch(declared: 5, actual: 6)) { try RequestMessage.decode(bytes) }
        #expect(throws: ProtocolError.truncated(field: "header.major", needed: 1, available: 0)) {
            try RequestMessage.decode([UInt8]())
        }
        let huge = [UInt8](repeating: 0, count: WireLimits.maxMessageBytes + 1)
        #expect(throws: ProtocolError.messageTooLong(length: 4097, limit: 4096)) { try RequestMessage.decode(huge) }
        #expect(throws: ProtocolError.messageTooLong(length: 4097, limit: 4096)) { try MessageHeader.decode(huge) }
    }

    // MARK: Random damage

    @Test("random byte flips never trap", arguments: [UInt64(1), 2, 3])
    func byteFlips(seed: UInt64) throws {
        var rng = SeededGenerator(seed: seed)
        let originals = Samples.requests.map { $0.encode() } + Samples.responses.map { $0.encode() }
            + [Announcement(info: Samples.grokker).encode(), Announcement(info: Samples.outOfBox).encode()]
        var decoded = 0
        var failed = 0
        for _ in 0..<1500 {
            var bytes = originals.randomElement(using: &rng)!
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                let at = Int.random(in: 0..<min(bytes.count, 64), using: &rng)
                bytes[at] ^= UInt8.random(in: 1...255, using: &rng)
            }
            if Bool.random(using: &rng) {
                bytes.removeLast(Int.random(in: 0...min(4, bytes.count), using: &rng))
            }
            let outcome = try checkDecoders(bytes)
            decoded += outcome.decoded
            failed += outcome.failed
        }
        // Both outcomes happen: the flips are neither all harmless nor all fatal.
        #expect(decoded > 0)
        #expect(failed > 0)
    }

    @Test("random garbage never traps", arguments: [UInt64(11), 12])
    func garbage(seed: UInt64) throws {
        var rng = SeededGenerator(seed: seed)
        for round in 0..<2000 {
            var bytes = (0..<Int.random(in: 0...48, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if round % 2 == 0 && bytes.count >= MessageHeader.size {
                // (kind 1...3 covers requests, responses and announcements)
                // A plausible header so the payload decoders see the garbage too.
                bytes[0] = 1
                bytes[1] = UInt8.random(in: 0...1, using: &rng)
                bytes[2] = UInt8.random(in: 1...3, using: &rng)
                bytes[4] = UInt8.random(in: 0...3, using: &rng)
                bytes[5] = 0
                let length = UInt16(bytes.count - MessageHeader.size)
                bytes[8] = UInt8(length & 0xFF)
                bytes[9] = UInt8(length >> 8)
            }
            _ = try checkDecoders(bytes)
        }
    }

    /// Decodes `bytes` every way; whatever decodes must re-encode to the same value.
    private func checkDecoders(_ bytes: [UInt8]) throws -> (decoded: Int, failed: Int) {
        var decoded = 0
        var failed = 0
        do {
            let request = try RequestMessage.decode(bytes)
            #expect(try RequestMessage.decode(request.encode()) == request)
            decoded += 1
        } catch {
            failed += 1
        }
        do {
            let response = try ResponseMessage.decode(bytes)
            #expect(try ResponseMessage.decode(response.encode()) == response)
            decoded += 1
        } catch {
            failed += 1
        }
        do {
            let announcement = try Announcement.decode(bytes)
            #expect(try Announcement.decode(announcement.encode()) == announcement)
            decoded += 1
        } catch {
            failed += 1
        }
        return (decoded, failed)
    }

    // MARK: Unknown opcodes, kinds and versions

    @Test("an unknown opcode is a typed error and maps to unsupportedOpcode")
    func unknownOpcode() throws {
        let bytes = hex("01 00 01 00 7777 0500 0000")
        #expect(throws: ProtocolError.unknownOpcode(0x7777)) { try RequestMessage.decode(bytes) }
        #expect(StatusCode(for: .unknownOpcode(0x7777)) == .unsupportedOpcode)
        // A successful response to an opcode this build does not know cannot be read.
        #expect(throws: ProtocolError.unknownOpcode(0x7777)) { try ResponseMessage.decode(hex("01 00 02 00 7777 0500 0100 00")) }
        // A failure for it can.
        let failure = hex("01 00 02 00 7777 0500 0200 01 00")
        #expect(try ResponseMessage.decode(failure).response
            == .failure(opcode: Opcode(rawValue: 0x7777), status: .unsupportedOpcode, message: ""))
    }

    @Test("a newer or older major is refused before the payload is read", arguments: [UInt8(0), 2, 255])
    func otherMajor(major: UInt8) throws {
        var bytes = RequestMessage(id: 3, command: .identify).encode()
        bytes[0] = major
        let expected = ProtocolError.unsupportedVersion(
            received: ProtocolVersion(major: major, minor: 0), supported: .current)
        #expect(throws: expected) { try RequestMessage.decode(bytes) }
        #expect(StatusCode(for: expected) == .unsupportedVersion)
        // The header (frozen across majors) still reads, so the device can answer it.
        let header = try MessageHeader.decode(bytes)
        #expect(header.requestID == 3)
        #expect(header.opcode == .identify)
    }

    @Test("a newer minor may append fields; the same minor may not")
    func newerMinor() throws {
        let extended = RequestMessage(id: 4, command: .echo([9]), version: ProtocolVersion(major: 1, minor: 1)).encode() + [0xEE, 0xFF]
        var patched = extended
        patched[8] += 2
        let decoded = try RequestMessage.decode(patched)
        #expect(decoded.command == .echo([9]))
        #expect(decoded.version == ProtocolVersion(major: 1, minor: 1))

        var strict = patched
        strict[1] = ProtocolVersion.current.minor
        #expect(throws: ProtocolError.trailingBytes(count: 2)) { try RequestMessage.decode(strict) }

        // Unknown flag bits in the header are ignored.
        var flagged = RequestMessage(id: 4, command: .identify).encode()
        flagged[3] = 0xFF
        #expect(try RequestMessage.decode(flagged).command == .identify)
    }

    @Test("unknown status codes, hardware types and flag bits from a newer device still decode")
    func unknownValues() throws {
        let status = hex("01 01 02 00 0100 0100 0200 C8 00")
        #expect(try ResponseMessage.decode(status).response == .failure(opcode: .identify, status: .unrecognized(200), message: ""))
        #expect(StatusCode(code: 200).code == 200)
        #expect(StatusCode.unrecognized(0).code == StatusCode.internalError.code)

        var bytes = ResponseMessage(id: 1, response: .identify(Samples.minimal)).encode()
        bytes[11] = 99  // hardware type
        bytes[28] = 0xFF  // reserved flag bits (high byte of flags)
        guard case .identify(let info) = try ResponseMessage.decode(bytes).response else {
            Issue.record("not an identify response")
            return
        }
        #expect(info.hardwareType == .unknown)
        #expect(info == Samples.minimal)
    }

    @Test("kinds are checked")
    func kinds() {
        let response = ResponseMessage(id: 1, response: .echo([])).encode()
        #expect(throws: ProtocolError.unexpectedKind(expected: .request, received: .response)) { try RequestMessage.decode(response) }
        let request = RequestMessage(id: 1, command: .identify).encode()
        #expect(throws: ProtocolError.unexpectedKind(expected: .response, received: .request)) { try ResponseMessage.decode(request) }
        var event = request
        event[2] = MessageKind.event.rawValue
        #expect(throws: ProtocolError.unexpectedKind(expected: .response, received: .event)) { try ResponseMessage.decode(event) }
        var unknown = request
        unknown[2] = 0
        #expect(throws: ProtocolError.unknownKind(0)) { try RequestMessage.decode(unknown) }
    }

    @Test("strings are validated and capped")
    func strings() throws {
        // 0xC3 0x28 is not UTF-8.
        let bad = hex("01 00 02 00 0100 0100 0400 05 02 C328")
        #expect(throws: ProtocolError.invalidUTF8(field: "response.message")) { try ResponseMessage.decode(bad) }

        var info = Samples.grokker
        info.hardwareModel = String(repeating: "é", count: 150)  // 300 bytes
        let message = ResponseMessage(id: 1, response: .identify(info))
        guard case .identify(let decoded) = try ResponseMessage.decode(message.encode()).response else {
            Issue.record("not an identify response")
            return
        }
        #expect(decoded.hardwareModel == String(repeating: "é", count: 127))
    }

    @Test("an echo length beyond the limit is refused")
    func echoLimit() {
        let bytes = hex("01 00 01 00 0200 0100 0200 FFFF")
        #expect(throws: ProtocolError.invalidValue(field: "echo.length", value: 0xFFFF)) { try RequestMessage.decode(bytes) }
    }

    // MARK: Value types

    @Test("firmware versions order, print and parse")
    func firmwareVersion() throws {
        let a = FirmwareVersion(major: 1, minor: 7, build: 3)
        let b = FirmwareVersion(major: 1, minor: 7, build: 10)
        let c = FirmwareVersion(major: 1, minor: 10, build: 0)
        let d = FirmwareVersion(major: 2, minor: 0, build: 0)
        #expect(a < b && b < c && c < d)
        #expect(a.description == "1.7.3")
        #expect(FirmwareVersion("1.7.3") == a)
        #expect(FirmwareVersion("255.255.65535") == FirmwareVersion(major: 255, minor: 255, build: 65535))
        for bad in ["", "1.7", "1.7.3.4", "1..3", "256.0.0", "1.7.65536", "a.b.c", "+1.7.3", "1.7.3 "] {
            #expect(FirmwareVersion(bad) == nil, "accepted \(bad)")
        }
        let json = try JSONEncoder().encode([a])
        #expect(String(decoding: json, as: UTF8.self) == "[\"1.7.3\"]")
        #expect(try JSONDecoder().decode([FirmwareVersion].self, from: json) == [a])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([FirmwareVersion].self, from: Data("[\"x\"]".utf8)) }
    }

    @Test("reader information helpers")
    func readerInfoHelpers() {
        let info = Samples.grokker
        #expect(info.serialNumberText == "12345678")
        #expect(ReaderInfo.formatSerialNumber(42) == "00000042")
        #expect(ReaderInfo.formatSerialNumber(.max) == "4294967295")
        #expect(info.maxPowerDBm == 30.0)
        #expect(info.maxSensitivityDBm == -80.0)
        #expect(info.regionSet && info.regionName == "FCC (US), IC (Canada)" && info.regionNumber == 1)
        #expect(!Samples.outOfBox.regionSet && Samples.outOfBox.regionName == nil)
        #expect(HardwareType.grokker1.vendorName == "GROKKER_1")
        #expect(HardwareType.grokker1.rawValue == 5 && HardwareType.unknown.rawValue == 0)
        #expect(info.description.contains("12345678"))
        #expect(ProtocolVersion.current.description == "1.0")
        #expect(ProtocolVersion(major: 1, minor: 2) < ProtocolVersion(major: 2, minor: 0))
        #expect(Opcode.identify.description == "identify (0x0001)")
        #expect(Opcode(rawValue: 0xABC).description == "0x0ABC")
    }

    @Test("errors have stable codes, arguments and actionable text")
    func errors() {
        let error = ProtocolError.unsupportedVersion(received: ProtocolVersion(major: 2, minor: 1), supported: .current)
        #expect(error.code == "protocol_unsupported_version")
        #expect(error.arguments == ["2.1", "1.0"])
        #expect(error.description.contains("2.1") && error.description.contains("update"))
        let truncated = ProtocolError.truncated(field: "identify.serialNumber", needed: 4, available: 1)
        #expect(truncated.code == "protocol_truncated")
        #expect(truncated.arguments == ["identify.serialNumber", "4", "1"])
        #expect(ProtocolError.unknownOpcode(0x7777).arguments == ["0x7777"])
        #expect(StatusCode.regionNotSet.name == "region_not_set")
        #expect(StatusCode(code: 8) == .regionNotSet)
        for status in Samples.statuses {
            #expect(StatusCode(code: status.code) == status)
        }
    }

    @Test("device password, antenna tuning, changePower and custom-command byte vectors")
    func laterCommandVectors() throws {
        #expect(RequestMessage(id: 7, command: .authenticateGrokker("pw")).encode()
            == [0x01, 0x00, 0x01, 0x00, 0x02, 0x08, 0x07, 0x00, 0x03, 0x00, 0x02, 0x70, 0x77])
        #expect(RequestMessage(id: 7, command: .setGrokkerPassword(old: "", new: "pw")).encode()
            == [0x01, 0x00, 0x01, 0x00, 0x01, 0x08, 0x07, 0x00, 0x04, 0x00, 0x00, 0x02, 0x70, 0x77])
        #expect(ResponseMessage(id: 7, response: .grokkerPassword(.wrongPassword, for: .authenticateGrokker)).encode()
            == [0x01, 0x00, 0x02, 0x00, 0x02, 0x08, 0x07, 0x00, 0x02, 0x00, 0x00, 0x02])
        #expect(RequestMessage(id: 7, command: .changePower(PowerRange(initialTenthsDBm: 200, minTenthsDBm: 100,
                                                                         maxTenthsDBm: 300))).encode()
            == [0x01, 0x00, 0x01, 0x00, 0x04, 0x01, 0x07, 0x00, 0x06, 0x00, 0xC8, 0x00, 0x64, 0x00, 0x2C, 0x01])
        // tagAccess, EPC 01 02, op 8: 16 command bits E0 01, no-header 0, with-header 49, 5000 µs.
        #expect(RequestMessage(id: 7, command: .tagAccess(epc: [1, 2], .custom(CustomTagCommand(
            command: [0xE0, 0x01], commandBits: 16, responseBitsNoHeader: 0, responseBitsWithHeader: 49,
            receiveTimeoutMicroseconds: 5000)))).encode()
            == [0x01, 0x00, 0x01, 0x00, 0x01, 0x02, 0x07, 0x00, 0x10, 0x00,
                0x02, 0x01, 0x02, 0x08, 0x10, 0x00, 0xE0, 0x01, 0x00, 0x00, 0x31, 0x00, 0x88, 0x13, 0x00, 0x00])
        #expect(AntennaTuningProgress(frequencyKHz: 865_700, reflectedTenthsDBm: 55, tuned: 1, total: 4).encode()
            == [0x01, 0x00, 0x03, 0x00, 0x01, 0x09, 0x00, 0x00, 0x0A, 0x00, 0xA4, 0x35, 0x0D, 0x00, 0x37, 0x00, 0x01, 0x00, 0x04, 0x00])
        let progress = AntennaTuningProgress(frequencyKHz: 902_750, reflectedTenthsDBm: -12, tuned: 50, total: 50)
        #expect(try AntennaTuningProgress.decode(progress.encode()) == progress)
        // A custom command with both reply lengths (or neither) is malformed.
        var bad = RequestMessage(id: 7, command: .tagAccess(epc: [1, 2], .custom(CustomTagCommand(
            command: [0xE0, 0x01], commandBits: 16, responseBitsNoHeader: 48, responseBitsWithHeader: 49,
            receiveTimeoutMicroseconds: 5000)))).encode()
        #expect(throws: ProtocolError.self) { try RequestMessage.decode(bad) }
        bad[18...21] = [0, 0, 0, 0]
        #expect(throws: ProtocolError.self) { try RequestMessage.decode(bad) }
    }
}
