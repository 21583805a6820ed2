import GrokAudio
import Foundation
import GrokProtocol
import Testing

@testable import GrokkerEmulator

@Suite("Command handler")
struct CommandHandlerTests {
    /// A handler over a fresh unit in a temp directory.
    private func makeHandler(_ temp: TemporaryDirectory, seed: UInt64 = 1) throws -> GrokkerCommandHandler {
        var rng = SeededGenerator(seed: seed)
        return GrokkerCommandHandler(store: try DeviceStateStore.openOrCreate(deviceDirectory: temp.path, using: &rng))
    }

    private func answer(_ handler: GrokkerCommandHandler, _ request: [UInt8]) throws -> ResponseMessage {
        let bytes = handler.handle(request: request)
        #expect(bytes.count <= WireLimits.maxMessageBytes)
        return try ResponseMessage.decode(bytes)
    }

    @Test("identify answers with the state's values")
    func identify() throws {
        let temp = try TemporaryDirectory()
        defer { temp.remove() }
        let handler = try makeHandler(temp)
        let out = try answer(handler, RequestMessage(id: 77, command: .identify).encode())
        #expect(out.id == 77)
        guard case .identify(let info) = out.response else {
            Issue.record("expected identify, got \(out.response)")
            return
        }
        let state = handler.store.state
        #expect(info.serialNumber == state.serialNumber)
        #expect(info.firmwareVersion == FirmwareVersion(major: 1, minor: 7, build: 3))
        #expect(info.loaderVersion == state.loaderVersion)
        #expect(info.hardwareRevision == state.hardwareRevision)
        #expect(info.hardwareType == .grokker1)
        #expect(info.readerProtocolVersion == 20)
        #expect(info.region == nil && !info.regionSet)
        #expect(info.userMustSetRegion && info.userCanSetRegion && info.provisioned && info.enforceRegion)
        #expect(info.deviceInitializedSuccessfully)
        #expect(info == EmulatedHardware.grokker1.readerInfo(for: state))

        // After a change, identify reports it.
        try handler.store.update {
            $0.region = RegionSetting(name: "Australia", number: 8)
            $0.serialNumber = 123
        }
        let later = try answer(handler, RequestMessage(id: 78, command: .identify).encode())
        guard case .identify(let changed) = later.response else {
            Issue.record("expected identify")
            return
        }
        #expect(changed.regionName == "Australia" && changed.regionNumber == 8)
        #expect(!changed.userMustSetRegion)
        #expect(changed.serialNumberText == "00000123")
    }

    @Test("echo returns the payload unchanged", arguments: [0, 1, 300, Command.maxEchoBytes])
    func echo(count: Int) throws {
        let temp = try TemporaryDirectory()
        defer { temp.remove() }
        let handler = try makeHandler(temp)
        let payload = (0..<count).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let out = try answer(handler, RequestMessage(id: 5, command: .echo(payload)).encode())
        #expect(out == ResponseMessage(id: 5, response: .echo(payload)))
    }

    @Test("an unknown opcode is answered with unsupportedOpcode, keeping id and opcode")
    func unknownOpcode() throws {
        let temp = try TemporaryDirectory()
        defer { temp.remove() }
        let handler = try makeHandler(temp)
        // Header: 1.0, request, opcode 0x0399 (unassigned), id 0x0042, 2-byte payload.
        let out = try answer(handler, [1, 0, 1, 0, 0x99, 0x03, 0x42, 0x00, 2, 0, 0xAB, 0xCD])
        #expect(out.id == 0x42)
        guard case .failure(let opcode, let status, let message) = out.response else {
            Issue.record("expected a failure")
            return
        }
        #expect(opcode == Opcode(rawValue: 0x0399))
        #expect(status == .unsupportedOpcode)
        #expect(message.contains("0x0399"))
    }

    @Test("a newer protocol major is answered with unsupportedVersion in the device's version")
    func newerMajor() throws {
        let temp = try TemporaryDirectory()
        defer { temp.remove() }
        let handler = try makeHandler(temp)
        let request = RequestMessage(id: 9, command: .identify, version: ProtocolVersion(major: 2, minor: 0)).encode()
        let out = try answer(handler, request)
        #expect(out.version == .current)
        #expect(out.id == 9)
        #expect(out.response.opcode == .identify)
        guard case .failure(_, let status, _) = out.response else {
            Issue.record("expected a failure")
            return
        }
        #expect(status == .unsupportedVersion)
    }

    @Test("garbage is answered with an error response, never a crash")
    func garbage() throws {
        let temp = try TemporaryDirectory()
        defer { temp.remove() }
        let handler = try makeHandler(temp)

        let empty = try answer(handler, [])
        #expect(empty == ResponseMessage(
            id: 0, response: .failure(opcode: .unspecified, status: .malformedRequest,
                message: ProtocolError.truncated(field: "header.major", needed: 1, available: 0).description)))

        // A response sent to the device is not a request.
        let misdirected = try answer(handler, ResponseMessage(id: 3, response: .echo([1])).encode())
        #expect(misdirected.id == 3)
        #expect(misdirected.response.opcode == .echo)
        if case .failure(_, let status, _) = misdirected.response {
            #expect(status == .malformedRequest)
        } else {
            Issue.record("expected a failure")
        }

        var rng = SeededGenerator(seed: 99)
        var failures = 0
        for round in 0..<2000 {
            var bytes = (0..<Int.random(in: 0...40, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if round % 2 == 0 && bytes.count >= 10 {
                bytes[0] = 1
                bytes[2] = 1
                bytes[5] = 0
                bytes[8] = UInt8(bytes.count - 10)
                bytes[9] = 0
            }
            let out = try answer(handler, bytes)
            if let header = try? MessageHeader.decode(bytes) {
                #expect(out.id == header.requestID)
                #expect(out.response.opcode == header.opcode)
            } else {
                #expect(out.id == 0)
            }
            if case .failure = out.response { failures += 1 }
        }
        #expect(failures > 0)
    }

    @Test("state changes are persisted before answering; a failed save answers storageFailure")
    func persisting() throws {
        let temp = try TemporaryDirectory()
        defer { temp.remove() }
        let handler = try makeHandler(temp)
        let ok = handler.persisting(.echo, .echo([1])) { $0.batteryPercent = 50 }
        #expect(ok == .echo([1]))
        var rng = SeededGenerator(seed: 2)
        #expect(try DeviceStateStore.openOrCreate(deviceDirectory: temp.path, using: &rng).state.batteryPercent == 50)

        try FileManager.default.removeItem(atPath: temp.path)
        let failed = handler.persisting(.echo, .echo([1])) { $0.batteryPercent = 10 }
        guard case .failure(let opcode, let status, let message) = failed else {
            Issue.record("expected a failure")
            return
        }
        #expect(opcode == .echo && status == .storageFailure && message.contains("state.json"))
        #expect(handler.store.state.batteryPercent == 50)
    }
}
