import Foundation
import GrokBasics

/// Everything that can go wrong with an emulated Grokker's own storage. Each case names
/// the file or directory and says what to do; `code` is stable for `--json` output and the
/// localized catalog (`error.<code>`).
public enum EmulatorError: Error, Sendable, CodedError, Equatable {
    /// The device directory could not be created or used. Every `detail` of this type is a
    /// code under `emulator.detail` in the catalog, never an English sentence.
    case directory(path: String, detail: ErrorDetail)
    /// The state file exists but could not be read (permissions, I/O error).
    case stateUnreadable(path: String, detail: ErrorDetail)
    /// The state file was read but is not a valid state (bad JSON, missing field, out of range).
    case stateCorrupt(path: String, detail: ErrorDetail)
    /// The state file was written by a newer grokctl, in a format this build does not know.
    case stateTooNew(path: String, format: Int, supported: Int)
    /// The state could not be saved.
    case stateWriteFailed(path: String, detail: ErrorDetail)
    /// The unit's `scene.json` (its own RF field) is unusable; `detail` is the scene
    /// reader's message, naming the key and what it expected.
    case scene(path: String, detail: String)
    /// The unit's flash file (`flash.bin`) could not be created, read or written, or has
    /// the wrong size for this hardware.
    case flash(path: String, detail: ErrorDetail)

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
        case .directory(let path, let detail): [path] + detail.flattened
        case .stateUnreadable(let path, let detail): [path] + detail.flattened
        case .stateCorrupt(let path, let detail): [path] + detail.flattened
        case .stateTooNew(let path, let format, let supported): [path, String(format), String(supported)]
        case .stateWriteFailed(let path, let detail): [path] + detail.flattened
        case .scene(let path, let detail): [path, detail]
        case .flash(let path, let detail): [path] + detail.flattened
        }
    }

    /// The English message, from the catalog (`error.<code>` in en.json).
    public var description: String { englishMessage }

    /// A failed file operation (`operation`: `open`, `read`, `write`, `fsync`, `mkdir`...)
    /// as a detail: `<operation>_failed` with the errno's name when Foundation's error
    /// carries one (its own or its underlying POSIX error), else with its domain and number;
    /// never Foundation's English.
    static func systemDetail(_ operation: String, _ error: any Error) -> ErrorDetail {
        let ns = error as NSError
        let underlying = (ns.userInfo[NSUnderlyingErrorKey] as? any Error).map { $0 as NSError }
        for candidate in [underlying, ns].compactMap({ $0 }) where candidate.domain == NSPOSIXErrorDomain {
            return ErrorDetail("\(operation)_failed", [systemErrorName(Int32(candidate.code))])
        }
        return ErrorDetail("\(operation)_failed", ["\(ns.domain) \(ns.code)"])
    }
}
