import Foundation
import GrokBasics
import GrokCrypto
import GrokFirmware
import UGrokIt

/// The station's ``UploadJournal``: one small file per unit, `DIR/<serial>.upload` (in the
/// state directory's `uploads/`), holding the SHA-256 of the reader image being written, its
/// address and the bytes the unit acknowledged, as one line `SHA256 ADDRESS BYTES`. Written
/// atomically (temporary file and rename) at every 4 KiB the unit acknowledges; removed when
/// the update ends. A file that is missing, not a regular file, or not in that form counts
/// as no earlier upload (the upload then starts at its first byte, which is always safe).
public struct UploadJournalFile: UploadJournal {
    public let directory: String

    public init(directory: String) {
        self.directory = directory
    }

    /// The file of the unit `serial`.
    public func path(_ serial: UInt32) -> String { directory + "/\(serial).upload" }

    static func key(_ section: UgifSection) -> String { SHA256.hash(section.bytes).hex + " \(section.address)" }

    public func written(serial: UInt32, section: UgifSection) -> Int {
        let fd = open(path(serial), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size <= 256 else { return 0 }
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = read(fd, &buffer, buffer.count)
        guard count > 0 else { return 0 }
        let text = String(decoding: buffer.prefix(count), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let parts = text.split(separator: " ")
        guard parts.count == 3, "\(parts[0]) \(parts[1])" == Self.key(section), let bytes = Int(parts[2]),
              (0...section.bytes.count).contains(bytes) else { return 0 }
        return bytes
    }

    public func record(serial: UInt32, section: UgifSection, bytes: Int) {
        // Best effort: a journal that cannot be written only costs a resume.
        _ = try? AtomicFile.write(Array("\(Self.key(section)) \(bytes)\n".utf8), to: path(serial),
                                  options: AtomicFile.Options(mode: 0o600, createsDirectories: true))
    }

    public func clear(serial: UInt32) {
        unlink(path(serial))
    }
}
