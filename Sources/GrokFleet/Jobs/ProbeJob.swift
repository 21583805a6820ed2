import GrokAudio
import UGrokIt

/// `grokctl devices --probe` (issue 22, item 6): a short handshake on every card at once,
/// one thread per port, to learn who answers there. Each port is opened as every device
/// command opens it (``DeviceAccess``: under its lock, the card's levels raised for the
/// session and put back after, ``CardLevels``) and connected through the same ``LinkSetup``
/// (a known Grokker's stored setting first), so a probe costs what `grokctl info` costs: a
/// handshake and GetVersion for a known Grokker, AutoConfig's echoes for one met first. A
/// port where nothing answers is given up after one handshake timeout per setting of the
/// ladder (five, 3 s of audio each by default). A port another grokctl holds is not waited
/// for: it is reported busy, and nothing is sent to it.
public struct ProbeJob: Sendable {
    public var access: DeviceAccess

    /// `access`'s lock wait is not used: a held port is reported at once.
    public init(access: DeviceAccess) {
        self.access = access
    }

    /// What a probe found on one port.
    public enum Answer: Sendable {
        /// A Grokker answered: who it is and the setting it was reached at.
        case grokker(Identity)
        /// Another process holds the port: its lock (`pid` and command, when known) or, for a
        /// sound card another program has open, the card itself. Nothing was sent.
        case busy(any Error)
        /// No Grokker answered. The error says why where the port can tell: nothing plugged
        /// into the jack (`reader_not_plugged_in`), a level too low for the tones to pass
        /// (`reader_playback_level_low`, ...), or only that no handshake came back
        /// (`reader_cannot_handshake`).
        case silent(any Error)
        /// The port could not be used for another reason (it cannot be opened, a Grokker that
        /// answered but speaks another protocol, the settings file cannot be written).
        case failed(any Error)

        /// The `--json` status: `answered`, `busy`, `no_answer` or `error`.
        public var status: String {
            switch self {
            case .grokker: "answered"
            case .busy: "busy"
            case .silent: "no_answer"
            case .failed: "error"
            }
        }

        /// The error behind a port that did not answer; `nil` when a Grokker did.
        public var error: (any Error)? {
            switch self {
            case .grokker: nil
            case .busy(let error), .silent(let error), .failed(let error): error
            }
        }
    }

    /// Who answered on a port.
    public struct Identity: Sendable, Hashable {
        /// The 8-digit serial number.
        public var serial: String
        /// GetVersion's version: the application's, or the loader's when ``inLoader``.
        public var firmware: String
        /// The unit runs its loader (an update stopped mid-way).
        public var inLoader: Bool
        public var samplesPerBit: Int
        public var sampleRate: Int
        /// Where the setting came from: stored, or AutoConfig now.
        public var settingSource: LinkSetup.Source
    }

    /// One port's finding.
    public struct Finding: Sendable {
        /// The port as probed (`usb:1-1.4`, `alsa:hw:0,0`, `sim:2`).
        public var device: DeviceSpec
        public var answer: Answer
    }

    /// The ports `devices --probe` probes, in `devices`' order: each duplex sound card once,
    /// by its `usb:` name where it is on USB (the other names ALSA gives the same card,
    /// `plughw:`, `sysdefault:`, lead to the same jack), by its `hw:` name otherwise; then the
    /// emulated Grokkers of the bench. Names that lead to no one card (`default`, `pulse`)
    /// are not probed: `grokctl info --device alsa:pulse` asks there.
    public static func ports(cards: [SoundCard], emulated: [Int]) -> [DeviceSpec] {
        var specs: [DeviceSpec] = []
        for card in cards where card.canPlay && card.canCapture {
            let spec: DeviceSpec
            if let usb = card.usb {
                spec = .usb(path: usb.path)
            } else if case .alsa(let name) = card.device, name.hasPrefix("hw:") {
                spec = card.device
            } else {
                continue
            }
            if !specs.contains(spec) { specs.append(spec) }
        }
        return specs + emulated.map { .emulated(index: $0) }
    }

    /// Probes every port at once; the findings in the order given.
    public func run(_ devices: [DeviceSpec]) -> [Finding] {
        FleetRunner.each(devices) { probe($0) }
    }

    /// Probes one port on the calling thread.
    public func probe(_ spec: DeviceSpec) -> Finding {
        let session: ReaderSession
        do {
            session = try ReaderSession(port: try DevicePorts.open(spec, context: access.ports, wait: 0),
                                        options: access.readerOptions)
        } catch {
            return Finding(device: spec, answer: Self.isBusy(error) ? .busy(error) : .failed(error))
        }
        defer { session.close() }
        do {
            let setup = try access.connect(session, spec)
            let info = setup.info
            let identity = Identity(serial: info.serialNumberText, firmware: info.firmwareVersion.description,
                                    inLoader: session.version?.software == .loader, samplesPerBit: setup.samplesPerBit,
                                    sampleRate: setup.sampleRate, settingSource: setup.source)
            return Finding(device: spec, answer: .grokker(identity))
        } catch let error as ReaderError {
            switch error {
            case .notPluggedIn, .cannotHandshake, .levelTooLow: return Finding(device: spec, answer: .silent(error))
            case .audio(let audio) where audio.code == "audio_device_busy": return Finding(device: spec, answer: .busy(error))
            default: return Finding(device: spec, answer: .failed(error))
            }
        } catch {
            return Finding(device: spec, answer: .failed(error))
        }
    }

    /// Whether opening failed because someone else has the port: another grokctl's lock, or
    /// a sound card another program holds open.
    static func isBusy(_ error: any Error) -> Bool {
        if case FleetError.deviceBusy = error { return true }
        if let audio = error as? AudioError, audio.code == "audio_device_busy" { return true }
        return false
    }
}
