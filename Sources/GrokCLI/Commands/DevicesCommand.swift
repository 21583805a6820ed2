import GrokCommandLine
import GrokFleet

/// `grokctl devices`: the ALSA sound devices a Grokker could be plugged into, and the
/// emulated Grokkers on the bench.
struct DevicesCommand: Command {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "devices", abstract: .commandDevicesAbstract, discussion: .commandDevicesDiscussion)
    }

    init(_ values: ParsedValues) {}

    /// One row of the listing; also its `--json` form.
    struct Entry: Encodable, Equatable {
        /// The spec to pass to `--device`: `alsa:hw:1,0`, `sim:3`.
        let device: String
        /// `alsa` or `emulated`.
        let kind: String
        let playback: Bool
        let capture: Bool
        /// ALSA's description (ALSA devices only, not localized: it comes from the system).
        let description: String?
        /// Where the emulated Grokker keeps its state (emulated only).
        let stateDirectory: String?

        enum CodingKeys: String, CodingKey {
            case device, kind, playback, capture, description
            case stateDirectory = "state_directory"
        }
    }

    /// The `--json` document.
    struct Listing: Encodable {
        let bench: String
        let devices: [Entry]
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        let alsa = SoundCard.list(alsaConfig: context.globals.alsaConfig).map { card in
            Entry(device: card.device.description, kind: "alsa", playback: card.canPlay, capture: card.canCapture,
                  description: card.description, stateDirectory: nil)
        }
        let bench = context.bench
        let emulated = try bench.emulatedDevices().map { index in
            Entry(
                device: DeviceSpec.emulated(index: index).description, kind: "emulated", playback: true,
                capture: true, description: nil, stateDirectory: bench.stateDirectory(for: index))
        }
        let console = context.console
        if console.isJSON {
            console.json(Listing(bench: bench.directory, devices: alsa + emulated))
            return .success
        }
        let localizer = context.localizer
        let rows = (alsa + emulated).map { entry in
            [entry.device, kindText(entry, localizer), entry.description
                ?? localizer.text(.devicesEmulatedDescription, entry.stateDirectory ?? "")]
        }
        if !rows.isEmpty {
            console.table(
                Table(
                    headers: [
                        localizer.text(.devicesColumnDevice), localizer.text(.devicesColumnKind),
                        localizer.text(.devicesColumnDescription),
                    ], rows: rows))
        }
        if alsa.isEmpty { console.say(.devicesNoALSA) }
        if emulated.isEmpty { console.say(.devicesNoBench, bench.directory) }
        return .success
    }

    private func kindText(_ entry: Entry, _ localizer: Localizer) -> String {
        if entry.kind == "emulated" { return localizer.text(.devicesKindEmulated) }
        switch (entry.playback, entry.capture) {
        case (true, false): return localizer.text(.devicesKindPlayback)
        case (false, true): return localizer.text(.devicesKindCapture)
        default: return localizer.text(.devicesKindDuplex)
        }
    }
}
