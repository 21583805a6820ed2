import GrokCommandLine
import GrokFleet

/// `grokctl devices`: the ALSA sound devices a Grokker could be plugged into, and the
/// emulated Grokkers on the bench with their serial number, firmware and region (read from
/// their state, without connecting). Whether a Grokker is plugged into an ALSA jack is not
/// known without a handshake of seconds: the listing says so and names `grokctl info`.
struct DevicesCommand: Command {
    /// `--restore-levels`.
    static let restoreLevels = OptionDeclaration.flag("restore-levels", help: .optionRestoreLevels)

    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "devices", abstract: .commandDevicesAbstract, discussion: .commandDevicesDiscussion,
            options: [restoreLevels])
    }

    /// Put back the levels a grokctl that ended left raised, before listing.
    let restore: Bool

    init(_ values: ParsedValues) {
        restore = values.flag(Self.restoreLevels)
    }

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
        /// An ALSA device's jack (``SoundCards``): `plugged` (a plug with a microphone),
        /// `empty`, or `unknown` (the card reports no such jack: a handshake tells).
        let jack: String?
        /// An ALSA device's mixer (`hw:1`, `pulse`) and its levels; `nil` without one.
        let mixer: String?
        let levels: [ControlLevel]?
        /// A USB card's port name (`usb:1-1.4`, for `--device`), USB vendor:product and name.
        var usbPath: String? = nil
        var usbModel: String? = nil
        var usbName: String? = nil

        enum CodingKeys: String, CodingKey {
            case device, kind, playback, capture, description, grokker, serial, firmware, region, jack, mixer, levels
            case usbPath = "usb_path", usbModel = "usb_model", usbName = "usb_name"
            case stateDirectory = "state_directory"
        }
    }

    /// The `--json` document.
    struct Listing: Encodable {
        let bench: String
        let devices: [Entry]
        /// The mixers whose levels `--restore-levels` put back (absent without it).
        let restored: [String]?
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        // Every grokctl puts back what an ended one left raised when it starts; say what that was.
        let restored = restore
            ? context.restoredLevels + CardLevels.restoreAbandoned(directory: StateDirectory.levels(environment: context.environment))
            : nil
        let alsa = SoundCard.list(alsaConfig: context.globals.alsaConfig).map { card in
            Entry(device: card.device.description, kind: "alsa", playback: card.canPlay, capture: card.canCapture,
                  description: card.description, stateDirectory: nil, grokker: "unknown", serial: nil, firmware: nil, region: nil,
                  jack: card.jackPlugged.map { $0 ? "plugged" : "empty" } ?? "unknown", mixer: card.mixer, levels: card.levels,
                  usbPath: card.usb.map { "usb:" + $0.path }, usbModel: card.usb?.vendorProduct, usbName: card.usb?.name)
        }
        let bench = context.bench
        let emulated = try bench.emulatedDevices().map { index in
            let unit = bench.unit(index)
            let grokker = unit.unreadable != nil ? "unreadable" : (unit.serial == nil ? "not_used_yet" : "present")
            return Entry(
                device: DeviceSpec.emulated(index: index).description, kind: "emulated", playback: true,
                capture: true, description: nil, stateDirectory: unit.directory, grokker: grokker,
                serial: unit.serial, firmware: unit.firmware, region: unit.region, jack: nil, mixer: nil, levels: nil)
        }
        let console = context.console
        if console.isJSON {
            console.json(Listing(bench: bench.directory, devices: alsa + emulated, restored: restored))
            return .success
        }
        let localizer = context.localizer
        if let restored {
            if restored.isEmpty { console.say(.devicesNothingToRestore) }
            for mixer in restored { console.say(.devicesRestored, mixer) }
        }
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
        for entry in alsa where entry.mixer != nil || entry.jack != "unknown" {
            console.say(.devicesCardState, entry.device, jackText(entry, localizer), levelsText(entry, localizer))
        }
        for entry in alsa {
            guard let path = entry.usbPath, let model = entry.usbModel else { continue }
            console.say(.devicesUsbCard, entry.device, path, entry.usbName.map { model + " " + $0 } ?? model)
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

    private func jackText(_ entry: Entry, _ localizer: Localizer) -> String {
        switch entry.jack {
        case "plugged": localizer.text(.devicesJackPlugged)
        case "empty": localizer.text(.devicesJackEmpty)
        default: localizer.text(.devicesJackUnknown, entry.device)
        }
    }

    /// `Master 100 %, Capture 100 %`, each side of each control; "no mixer" without one.
    private func levelsText(_ entry: Entry, _ localizer: Localizer) -> String {
        guard let levels = entry.levels else { return localizer.text(.devicesLevelsNone) }
        var parts: [String] = []
        for level in levels {
            if let percent = level.playbackPercent {
                parts.append(localizer.text(level.playbackMuted == true ? .devicesLevelPlaybackMuted : .devicesLevelPlayback,
                                            level.control, String(percent)))
            }
            if let percent = level.capturePercent {
                parts.append(localizer.text(level.captureMuted == true ? .devicesLevelCaptureMuted : .devicesLevelCapture,
                                            level.control, String(percent)))
            }
        }
        return parts.isEmpty ? localizer.text(.devicesLevelsNone) : parts.joined(separator: ", ")
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
