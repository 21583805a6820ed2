import Foundation
import GrokAudio
import GrokBasics
import GrokLink
import GrokProtocol

/// `grokctl audio decode`: the vendor-protocol packets in a WAV recording of the audio link,
/// found by one ``VendorPacketScanner`` per channel (every samples-per-bit setting at the
/// file's rate; none at a rate the modem does not run), sorted by time then channel, with
/// what each channel carried.
///
/// The recording is streamed (GrokAudio's ``WAVFile/stream(_:name:size:limits:blockFrames:_:)``):
/// the scanners take its samples a block at a time, so memory holds one block and the packets
/// found, however long the recording; a header declaring more than the 1 GiB the reader takes
/// is refused before a sample is read, and reading stops at the end of the data chunk.
public enum RecordingDecoder {
    /// Decodes the recording at `path` (a regular file), its packets labelled `file`.
    /// - Throws: ``AudioError`` when it cannot be read as a WAV file.
    public static func decode(path: String, file: String) throws(AudioError) -> DecodedRecording {
        var scan = Scan()
        let summary = try WAVFile.stream(path: path) { scan.add(sampleRate: $0, block: $1) }
        return scan.finish(summary, file: file)
    }

    /// Decodes what `fd` holds from where it stands (standard input), `name` in errors, its
    /// packets labelled `file`.
    public static func decode(fileDescriptor fd: Int32, name: String, file: String) throws(AudioError) -> DecodedRecording {
        var scan = Scan()
        let summary = try WAVFile.stream(fileDescriptor: fd, name: name) { scan.add(sampleRate: $0, block: $1) }
        return scan.finish(summary, file: file)
    }

    /// Decodes `source` (`name` in errors, `size` when known) within `limits`, its packets
    /// labelled `file`.
    public static func decode(_ source: inout some WAVByteSource, name: String, size: Int? = nil,
                              limits: WAVFile.Limits = .init(), file: String) throws(AudioError) -> DecodedRecording {
        var scan = Scan()
        let summary = try WAVFile.stream(&source, name: name, size: size, limits: limits) { scan.add(sampleRate: $0, block: $1) }
        return scan.finish(summary, file: file)
    }

    /// One scanner per channel, fed block by block.
    struct Scan {
        var scanners: [VendorPacketScanner] = []

        mutating func add(sampleRate: Int, block: [[Float]]) {
            if scanners.isEmpty { scanners = block.map { _ in VendorPacketScanner(sampleRate: sampleRate) } }
            for (index, samples) in block.enumerated() {
                samples.withUnsafeBufferPointer { scanners[index].scan($0) }
            }
        }

        func finish(_ audio: WAVStreamSummary, file: String) -> DecodedRecording {
            var found: [(channel: Int, packet: ScannedVendorPacket)] = []
            for (index, scanner) in scanners.enumerated() { found += scanner.packets.map { (index, $0) } }
            return RecordingDecoder.describe(found, audio, file: file)
        }
    }

    static func describe(_ scanned: [(channel: Int, packet: ScannedVendorPacket)], _ audio: WAVStreamSummary,
                         file: String) -> DecodedRecording {
        var found = scanned
        found.sort { ($0.packet.endSample, $0.channel) < ($1.packet.endSample, $1.channel) }
        let firstRequest = found.first { if case .request = $0.packet.content { true } else { false } }?.channel
        let directions = self.directions(firstRequestChannel: firstRequest, channels: audio.channelCount)
        let packets = found.map {
            describe($0.packet, file: file, channel: $0.channel, direction: directions[$0.channel], rate: audio.sampleRate)
        }
        let seconds = audio.sampleRate > 0 ? Double(audio.frameCount) / Double(audio.sampleRate) : 0
        let channels = directions.enumerated().map { index, direction in
            let mine = packets.filter { $0.channel == index }
            return DecodeSummary.Channel(
                channel: index, direction: direction.code, packetsOK: mine.count(where: \.isWhole),
                packetsDamaged: mine.count(where: { !$0.isWhole }),
                samplesPerBit: Array(Set(mine.filter(\.isWhole).map(\.samplesPerBit))).sorted())
        }
        let summary = DecodeSummary(
            file: file, sampleRate: audio.sampleRate, audioSeconds: rounded(seconds, places: 6),
            packetsOK: channels.reduce(0) { $0 + $1.packetsOK }, packetsDamaged: channels.reduce(0) { $0 + $1.packetsDamaged },
            channels: channels)
        return DecodedRecording(packets: packets, directions: directions, summary: summary, seconds: seconds)
    }

