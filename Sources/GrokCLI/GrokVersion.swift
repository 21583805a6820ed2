/// The version of grokctl and its libraries, as printed by `grokctl --version`.
public enum GrokVersion {
    /// The release this build belongs to (semantic versioning).
    public static let current = "0.1.0"
}
