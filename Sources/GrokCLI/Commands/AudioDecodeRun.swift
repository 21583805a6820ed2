import Foundation
import GrokAudio
import GrokLink

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

/// One frame found in a recording: a line of `grokctl audio decode --json`.
///
/// `time_s` is when the frame's last bit ended, in seconds from the start of the file.
/// For a frame whose CRC-32C failed only the header's type and sequence number are known;
/// `ack`, `flags` and `length` are then absent.
struct DecodedFrame: Encodable, Sendable, Equatable {
    var timeSeconds: Double
    var endSample: Int64
    var channel: Int
    var direction: String
    var bitRate: Double
    var samplesPerBit: Double
    var type: String
    var seq: Int
    var ack: Int?
    var flags: Int?
    var length: Int?
    var status: String
    var quality: Double

    enum CodingKeys: String, CodingKey {
        case channel, direction, type, seq, ack, flags, length, status, quality
        case timeSeconds = "time_s"
        case endSample = "end_sample"
        case bitRate = "bit_rate"
        case samplesPerBit = "samples_per_bit"
    }
}

/// The closing line of `grokctl audio decode --json`: `{"summary":{...}}`.
struct DecodeSummary: Encodable, Sendable {
    struct Channel: Encodable, Sendable {
        var channel: Int
        var direction: String
        var framesOK: Int
        var framesBadCRC: Int

        enum CodingKeys: String, CodingKey {
            case channel, direction
            case framesOK = "frames_ok"
            case framesBadCRC = "frames_bad_crc"
        }
    }

    var file: String
    var sampleRate: Int
    var audioSeconds: Double
    var framesOK: Int
    var framesBadCRC: Int
    var channels: [Channel]

    enum CodingKeys: String, CodingKey {
        case file, channels
        case sampleRate = "sample_rate"
        case audioSeconds = "audio_s"
        case framesOK = "frames_ok"
        case framesBadCRC = "frames_bad_crc"
    }
}

/// `grokctl audio decode` found nothing it could use in a readable WAV file.
///
/// Reaches the user through ``Localizer/message(for:)`` as `error.decode_no_frames`.
struct AudioDecodeFailure: CodedError, Sendable, Equatable {
    /// The file as given.
    var path: String
    /// Its length in seconds.
    var seconds: Double
    /// Frames found whose CRC-32C failed (whole frames that checked: none).
    var damagedFrames: Int

    var code: String { "decode_no_frames" }
    var arguments: [String] { [path, AudioDecoding.seconds(seconds), String(damagedFrames)] }
    var description: String { Localizer.english.message(for: self) }
}

/// The offline frame finder behind `grokctl audio decode`, apart from printing.
enum AudioDecoding {
    /// Every frame in `audio`, found by one ``FrameScanner`` per channel and per mode of
    /// ``LinkMode/ladder`` that fits its sample rate (see ``FrameScanner/minimumSamplesPerBit``; a
    /// frame decodes only in its own mode), sorted by time then
    /// channel, and what each channel carried (see ``directions(hostOnly:deviceOnly:channels:)``).
    /// Sync words followed by a header that did not check are left out: scanning in the
    /// wrong mode turns ordinary link audio into many of those.
    static func decode(_ audio: WAVAudio) -> (frames: [DecodedFrame], directions: [LinkDirection]) {
        var frames: [DecodedFrame] = []
        var hostOnly = [Int](repeating: 0, count: audio.channels.count)
        var deviceOnly = hostOnly
        for (index, samples) in audio.channels.enumerated() {
            for mode in LinkMode.ladder {
                guard let scanner = FrameScanner(mode: mode, sampleRate: audio.sampleRate) else { continue }
                scanner.scan(samples)
                for found in scanner.found where found.status != .badHeader {
                    guard let frame = found.frame else { continue }
                    let whole = found.status == .ok
                    if whole {
                        switch frame.type {
                        case .hello, .probe: hostOnly[index] += 1
                        case .helloAck, .probeReport: deviceOnly[index] += 1
                        default: break
                        }
                    }
                    frames.append(DecodedFrame(
                        timeSeconds: rounded(Double(found.endSample) / Double(audio.sampleRate), places: 6),
                        endSample: found.endSample, channel: index, direction: "",
                        bitRate: mode.bitRate, samplesPerBit: mode.samplesPerBit,
                        type: frame.type.description, seq: Int(frame.seq),
                        ack: whole ? Int(frame.ack) : nil, flags: whole ? Int(frame.flags) : nil,
                        length: whole ? frame.payload.count : nil,
                        status: found.status.rawValue, quality: rounded(found.quality, places: 4)))
                }
            }
        }
        let directions = self.directions(hostOnly: hostOnly, deviceOnly: deviceOnly, channels: audio.channels.count)
        for i in frames.indices { frames[i].direction = directions[frames[i].channel].code }
        frames.sort { ($0.endSample, $0.channel, $0.samplesPerBit) < ($1.endSample, $1.channel, $1.samplesPerBit) }
        return (frames, directions)
    }

