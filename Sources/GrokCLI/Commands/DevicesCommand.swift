import GrokCommandLine
import GrokFleet

/// `grokctl devices`: the ALSA sound devices a Grokker could be plugged into, and the
/// emulated Grokkers on the bench with their serial number, firmware and region (read from
/// their state, without connecting). Whether a Grokker is plugged into an ALSA jack is not
/// known without a handshake of seconds: the listing says so and names `--probe`, which
/// handshakes on every card at once (GrokFleet's ``ProbeJob``).
struct DevicesCommand: Command {
    /// `--restore-levels`.
    static let restoreLevels = OptionDeclaration.flag("restore-levels", help: .optionRestoreLevels)
    /// `--probe`.
    static let probe = OptionDeclaration.flag("probe", help: .optionProbe)

    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "devices", abstract: .commandDevicesAbstract, discussion: .commandDevicesDiscussion,
            options: [probe, restoreLevels])
    }

    /// Put back the levels a grokctl that ended left raised, before listing.
    let restore: Bool
    /// Handshake on every card and emulated Grokker to learn who answers there.
    let probing: Bool

    init(_ values: ParsedValues) {
        restore = values.flag(Self.restoreLevels)
        probing = values.flag(Self.probe)
    }

    /// One port's probe; also its `--json` form (`probe` in the listing).
    struct ProbeEntry: Encodable {
        /// The port as probed (`usb:1-1.4`, `alsa:hw:0,0`, `sim:2`).
        let device: String
        /// `answered`, `busy`, `no_answer` or `error` (``ProbeJob/Answer/status``).
        let status: String
        var serial: String?
        var firmware: String?
        /// GetVersion's version while the unit runs its loader (an update not finished).
        var loader: String?
        var samplesPerBit: Int?
        var sampleRate: Int?
        var linkBitRate: Double?
        /// `stored` or `autoconfig`.
        var linkSetting: String?
        /// Why no Grokker answered, or what else went wrong (a stable code and English text).
        var error: InfoReport.Problem?
        /// The error in the terminal's language (not in JSON).
        var localizedError: String?

        enum CodingKeys: String, CodingKey {
            case device, status, serial, firmware, loader, error
            case samplesPerBit = "samples_per_bit", sampleRate = "sample_rate", linkBitRate = "link_bit_rate"
            case linkSetting = "link_setting"
        }

        init(_ finding: ProbeJob.Finding, localizer: Localizer) {
            device = finding.device.description
            status = finding.answer.status
            if let error = finding.answer.error {
                self.error = InfoReport.Problem(error)
                localizedError = localizer.message(for: error)
            }
            guard case .grokker(let identity) = finding.answer else { return }
            serial = identity.serial
            if identity.inLoader { loader = identity.firmware } else { firmware = identity.firmware }
            samplesPerBit = identity.samplesPerBit
            sampleRate = identity.sampleRate
            linkBitRate = Double(identity.sampleRate) / Double(max(1, identity.samplesPerBit))
            linkSetting = identity.settingSource.rawValue
        }
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
        /// Who answered on each card and emulated Grokker (absent without `--probe`).
        let probe: [ProbeEntry]?
        /// Levels saved by a grokctl that ended, waiting for their card to be plugged in again.
        let levelsWaiting: [WaitingLevels]

        enum CodingKeys: String, CodingKey {
            case bench, devices, restored, probe
            case levelsWaiting = "levels_waiting"
        }
    }

    /// A restore record whose card is not there now (GrokFleet's ``CardIdentity``).
    struct WaitingLevels: Encodable {
        /// The mixer the levels were saved from (`hw:1`): the card's number then, not now.
        let mixer: String
        let usbPath: String?
        let usbModel: String?
        let cardID: String?

        enum CodingKeys: String, CodingKey {
            case mixer
            case usbPath = "usb_path", usbModel = "usb_model", cardID = "card_id"
        }
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        // Every grokctl puts back what an ended one left raised when it starts; say what that was.
        let restored = restore
            ? context.restoredLevels + CardLevels.restoreAbandoned(directory: StateDirectory.levels(environment: context.environment))
            : nil
        let cards = SoundCard.list(alsaConfig: context.globals.alsaConfig)
        let alsa = cards.map { card in
            Entry(device: card.device.description, kind: "alsa", playback: card.canPlay, capture: card.canCapture,
                  description: card.description, stateDirectory: nil, grokker: "unknown", serial: nil, firmware: nil, region: nil,
                  jack: card.jackPlugged.map { $0 ? "plugged" : "empty" } ?? "unknown", mixer: card.mixer, levels: card.levels,
                  usbPath: card.usb.map { "usb:" + $0.path }, usbModel: card.usb?.vendorProduct, usbName: card.usb?.name)
        }
        let bench = context.bench
        let units = try bench.emulatedDevices()
        let emulated = units.map { index in
            let unit = bench.unit(index)
            let grokker = unit.unreadable != nil ? "unreadable" : (unit.serial == nil ? "not_used_yet" : "present")
            return Entry(
                device: DeviceSpec.emulated(index: index).description, kind: "emulated", playback: true,
                capture: true, description: nil, stateDirectory: unit.directory, grokker: grokker,
                serial: unit.serial, firmware: unit.firmware, region: unit.region, jack: nil, mixer: nil, levels: nil)
        }
        let console = context.console
        let localizer = context.localizer
        let probed = probing
            ? ProbeJob(access: context.deviceAccess).run(ProbeJob.ports(cards: cards, emulated: units))
                .map { ProbeEntry($0, localizer: localizer) }
            : nil
        let waiting = CardLevels.waiting(directory: StateDirectory.levels(environment: context.environment)).map { record in
            WaitingLevels(mixer: record.mixer, usbPath: record.card?.usbPath.map { "usb:" + $0 }, usbModel: record.card?.usbModel,
                          cardID: record.card?.cardID)
        }
        if console.isJSON {
            console.json(Listing(bench: bench.directory, devices: alsa + emulated, restored: restored, probe: probed,
                                 levelsWaiting: waiting))
            return .success
        }
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
        for entry in waiting {
            let card = entry.usbPath.map { path in [path, entry.usbModel, entry.cardID].compactMap { $0 }.joined(separator: " ") }
                ?? entry.cardID ?? entry.mixer
            console.say(.devicesLevelsWaiting, card, entry.mixer)
        }
        if alsa.isEmpty { console.say(.devicesNoALSA) }
        if emulated.isEmpty { console.say(.devicesNoBench, bench.directory) }
        if let probed { renderProbe(probed, console: console, localizer: localizer) }
        return .success
    }

    /// The probe's table (who answered where, at which setting), then why each other port did not answer.
    private func renderProbe(_ probed: [ProbeEntry], console: Console, localizer: Localizer) {
        guard !probed.isEmpty else {
            console.say(.devicesProbeNothing)
            return
        }
        console.table(
            Table(
                headers: [localizer.text(.devicesColumnDevice), localizer.text(.devicesColumnAnswer), localizer.text(.devicesColumnSetting)],
                rows: probed.map { entry in
                    switch entry.status {
                    case "answered":
                        let setting = localizer.text(entry.linkSetting == "stored" ? .devicesProbeSettingStored : .devicesProbeSettingAutoconfig,
                                                     localizer.text(.infoLinkSetting, formatNumber(entry.linkBitRate ?? 0), String(entry.samplesPerBit ?? 0)))
                        let grokker = entry.loader.map { localizer.text(.devicesProbeInLoader, entry.serial ?? "?", $0) }
                            ?? localizer.text(.devicesProbeAnswered, entry.serial ?? "?", entry.firmware ?? "?")
                        return [entry.device, grokker, setting]
                    case "busy": return [entry.device, localizer.text(.devicesProbeBusy), ""]
                    case "no_answer": return [entry.device, localizer.text(.devicesProbeNoAnswer), ""]
                    default: return [entry.device, localizer.text(.devicesProbeError), ""]
                    }
                }))
        for entry in probed where entry.status != "answered" {
            console.print(localizer.text(.infoDeviceFailed, entry.device,
                                         Localizer.dropping(subject: entry.device, from: entry.localizedError ?? "")))
        }
        let answered = probed.filter { $0.status == "answered" }.count
        console.say(.devicesProbeSummary, String(answered), String(probed.count))
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
