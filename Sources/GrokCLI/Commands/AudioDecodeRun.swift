import Foundation
import GrokCommandLine
import GrokFleet

extension LinkDirection {
    /// The direction in `localizer`'s language.
    func text(_ localizer: Localizer) -> String {
        switch self {
        case .hostToDevice: localizer.text(.decodeDirectionHostToDevice)
        case .deviceToHost: localizer.text(.decodeDirectionDeviceToHost)
        case .channel(let index): localizer.text(.decodeDirectionChannel, String(index))
        }
    }
}

/// The recording in `input`, decoded (GrokFleet's ``RecordingDecoder``, which streams it):
/// a file by its path, standard input from where it stands, its errors naming it as standard
/// input in `localizer`'s language.
func readRecording(_ input: InputFile, _ localizer: Localizer) throws -> DecodedRecording {
    switch input {
    case .path(let path):
        return try RecordingDecoder.decode(path: path, file: input.argument)
    case .standardInput:
        return try RecordingDecoder.decode(fileDescriptor: STDIN_FILENO, name: input.name(localizer), file: input.argument)
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
    let recording = try readRecording(file, context.localizer)
    let (packets, directions, summary) = (recording.packets, recording.directions, recording.summary)

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
                    localizer.localizedNumber(RecordingDecoder.seconds(packet.timeSeconds)), directions[packet.channel].text(localizer),
                    localizer.text(.infoBitRate, formatBitRate(packet.bitRate)), String(packet.samplesPerBit), description,
                    localizer.text(status),
                ]
            },
            alignments: [.right, .left, .right, .right, .left, .left]))
    }
    if !console.isJSON {
        for channel in summary.channels {
            console.say(.decodeSummaryChannel, directions[channel.channel].text(localizer), String(channel.packetsOK),
                        String(channel.packetsDamaged))
        }
        console.say(.decodeSummaryAudio, RecordingDecoder.seconds(recording.seconds), String(summary.sampleRate))
    }
    try recording.requireWholePackets(name: file.name(localizer))
}

private func formatBitRate(_ value: Double) -> String {
    value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
}
