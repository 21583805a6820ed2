/// Everything that can go wrong with an emulated Grokker's own storage. Each case names
/// the file or directory and says what to do; `code` is stable for `--json` output and the
/// localized catalog (`error.<code>`).
public enum EmulatorError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The device directory could not be created or used.
    case directory(path: String, detail: String)
    /// The state file exists but could not be read (permissions, I/O error).
    case stateUnreadable(path: String, detail: String)
    /// The state file was read but is not a valid state (bad JSON, missing field, out of range).
    case stateCorrupt(path: String, detail: String)
    /// The state file was written by a newer grokctl, in a format this build does not know.
    case stateTooNew(path: String, format: Int, supported: Int)
    /// The state could not be saved.
    case stateWriteFailed(path: String, detail: String)
    /// The unit's `scene.json` (its own RF field) is unusable; `detail` is the scene
    /// reader's message, naming the key and what it expected.
    case scene(path: String, detail: String)
    /// The unit's flash file (`flash.bin`) could not be created, read or written, or has
    /// the wrong size for this hardware.
    case flash(path: String, detail: String)

    /// A stable identifier for machines and for the message catalog.
    public var code: String {
        switch self {
        case .directory: "emulator_directory"
        case .stateUnreadable: "emulator_state_unreadable"
        case .stateCorrupt: "emulator_state_corrupt"
        case .stateTooNew: "emulator_state_too_new"
        case .stateWriteFailed: "emulator_state_write_failed"
        case .scene: "emulator_scene"
        case .flash: "emulator_flash"
        }
    }

    /// The values a localized message fills in, in order.
    public var arguments: [String] {
        switch self {
        case .directory(let path, let detail): [path, detail]
        case .stateUnreadable(let path, let detail): [path, detail]
        case .stateCorrupt(let path, let detail): [path, detail]
        case .stateTooNew(let path, let format, let supported): [path, String(format), String(supported)]
        case .stateWriteFailed(let path, let detail): [path, detail]
        case .scene(let path, let detail): [path, detail]
        case .flash(let path, let detail): [path, detail]
        }
    }

    public var description: String {
        switch self {
        case .directory(let path, let detail):
            "cannot use the emulated Grokker's directory '\(path)': \(detail); check that it is a writable directory."
        case .stateUnreadable(let path, let detail):
            "cannot read the emulated Grokker's state file '\(path)': \(detail); check its permissions and retry."
        case .stateCorrupt(let path, let detail):
            "the emulated Grokker's state file '\(path)' is corrupt (\(detail)); repair it, or delete it to start this Grokker over as a new unit (it gets a new serial number)."
        case .stateTooNew(let path, let format, let supported):
            "the emulated Grokker's state file '\(path)' has format \(format) but this grokctl reads up to format \(supported); use a newer grokctl."
        case .stateWriteFailed(let path, let detail):
            "cannot save the emulated Grokker's state to '\(path)': \(detail); free disk space or fix permissions and retry."
        case .scene(let path, let detail):
            "the emulated Grokker's scene '\(path)' is unusable: \(detail); fix it (docs/scene.md) or remove it to use the standard bench."
        case .flash(let path, let detail):
            "the emulated Grokker's flash '\(path)' is unusable: \(detail); free disk space or fix permissions, or delete the file to give this Grokker its factory firmware again."
        }
    }
}