    static func describe(_ p: ScannedVendorPacket, file: String, channel: Int, direction: LinkDirection, rate: Int) -> DecodedPacket {
        var d = DecodedPacket(
            file: file, timeSeconds: rounded(Double(p.endSample + 1) / Double(rate), places: 6), endSample: p.endSample,
            channel: channel, direction: direction.code, bitRate: rounded(Double(rate) / Double(p.samplesPerBit), places: 2),
            samplesPerBit: p.samplesPerBit, bytes: p.bytes.map(hex).joined(), status: DecodedPacket.ok)
        switch p.content {
        case .request(let r):
            d.kind = "request"
            d.opcode = Int(r.command)
            d.retry = r.isRetry
            d.length = r.payload.count
            d.name = direction == .deviceToHost ? readerName(r.command) : hostName(r.command)
        case .response(let r):
            d.kind = "response"
            d.responseID = Int(r.id)
            d.length = r.data.count
            d.name = r.isNack ? "NACK" : "ACK_\(r.id)"
        case .badCRC(let expecting, _, _):
            d.kind = expecting == .requests ? "request" : "response"
            d.status = DecodedPacket.badCRC
        case .malformed:
            d.status = DecodedPacket.malformed
        }
        return d
    }

    /// A host request's name: the vendor's command (`GetVersion (0x00)`), or the number.
    static func hostName(_ command: UInt8) -> String {
        VendorOpcode(rawValue: command)?.description ?? "0x" + hex(command)
    }

    /// A reader's slave-mode request's name (the reader's command set, docs/vendor-protocol.md).
    static func readerName(_ command: UInt8) -> String {
        let name: String? = switch VendorReaderOpcode(rawValue: command) {
        case .completed: "Completed"
        case .firstRead: "FirstRead"
        case .firstRead96: "FirstRead96"
        case .subsequentRead: "SubsequentRead"
        case .ping: "Ping"
        case .tagAccessResult: "TagAccessResult"
        case nil: nil
        }
        return name.map { "\($0) (0x\(hex(command)))" } ?? "0x" + hex(command)
    }

    static func hex(_ byte: UInt8) -> String { (byte < 16 ? "0" : "") + String(byte, radix: 16) }

    /// What each channel carried. A two-channel file is taken as made by `--record-audio`
    /// on the host (left: played, host → Grokker; right: captured, Grokker → host), unless
    /// its packets say the opposite: a connection always starts with the host's request (the
    /// reader sends requests only in slave mode, which a host request starts), so when the
    /// first request is on the right channel the file was made at the Grokker's end
    /// (`grokctl emulate --record-audio`: left is what the Grokker played).
    ///
    /// - Parameters:
    ///   - firstRequestChannel: The channel of the earliest whole request, if any.
    ///   - channels: How many channels the file has.
    public static func directions(firstRequestChannel: Int?, channels: Int) -> [LinkDirection] {
        guard channels == 2 else { return (0..<channels).map { .channel($0) } }
        return firstRequestChannel == 1 ? [.deviceToHost, .hostToDevice] : [.hostToDevice, .deviceToHost]
    }

    /// Seconds with three decimals, as the table and the errors show them.
    public static func seconds(_ value: Double) -> String {
        String(format: "%.3f", value)
    }

    static func rounded(_ value: Double, places: Int) -> Double {
        let scale = pow(10, Double(places))
        return (value * scale).rounded() / scale
    }
}

/// What a recording held: its packets, what each channel carried, the summary.
public struct DecodedRecording: Sendable, Equatable {
    /// Sorted by time, then channel.
    public var packets: [DecodedPacket]
    /// By channel.
    public var directions: [LinkDirection]
    public var summary: DecodeSummary
    /// The recording's length.
    public var seconds: Double

