import GrokBasics

/// Writing the publisher's output files (`grokctl firmware pack`, `grokctl region catalogue
/// make`; their inputs are read as the command line's `InputFile`s).
public enum FirmwareFiles {
    /// Replaces `path` with `bytes` atomically and durably (GrokBasics' ``AtomicFile``): a
    /// crash leaves the old or the new content, never a mix.
    public static func write(_ bytes: [UInt8], to path: String) throws(FirmwareError) {
        do throws(SystemCallError) {
            try AtomicFile.write(bytes, to: path)
        } catch {
            throw .io(path: error.path ?? path, operation: error.call, detail: .system(error.errno))
        }
    }
}
