import GrokCommandLine
import GrokFleet

/// `grokctl devices`: the ALSA sound devices a Grokker could be plugged into, and the
/// emulated Grokkers on the bench with their serial number, firmware and region (read from
/// their state, without connecting). Whether a Grokker is plugged into an ALSA jack is not
/// known without a handshake of seconds: the listing says so and names `grokctl info`.
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
        /// Whether a Grokker is there: `present` (an emulated unit, its facts below),
        /// `not_used_yet` (an emulated unit whose serial is drawn when first used),
        /// `unreadable` (its state cannot be read), `unknown` (an ALSA jack: only a
        /// handshake, `grokctl info`, can tell).
        let grokker: String
        /// The unit's serial number, firmware and region name, when known.
        let serial: String?
        let firmware: String?
        let region: String?

        enum CodingKeys: String, CodingKey {
            case device, kind, playback, capture, description, grokker, serial, firmware, region
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
                  description: card.description, stateDirectory: nil, grokker: "unknown", serial: nil, firmware: nil, region: nil)
        }
        let bench = context.bench
        let emulated = try bench.emulatedDevices().map { index in
            let unit = bench.unit(index)
            let grokker = unit.unreadable != nil ? "unreadable" : (unit.serial == nil ? "not_used_yet" : "present")
            return Entry(
                device: DeviceSpec.emulated(index: index).description, kind: "emulated", playback: true,
                capture: true, description: nil, stateDirectory: bench.stateDirectory(for: index), grokker: grokker,
                serial: unit.serial, firmware: unit.firmware, region: unit.region)
        }
        let console = context.console
        if console.isJSON {
            console.json(Listing(bench: bench.directory, devices: alsa + emulated))
            return .success
        }
        let localizer = context.localizer
        let rows = (alsa + emulated).map { entry in
            [entry.device, kindText(entry, localizer), grokkerText(entry, localizer), entry.description
                ?? localizer.text(.devicesEmulatedDescription, entry.stateDirectory ?? "")]
        }
        if !rows.isEmpty {
            console.table(
                Table(
                    headers: [
                        localizer.text(.devicesColumnDevice), localizer.text(.devicesColumnKind),
                        localizer.text(.devicesColumnGrokker), localizer.text(.devicesColumnDescription),
                    ], rows: rows))
        }
        if alsa.isEmpty { console.say(.devicesNoALSA) }
        if emulated.isEmpty { console.say(.devicesNoBench, bench.directory) }
        return .success
    }

    /// What is known of the Grokker at `entry`, in words.
    private func grokkerText(_ entry: Entry, _ localizer: Localizer) -> String {
        switch entry.grokker {
        case "present":
            return localizer.text(.devicesGrokker, entry.serial ?? "?", entry.firmware ?? "?",
                                  localizer.regionDisplay(entry.region))
        case "not_used_yet": return localizer.text(.devicesGrokkerNotUsedYet)
        case "unreadable": return localizer.text(.devicesGrokkerUnreadable)
        default: return localizer.text(.devicesGrokkerUnknown, entry.device)
        }
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