    /// Refuses a recording without a single whole packet.
    /// - Throws: ``AudioDecodeFailure`` naming the file as `name`.
    public func requireWholePackets(name: String) throws(AudioDecodeFailure) {
        guard summary.packetsOK > 0 else {
            throw AudioDecodeFailure(path: name, seconds: seconds, damagedPackets: summary.packetsDamaged)
        }
    }
}

/// Which way a channel of a recording carried the link.
public enum LinkDirection: Sendable, Equatable {
    /// What the host played (the Grokker's microphone input).
    case hostToDevice
    /// What the host captured (the Grokker's output).
    case deviceToHost
    /// A channel of a file that is not a two-channel link recording.
    case channel(Int)

    /// The stable `--json` spelling: `host_to_device`, `device_to_host`, `channel_N`.
    public var code: String {
        switch self {
        case .hostToDevice: "host_to_device"
        case .deviceToHost: "device_to_host"
        case .channel(let index): "channel_\(index)"
        }
    }
}

/// One packet found in a recording: a line of `grokctl audio decode --json`.
///
/// `file` is the recording as given (`-`: standard input). `time_s` is when the packet's
/// last stop bit ended, in seconds from the start of the file.
/// `kind` is `request` or `response` (for a damaged packet: what its crc8 was computed as, or
/// absent when the bytes are no packet of either kind); `name` the request's opcode (the
/// vendor's command name; a reader's slave-mode request is named from the reader's command
/// set) or the response's `ACK_n` / `NACK`; `length` the payload or data length. `bytes` are
/// the packet's bytes in hex, as they came off the line.
public struct DecodedPacket: Encodable, Sendable, Equatable {
    public var file: String
    public var timeSeconds: Double
    public var endSample: Int64
    public var channel: Int
    public var direction: String
    public var bitRate: Double
    public var samplesPerBit: Int
    public var kind: String?
    public var opcode: Int?
    public var responseID: Int?
    public var name: String?
    public var retry: Bool?
    public var length: Int?
    public var bytes: String
    public var status: String

    enum CodingKeys: String, CodingKey {
        case file, channel, direction, kind, opcode, name, retry, length, bytes, status
        case timeSeconds = "time_s"
        case endSample = "end_sample"
        case bitRate = "bit_rate"
        case samplesPerBit = "samples_per_bit"
        case responseID = "response_id"
    }

    /// The stable `status` values.
    public static let ok = "ok"
    public static let badCRC = "bad_crc"
    public static let malformed = "malformed"

    public var isWhole: Bool { status == Self.ok }
}

/// The closing line of `grokctl audio decode --json`: `{"summary":{...}}`.
public struct DecodeSummary: Encodable, Sendable, Equatable {
    public struct Channel: Encodable, Sendable, Equatable {
        public var channel: Int
        public var direction: String
        public var packetsOK: Int
        public var packetsDamaged: Int
        public var samplesPerBit: [Int]

        enum CodingKeys: String, CodingKey {
            case channel, direction
            case packetsOK = "packets_ok"
            case packetsDamaged = "packets_damaged"
            case samplesPerBit = "samples_per_bit"
        }
    }

    public var file: String
    public var sampleRate: Int
    public var audioSeconds: Double
    public var packetsOK: Int
    public var packetsDamaged: Int
    public var channels: [Channel]

    enum CodingKeys: String, CodingKey {
        case file, channels
        case sampleRate = "sample_rate"
        case audioSeconds = "audio_s"
        case packetsOK = "packets_ok"
        case packetsDamaged = "packets_damaged"
    }
}

/// `grokctl audio decode` found nothing it could use in a readable WAV file: the catalog's
/// `error.decode_no_frames` (the code kept from the first link: scripts match it).
public struct AudioDecodeFailure: CodedError, Sendable, Equatable {
    /// The file as given.
    public var path: String
    /// Its length in seconds.
    public var seconds: Double
    /// Packets found damaged (whole packets: none).
    public var damagedPackets: Int

    public init(path: String, seconds: Double, damagedPackets: Int) {
        self.path = path
        self.seconds = seconds
        self.damagedPackets = damagedPackets
    }

    public var code: String { "decode_no_frames" }
    public var arguments: [String] { [path, RecordingDecoder.seconds(seconds), String(damagedPackets)] }
    public var description: String { englishMessage }
}
