/// Everything that can go wrong with an RF scene file or the saved state of its field. Each
/// case names the file and, for a bad value, the key path inside it (`tags[3].epc`), what
/// was expected and what was found; `code` is stable for `--json` output and the localized
/// catalog (`error.scene.<code>`).
public enum SceneError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The file could not be read (missing, permissions, I/O error, too large).
    case unreadable(path: String, detail: String)
    /// The file is not JSON at all.
    case notJSON(path: String, detail: String)
    /// A value has the wrong type, format or range.
    case invalidValue(path: String, key: String, expected: String, found: String)
    /// A required key is absent.
    case missingKey(path: String, key: String, expected: String)
    /// A key the format does not know (often a typo).
    case unknownKey(path: String, key: String, known: [String])
    /// Keys that exclude each other appear together in one object.
    case conflictingKeys(path: String, key: String, keys: [String])
    /// The file has a newer `format` than this build reads.
    case tooNew(path: String, format: Int, supported: Int)
    /// A saved field state does not fit the scene it is loaded into.
    case stateMismatch(path: String, detail: String)
    /// The state could not be written.
    case writeFailed(path: String, detail: String)

    /// A stable identifier for machines and for the message catalog.
    public var code: String {
        switch self {
        case .unreadable: "scene_unreadable"
        case .notJSON: "scene_not_json"
        case .invalidValue: "scene_invalid_value"
        case .missingKey: "scene_missing_key"
        case .unknownKey: "scene_unknown_key"
        case .conflictingKeys: "scene_conflicting_keys"
        case .tooNew: "scene_too_new"
        case .stateMismatch: "scene_state_mismatch"
        case .writeFailed: "scene_write_failed"
        }
    }

    /// The values a localized message fills in, in order.
    public var arguments: [String] {
        switch self {
        case .unreadable(let path, let detail): [path, detail]
        case .notJSON(let path, let detail): [path, detail]
        case .invalidValue(let path, let key, let expected, let found): [path, key, expected, found]
        case .missingKey(let path, let key, let expected): [path, key, expected]
        case .unknownKey(let path, let key, let known): [path, key, known.joined(separator: ", ")]
        case .conflictingKeys(let path, let key, let keys): [path, key, keys.joined(separator: ", ")]
        case .tooNew(let path, let format, let supported): [path, String(format), String(supported)]
        case .stateMismatch(let path, let detail): [path, detail]
        case .writeFailed(let path, let detail): [path, detail]
        }
    }

    /// The file the error is about.
    public var path: String {
        switch self {
        case .unreadable(let path, _), .notJSON(let path, _), .invalidValue(let path, _, _, _),
            .missingKey(let path, _, _), .unknownKey(let path, _, _), .conflictingKeys(let path, _, _),
            .tooNew(let path, _, _), .stateMismatch(let path, _), .writeFailed(let path, _):
            path
        }
    }

    /// The key path inside the file (`tags[3].epc`), when the error is about one value.
    public var keyPath: String? {
        switch self {
        case .invalidValue(_, let key, _, _), .missingKey(_, let key, _), .unknownKey(_, let key, _),
            .conflictingKeys(_, let key, _):
            key
        default: nil
        }
    }

    public var description: String {
        switch self {
        case .unreadable(let path, let detail):
            "cannot read the scene file '\(path)': \(detail); check the path and its permissions."
        case .notJSON(let path, let detail):
            "the scene file '\(path)' is not valid JSON (\(detail)); fix the syntax (see docs/scene.md)."
        case .invalidValue(let path, let key, let expected, let found):
            "in the scene file '\(path)', \(key) must be \(expected) but is \(found); fix that value (see docs/scene.md)."
        case .missingKey(let path, let key, let expected):
            "in the scene file '\(path)', \(key) is missing: expected \(expected); add it (see docs/scene.md)."
        case .unknownKey(let path, let key, let known):
            "in the scene file '\(path)', \(key) is not a known key (known here: \(known.joined(separator: ", "))); remove it or fix its spelling."
        case .conflictingKeys(let path, let key, let keys):
            "in the scene file '\(path)', \(key) has \(keys.joined(separator: " and ")), which exclude each other; keep only one."
        case .tooNew(let path, let format, let supported):
            "the scene file '\(path)' has format \(format) but this grokctl reads up to format \(supported); use a newer grokctl."
        case .stateMismatch(let path, let detail):
            "the RF field state '\(path)' does not belong to this scene (\(detail)); delete it to start the scene afresh."
        case .writeFailed(let path, let detail):
            "cannot save the RF field state to '\(path)': \(detail); free disk space or fix permissions and retry."
        }
    }
}