    /// What each channel carried. A two-channel file is taken as made by `--record-audio`
    /// on the host (left: played, host → Grokker; right: captured, Grokker → host), unless
    /// its frames say the opposite: HELLO and PROBE frames only ever go host → Grokker,
    /// HELLO-ACK and PROBE-REPORT only Grokker → host, so a recording made by
    /// `grokctl emulate --record-audio` (left: what the Grokker played) is labelled right.
    ///
    /// - Parameters:
    ///   - hostOnly: Per channel, whole frames of the kinds only a host sends.
    ///   - deviceOnly: Per channel, whole frames of the kinds only a Grokker sends.
    ///   - channels: How many channels the file has.
    static func directions(hostOnly: [Int], deviceOnly: [Int], channels: Int) -> [LinkDirection] {
        guard channels == 2 else { return (0..<channels).map { .channel($0) } }
        let swapped = hostOnly[1] > 0 && deviceOnly[0] > 0 && hostOnly[0] == 0 && deviceOnly[1] == 0
        return swapped ? [.deviceToHost, .hostToDevice] : [.hostToDevice, .deviceToHost]
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

/// `grokctl audio decode FILE.wav`: the link frames in a recording, per channel and mode.
/// Exit 0 when at least one frame checked whole, 1 otherwise.
func runAudioDecode(_ command: AudioDecodeCommand, _ context: CommandContext) throws -> ExitCode {
    let audio = try WAVFile.read(path: command.file)
    let (frames, directions) = AudioDecoding.decode(audio)
    let seconds = audio.sampleRate > 0 ? Double(audio.frameCount) / Double(audio.sampleRate) : 0
    let channels = directions.enumerated().map { index, direction in
        DecodeSummary.Channel(
            channel: index, direction: direction.code,
            framesOK: frames.count(where: { $0.channel == index && $0.status == ScannedFrame.Status.ok.rawValue }),
            framesBadCRC: frames.count(where: { $0.channel == index && $0.status == ScannedFrame.Status.badCRC.rawValue }))
    }
    let summary = DecodeSummary(
        file: command.file, sampleRate: audio.sampleRate, audioSeconds: AudioDecoding.rounded(seconds, places: 6),
        framesOK: channels.reduce(0) { $0 + $1.framesOK }, framesBadCRC: channels.reduce(0) { $0 + $1.framesBadCRC },
        channels: channels)

    let console = context.console
    let localizer = context.localizer
    if console.isJSON {
        for frame in frames { console.json(frame) }
        console.json(["summary": summary])
    } else if !frames.isEmpty {
        console.table(Table(
            headers: [.decodeColumnTime, .decodeColumnDirection, .decodeColumnBitRate, .decodeColumnFrame,
                      .decodeColumnStatus, .decodeColumnQuality].map { localizer.text($0) },
            rows: frames.map { frame in
                let whole = frame.status == ScannedFrame.Status.ok.rawValue
                let description = whole
                    ? localizer.text(.decodeFrame, frame.type, String(frame.seq), String(frame.ack ?? 0),
                                     String(frame.length ?? 0))
                    : localizer.text(.decodeFrameDamaged, frame.type, String(frame.seq))
                return [
                    AudioDecoding.seconds(frame.timeSeconds), directions[frame.channel].text(localizer),
                    localizer.text(.infoBitRate, formatBitRate(frame.bitRate)), description,
                    localizer.text(whole ? .decodeStatusOK : .decodeStatusBadCRC),
                    String(format: "%.2f", frame.quality),
                ]
            },
            alignments: [.right, .left, .right, .left, .left, .right]))
    }
    if !console.isJSON {
        for channel in channels {
            console.say(.decodeSummaryChannel, directions[channel.channel].text(localizer), String(channel.framesOK),
                        String(channel.framesBadCRC))
        }
        console.say(.decodeSummaryAudio, AudioDecoding.seconds(seconds), String(audio.sampleRate))
    }
    guard summary.framesOK > 0 else {
        throw AudioDecodeFailure(path: command.file, seconds: seconds, damagedFrames: summary.framesBadCRC)
    }
    return .success
}

private func formatBitRate(_ value: Double) -> String {
    value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
}
