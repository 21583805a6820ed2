import GrokBasics
import Foundation
import GrokAudio
import GrokLink
import GrokProtocol

/// Which way a channel of a recording carried the link.
enum LinkDirection: Sendable, Equatable {
    /// What the host played (the Grokker's microphone input).
    case hostToDevice
    /// What the host captured (the Grokker's output).
    case deviceToHost
    /// A channel of a file that is not a two-channel link recording.
    case channel(Int)

    /// The stable `--json` spelling: `host_to_device`, `device_to_host`, `channel_N`.
    var code: String {
        switch self {
        case .hostToDevice: "host_to_device"
        case .deviceToHost: "device_to_host"
        case .channel(let index): "channel_\(index)"
        }
    }

    /// The direction in `localizer`'s language.
    func text(_ localizer: Localizer) -> String {
        switch self {
        case .hostToDevice: localizer.text(.decodeDirectionHostToDevice)
        case .deviceToHost: localizer.text(.decodeDirectionDeviceToHost)
        case .channel(let index): localizer.text(.decodeDirectionChannel, String(index))
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
struct DecodedPacket: Encodable, Sendable, Equatable {
    /// The recording it was found in, as given (`-`: standard input).
    var file: String?
    var timeSeconds: Double
    var endSample: Int64
    var channel: Int
    var direction: String
    var bitRate: Double
    var samplesPerBit: Int
    var kind: String?
    var opcode: Int?
    var responseID: Int?
    var name: String?
    var retry: Bool?
    var length: Int?
    var bytes: String
    var status: String

    enum CodingKeys: String, CodingKey {
        case file, channel, direction, kind, opcode, name, retry, length, bytes, status
        case timeSeconds = "time_s"
        case endSample = "end_sample"
        case bitRate = "bit_rate"
        case samplesPerBit = "samples_per_bit"
        case responseID = "response_id"
    }

    /// The stable `status` values.
    static let ok = "ok"
    static let badCRC = "bad_crc"
    static let malformed = "malformed"

    var isWhole: Bool { status == Self.ok }
}

/// The closing line of `grokctl audio decode --json`: `{"summary":{...}}`.
struct DecodeSummary: Encodable, Sendable {
    struct Channel: Encodable, Sendable {
        var channel: Int
        var direction: String
        var packetsOK: Int
        var packetsDamaged: Int
        var samplesPerBit: [Int]

        enum CodingKeys: String, CodingKey {
            case channel, direction
            case packetsOK = "packets_ok"
            case packetsDamaged = "packets_damaged"
            case samplesPerBit = "samples_per_bit"
        }
    }

    var file: String
    var sampleRate: Int
    var audioSeconds: Double
    var packetsOK: Int
    var packetsDamaged: Int
    var channels: [Channel]

    enum CodingKeys: String, CodingKey {
        case file, channels
        case sampleRate = "sample_rate"
        case audioSeconds = "audio_s"
        case packetsOK = "packets_ok"
        case packetsDamaged = "packets_damaged"
    }
}

/// `grokctl audio decode` found nothing it could use in a readable WAV file.
///
/// Reaches the user through ``Localizer/message(for:)`` as `error.decode_no_frames` (the
/// code kept from the first link: scripts match it).
struct AudioDecodeFailure: CodedError, Sendable, Equatable {
    /// The file as given.
    var path: String
    /// Its length in seconds.
    var seconds: Double
    /// Packets found damaged (whole packets: none).
    var damagedPackets: Int

    var code: String { "decode_no_frames" }
    var arguments: [String] { [path, AudioDecoding.seconds(seconds), String(damagedPackets)] }
    var description: String { Localizer.english.message(for: self) }
}

/// The offline packet finder behind `grokctl audio decode`, apart from printing.
enum AudioDecoding {
    /// The most bytes read from standard input: the largest data chunk a WAV file may hold
    /// (``WAVFile/maximumDataBytes``) and 64 KiB of headers and other chunks.
    static let standardInputLimit = WAVFile.maximumDataBytes + 64 * 1024

    /// The recording in `input`: a file is read in place (its chunks at their offsets); standard
    /// input is checked by its RIFF header, then read whole, at most ``standardInputLimit``
    /// bytes, and decoded, its errors naming it as standard input in `localizer`'s language.
    static func read(_ input: InputFile, _ localizer: Localizer) throws -> WAVAudio {
        switch input {
        case .path(let path):
            return try WAVFile.read(path: path)
        case .standardInput:
            // What is no WAV is refused by its first bytes, before the rest is read.
            let start = try input.readStart(WAVFile.startBytes, localizer: localizer)
            try WAVFile.checkStart(start, name: input.name(localizer))
            let bytes = try input.readAll(limit: standardInputLimit, localizer: localizer, after: start)
            return try WAVFile.decode(bytes, name: input.name(localizer))
        }
    }

    /// Every vendor-protocol packet in `audio`, found by one ``VendorPacketScanner`` per
    /// channel (every samples-per-bit setting at the file's rate; none at a rate the modem
    /// does not run), sorted by time then channel, and what each channel carried (see
    /// ``directions(firstRequestChannel:channels:)``).
    static func decode(_ audio: WAVAudio) -> (packets: [DecodedPacket], directions: [LinkDirection]) {
        var found: [(channel: Int, packet: ScannedVendorPacket)] = []
        for (index, samples) in audio.channels.enumerated() {
            var scanner = VendorPacketScanner(sampleRate: audio.sampleRate)
            samples.withUnsafeBufferPointer { all in
                var i = 0
                while i < all.count {
                    let n = min(65_536, all.count - i)
                    scanner.scan(UnsafeBufferPointer(rebasing: all[i..<(i + n)]))
                    i += n
                }
            }
            found += scanner.packets.map { (index, $0) }
        }
        found.sort { ($0.packet.endSample, $0.channel) < ($1.packet.endSample, $1.channel) }
        let firstRequest = found.first { if case .request = $0.packet.content { true } else { false } }?.channel
        let directions = self.directions(firstRequestChannel: firstRequest, channels: audio.channels.count)
        let packets = found.map { describe($0.packet, channel: $0.channel, direction: directions[$0.channel], rate: audio.sampleRate) }
        return (packets, directions)
    }

    static func describe(_ p: ScannedVendorPacket, channel: Int, direction: LinkDirection, rate: Int) -> DecodedPacket {
        var d = DecodedPacket(
            timeSeconds: rounded(Double(p.endSample + 1) / Double(rate), places: 6), endSample: p.endSample,
            channel: channel, direction: direction.code, bitRate: rounded(Double(rate) / Double(p.samplesPerBit), places: 2),
            samplesPerBit: p.samplesPerBit, bytes: p.bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined(),
            status: DecodedPacket.ok)
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
    static func directions(firstRequestChannel: Int?, channels: Int) -> [LinkDirection] {
        guard channels == 2 else { return (0..<channels).map { .channel($0) } }
        return firstRequestChannel == 1 ? [.deviceToHost, .hostToDevice] : [.hostToDevice, .deviceToHost]
    }

    /// Seconds with three decimals, as the table shows them.
    static func seconds(_ value: Double) -> String {
        String(format: "%.3f", value)
    }

    static func rounded(_ value: Double, places: Int) -> Double {
        let scale = pow(10, Double(places))
        return (value * scale).rounded() / scale
    }
}

/// `grokctl audio decode FILE.wav...`: the vendor-protocol packets in each recording, per
/// channel and setting, one file after the other (with more than one, each file's table
/// under its name; under `--json`, each file's packets then its summary). Exit 0 when every
/// file had at least one packet decoded whole; the first file that cannot be read or has
/// none ends the command (exit 1), naming it.
func runAudioDecode(_ command: AudioDecodeCommand, _ context: CommandContext) throws -> ExitCode {
    for (index, file) in command.files.enumerated() {
        if command.files.count > 1, !context.console.isJSON {
            if index > 0 { context.console.print("") }
            context.console.say(.decodeFileHeading, file.name(context.localizer))
        }
        try decodeRecording(file, context)
    }
    return .success
}

/// Decodes and prints one recording; throws when it has no whole packet.
private func decodeRecording(_ file: InputFile, _ context: CommandContext) throws {
    let audio = try AudioDecoding.read(file, context.localizer)
    var (packets, directions) = AudioDecoding.decode(audio)
    for index in packets.indices { packets[index].file = file.argument }
    let seconds = audio.sampleRate > 0 ? Double(audio.frameCount) / Double(audio.sampleRate) : 0
    let channels = directions.enumerated().map { index, direction in
        let mine = packets.filter { $0.channel == index }
        return DecodeSummary.Channel(
            channel: index, direction: direction.code, packetsOK: mine.count(where: \.isWhole),
            packetsDamaged: mine.count(where: { !$0.isWhole }),
            samplesPerBit: Array(Set(mine.filter(\.isWhole).map(\.samplesPerBit))).sorted())
    }
    let summary = DecodeSummary(
        file: file.argument, sampleRate: audio.sampleRate, audioSeconds: AudioDecoding.rounded(seconds, places: 6),
        packetsOK: channels.reduce(0) { $0 + $1.packetsOK }, packetsDamaged: channels.reduce(0) { $0 + $1.packetsDamaged },
        channels: channels)

    let console = context.console
    let localizer = context.localizer
    if console.isJSON {
        for packet in packets { console.json(packet) }
        console.json(["summary": summary])
    } else if !packets.isEmpty {
        console.table(Table(
            headers: [.decodeColumnTime, .decodeColumnDirection, .decodeColumnBitRate, .decodeColumnSetting,
                      .decodeColumnPacket, .decodeColumnStatus].map { localizer.text($0) },
            rows: packets.map { packet in
                let description = packet.isWhole
                    ? localizer.text(.decodePacket, packet.name ?? "?", String(packet.length ?? 0))
                    : localizer.text(.decodePacketDamaged, String(packet.bytes.count / 2))
                let status: MessageKey = switch packet.status {
                case DecodedPacket.ok: .decodeStatusOK
                case DecodedPacket.badCRC: .decodeStatusBadCRC
                default: .decodeStatusMalformed
                }
                return [
                    localizer.localizedNumber(AudioDecoding.seconds(packet.timeSeconds)), directions[packet.channel].text(localizer),
                    localizer.text(.infoBitRate, formatBitRate(packet.bitRate)), String(packet.samplesPerBit), description,
                    localizer.text(status),
                ]
            },
            alignments: [.right, .left, .right, .right, .left, .left]))
    }
    if !console.isJSON {
        for channel in channels {
            console.say(.decodeSummaryChannel, directions[channel.channel].text(localizer), String(channel.packetsOK),
                        String(channel.packetsDamaged))
        }
        console.say(.decodeSummaryAudio, AudioDecoding.seconds(seconds), String(audio.sampleRate))
    }
    guard summary.packetsOK > 0 else {
        throw AudioDecodeFailure(path: file.name(localizer), seconds: seconds, damagedPackets: summary.packetsDamaged)
    }
}

private func formatBitRate(_ value: Double) -> String {
    value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
}
