import GrokBasics

/// Writes a whole file so that readers see the old content or the new one: GrokBasics'
/// ``AtomicFile``, making the directory, and writing a device or FIFO such as
/// `/dev/stdout` in place (renaming over it would replace it). A failure leaves no
/// temporary file and throws ``Failure`` naming `path`.
public enum CheckedFile {
    /// A file that was not written: its path and the system's error number.
    public struct Failure: Error, Sendable, Equatable {
        public let path: String
        public let errno: Int32
    }

    public static func write(_ bytes: [UInt8], to path: String) throws(Failure) {
        do throws(SystemCallError) {
            _ = try AtomicFile.write(bytes, to: path, options: AtomicFile.Options(createsDirectories: true, writesSpecialFilesInPlace: true))
        } catch {
            throw Failure(path: path, errno: error.errno)
        }
    }
}
