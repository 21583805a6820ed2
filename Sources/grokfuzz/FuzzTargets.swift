import GrokLink
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
        FuzzTarget(name: "inventory", summary: "inventory event decoder (tag reports, stopped)", seeds: Seeds.inventoryEvents) { bytes in
            guard let event = try? InventoryEvent.decode(bytes) else { return }
            let again = try? InventoryEvent.decode(event.encode())
            check(again == event, "inventory event re-encoding changed its value", bytes)
        },
        FuzzTarget(name: "frame", summary: "link-layer frame decoder (FrameDecoder), bytes after a sync word", seeds: Seeds.frames) { bytes in
            var decoder = FrameDecoder()
            var start = 0
            for (i, byte) in bytes.enumerated() {
                switch decoder.feed(byte) {
                case .needMore:
                    continue
                case .frame(let frame):
                    check(frame.encoded() == Array(bytes[start...i]), "frame re-encoding differs from its bytes", bytes)
                case .badHeader, .badCRC:
                    break
                }
                start = i + 1
            }
        },
        FuzzTarget(name: "modem", summary: "demodulator and framer (FrameScanner) on 16-bit samples, every mode", seeds: Seeds.audio) { bytes in
            var samples = [Float]()
            samples.reserveCapacity(bytes.count / 2)
            var i = 0
            while i + 1 < bytes.count {
                samples.append(Float(Int16(bitPattern: UInt16(bytes[i]) | UInt16(bytes[i + 1]) << 8)) / 32768)
                i += 2
            }
            for mode in LinkMode.ladder {
                let scanner = FrameScanner(mode: mode, sampleRate: 44_100)!
                scanner.scan(samples)
                for found in scanner.found where found.status == .ok {
                    check(found.frame.map { $0.payload.count <= Frame.maxPayload } ?? false, "oversized frame", bytes)
                }
            }
        },
        FuzzTarget(name: "link", summary: "a device-side LinkEngine fed arbitrary audio", seeds: Seeds.audio) { bytes in
            let engine = LinkEngine(role: .device, sampleRate: 44_100)
            var samples = bytes.map { Float(Int8(bitPattern: $0)) / 128 }
            var output = [Float](repeating: 0, count: samples.count)
            samples.withUnsafeMutableBufferPointer { input in
                output.withUnsafeMutableBufferPointer { engine.process(input: UnsafeBufferPointer(input), output: $0) }
            }
            while engine.receive() != nil {}
        },
    ] + FirmwareFuzz.targets + VendorFuzz.targets

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
    /// Inventory events and a start-inventory request.
    @Sendable static func inventoryEvents() -> [[UInt8]] {
        let report = TagReport(epc: Array(repeating: 0x30, count: 12), pc: 0x3000, rssiITenthsDBm: -600,
                               rssiQTenthsDBm: -610, frequencyKHz: 902_750, milliseconds: 10, tid: [0xE2, 0x80])
        return [InventoryEvent.tagReports([report, report]).encode(), InventoryEvent.stopped(.regionNotSet).encode(),
                InventoryEvent.status(rounds: 42).encode(),
                RequestMessage(id: 1, command: .startInventory(InventoryParameters())).encode()]
    }

    /// Encoded link frames (the bytes after a sync word).
    @Sendable static func frames() -> [[UInt8]] {
        [Frame(type: .hello, payload: Array(0..<11)).encoded(),
         Frame(type: .data, flags: Frame.endOfMessage, seq: 3, ack: 9, payload: RequestMessage(id: 1, command: .identify).encode()).encoded(),
         Frame(type: .ack, ack: 4, payload: [1, 0, 0, 0]).encoded() + Frame(type: .nack, seq: 2).encoded()]
    }

    /// A short stretch of base-mode audio holding one frame, as 16-bit little-endian samples.
    @Sendable static func audio() -> [[UInt8]] {
        var synth = FrameSynthesizer(mode: .base, sampleRate: 44_100)
        var samples: [Float] = []
        synth.append(Frame(type: .hello, payload: Array(0..<11)), to: &samples)
        var bytes: [UInt8] = []
        for s in samples {
            let v = UInt16(bitPattern: Int16(max(-32767, min(32767, (s * 32767).rounded()))))
            bytes.append(UInt8(v & 0xFF))
            bytes.append(UInt8(v >> 8))
        }
        return [bytes]
    }

    static let reader = ReaderInfo(
        hardwareType: .grokker1, hardwareModel: "Grokker", hardwareRevision: 3,
        firmwareVersion: FirmwareVersion(major: 1, minor: 7, build: 3),
        loaderVersion: FirmwareVersion(major: 1, minor: 2, build: 0), serialNumber: 12_345_678,
        readerProtocolVersion: ReaderInfo.vendorReaderProtocolVersion, region: RegionSetting(name: "FCC (US), IC (Canada)", number: 1),
        userMustSetRegion: false, userCanSetRegion: true, provisioned: true, enforceRegion: true,
        maxPowerTenthsDBm: 300, maxSensitivityTenthsDBm: -800, numVolumeLevels: 8, maxTonesInSound: 16,
        hasBattery: true, hasExternalPower: true, batteryCapacityMinutes: 240, batteryCapacityMAh: 1000,
        deviceInitializedSuccessfully: true)

    @Sendable static func requests() -> [[UInt8]] {
        [
            RequestMessage(id: 1, command: .identify).encode(),
            RequestMessage(id: 2, command: .echo([])).encode(),
            RequestMessage(id: 3, command: .echo(Array("hello, Grokker".utf8))).encode(),
            RequestMessage(id: 4, command: .setGrokkerPassword(old: "old", new: "new")).encode(),
            RequestMessage(id: 5, command: .changePower(PowerRange(initialTenthsDBm: 200, minTenthsDBm: 100, maxTenthsDBm: 300))).encode(),
            RequestMessage(id: 6, command: .tagAccess(epc: [1, 2], .custom(CustomTagCommand(
                command: [0xE0, 0x01], commandBits: 16, responseBitsNoHeader: 0, responseBitsWithHeader: 49,
                receiveTimeoutMicroseconds: 5000)))).encode(),
            RequestMessage(id: 7, command: .getAntennaTuning).encode(),
            RequestMessage(id: 8, command: .provisioning(.registerSerialNumber(12_345_678))).encode(),
            RequestMessage(id: 9, command: .provisioning(.setMode(true))).encode(),
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
            ResponseMessage(id: 4, response: .provisioning(ProvisioningRecord(
                serialNumber: 12_345_678, hardwareRevision: 3, antennaType: 1, status: .complete, provisioned: true,
                userHasSetRegion: true, userCanSetRegion: true, enforceRegion: true, provisioningMode: false), for: .provisioningStatus)).encode(),
        ]
    }
}
