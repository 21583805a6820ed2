import GrokProtocol

/// One fuzz target: a decoder fed arbitrary bytes. `run` must never trap on any input; it
/// traps only when a decoder breaks one of its own invariants (for example: a message that
/// decodes must re-encode to bytes that decode to the same value), which libFuzzer then
/// reports as a crash with the input that caused it.
struct FuzzTarget: Sendable {
    /// The name given in `GROKFUZZ_TARGET` or `--target`.
    var name: String
    /// What the target exercises.
    var summary: String
    /// Valid inputs to start a corpus from.
    var seeds: @Sendable () -> [[UInt8]]
    /// Feeds one input.
    var run: @Sendable ([UInt8]) -> Void

    /// Every target, in the order `--list` prints them. Add new decoders here.
    static let all: [FuzzTarget] = [
        FuzzTarget(name: "command", summary: "command-layer request decoder (RequestMessage)", seeds: Seeds.requests) { bytes in
            guard let message = try? RequestMessage.decode(bytes) else { return }
            let again = try? RequestMessage.decode(message.encode())
            check(again == message, "request re-encoding changed its value", bytes)
        },
        FuzzTarget(name: "response", summary: "command-layer response decoder (ResponseMessage)", seeds: Seeds.responses) { bytes in
            guard let message = try? ResponseMessage.decode(bytes) else { return }
            let again = try? ResponseMessage.decode(message.encode())
            check(again == message, "response re-encoding changed its value", bytes)
        },
        FuzzTarget(name: "announcement", summary: "command-layer announcement event decoder (Announcement)", seeds: Seeds.announcements) { bytes in
            guard let message = try? Announcement.decode(bytes) else { return }
            let again = try? Announcement.decode(message.encode())
            check(again == message, "announcement re-encoding changed its value", bytes)
        },
        FuzzTarget(name: "header", summary: "command-layer message header (MessageHeader)", seeds: { Seeds.requests() + Seeds.responses() + Seeds.announcements() }) { bytes in
            guard let header = try? MessageHeader.decode(bytes) else { return }
            check(Int(header.payloadLength) == bytes.count - MessageHeader.size, "header length unchecked", bytes)
        },
    ]

    /// The target named `name`, if any.
    static func named(_ name: String) -> FuzzTarget? {
        all.first { $0.name == name }
    }

    /// The names, comma-separated, for messages.
    static var names: String { all.map(\.name).joined(separator: ", ") }

    /// Traps with a message when an invariant fails.
    static func check(_ condition: Bool, _ message: String, _ input: [UInt8]) {
        if !condition {
            fatalError("grokfuzz invariant failed: \(message); input \(input.count) bytes")
        }
    }
}

/// Valid command-layer messages, one of each kind, to seed a corpus.
enum Seeds {
    static let reader = ReaderInfo(
        hardwareType: .grokker1, hardwareModel: "Grokker", hardwareRevision: 3,
        firmwareVersion: FirmwareVersion(major: 1, minor: 7, build: 3),
        loaderVersion: FirmwareVersion(major: 1, minor: 2, build: 0), serialNumber: 12_345_678,
        readerProtocolVersion: ReaderInfo.vendorReaderProtocolVersion, region: RegionSetting(name: "FCC (US) / IC (Canada)", number: 1),
        userMustSetRegion: false, userCanSetRegion: true, provisioned: true, enforceRegion: true,
        maxPowerTenthsDBm: 300, maxSensitivityTenthsDBm: -800, numVolumeLevels: 8, maxTonesInSound: 16,
        hasBattery: true, hasExternalPower: true, batteryCapacityMinutes: 240, batteryCapacityMAh: 1000,
        deviceInitializedSuccessfully: true)

    @Sendable static func requests() -> [[UInt8]] {
        [
            RequestMessage(id: 1, command: .identify).encode(),
            RequestMessage(id: 2, command: .echo([])).encode(),
            RequestMessage(id: 3, command: .echo(Array("hello, Grokker".utf8))).encode(),
        ]
    }

    @Sendable static func announcements() -> [[UInt8]] {
        var unset = reader
        unset.region = nil
        unset.userMustSetRegion = true
        return [Announcement(info: reader).encode(), Announcement(info: unset).encode()]
    }

    @Sendable static func responses() -> [[UInt8]] {
        var unset = reader
        unset.region = nil
        unset.userMustSetRegion = true
        return [
            ResponseMessage(id: 1, response: .identify(reader)).encode(),
            ResponseMessage(id: 1, response: .identify(unset)).encode(),
            ResponseMessage(id: 2, response: .echo(Array("hello, Grokker".utf8))).encode(),
            ResponseMessage(id: 3, response: .failure(opcode: Opcode(rawValue: 0x0301), status: .unsupportedOpcode, message: "no")).encode(),
        ]
    }
}
