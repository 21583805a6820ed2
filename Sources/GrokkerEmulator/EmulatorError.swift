import GrokBasics

/// Everything that can go wrong with an emulated Grokker's own storage. Each case names
/// the file or directory and says what to do; `code` is stable for `--json` output and the
/// localized catalog (`error.<code>`).
public enum EmulatorError: Error, Sendable, CodedError, Equatable {
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

    /// The English message, from the catalog (`error.<code>` in en.json).
    public var description: String { englishMessage }
}
