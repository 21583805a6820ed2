import Foundation
import GrokBasics
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// An exclusive lock on one Grokker, by serial number: `flock` on `<directory>/<serial>.lock`,
/// so two runs (two processes, or two runs in one process) cannot touch the same Grokker at
/// once. The kernel drops the lock when the holder exits, however it exits, so a killed run
/// never leaves a Grokker locked. Unlocked on ``unlock()`` or deinit.
public final class DeviceLock: Sendable {
    /// The lock file.
    public let path: String
    private let descriptor: Mutex<Int32>

    /// Takes the lock without waiting.
    /// - Returns: the lock, or `nil` when another holder has it.
    /// - Throws: ``FleetError/lockFailed(path:detail:)`` when the directory or file cannot be used.
    public static func acquire(directory: String, serial: String) throws(FleetError) -> DeviceLock? {
        try acquire(directory: directory, fileName: serial + ".lock")
    }

    /// Takes the lock of a port without waiting: `<directory>/port-<name>.lock`, where the
    /// name is ``portLockName(_:)`` of `key` (the sound card, the emulated unit's directory).
    /// Taken before the port is opened, so two runs never talk to one Grokker at once, even
    /// before either knows its serial number.
    /// - Returns: the lock, or `nil` when another holder has it.
    public static func acquire(directory: String, port key: String) throws(FleetError) -> DeviceLock? {
        try acquire(directory: directory, fileName: portLockName(key))
    }

    /// Who holds (or last held) the lock file at `path`, as its holder wrote it: the process
    /// id and the command (`grokctl provision`); `nil` when the file says nothing readable.
    public static func holder(path: String) -> (pid: String, command: String)? {
        guard let data = FileManager.default.contents(atPath: path), data.count < 4096,
              let text = String(data: data, encoding: .utf8) else { return nil }
        var pid: String?
        var command = ""
        for line in text.split(separator: "\n") {
            if line.hasPrefix("pid ") { pid = String(line.dropFirst(4)) }
            if line.hasPrefix("command ") { command = String(line.dropFirst(8)) }
        }
        return pid.map { ($0, command) }
    }

    /// The command this process runs, for the lock file: the program's name and its first
    /// argument (`grokctl provision`, `grokctl info`).
    static var commandNote: String {
        let arguments = CommandLine.arguments
        let program = arguments.first.map { ($0 as NSString).lastPathComponent } ?? "?"
        return ([program] + arguments.dropFirst().prefix(1)).joined(separator: " ")
    }

    /// The lock file's name for a port key: `port-` and the key with every character but
    /// letters, digits, `.` and `-` made `_`, then the key's FNV-1a hash (so keys that differ
    /// only in those characters do not share a lock), `.lock`.
    public static func portLockName(_ key: String) -> String {
        var hash: UInt32 = 0x811C_9DC5
        for byte in key.utf8 { hash = (hash ^ UInt32(byte)) &* 0x0100_0193 }
        let safe = String(key.unicodeScalars.map { scalar -> Character in
            let c = Character(scalar)
            return (scalar.isASCII && (c.isLetter || c.isNumber)) || c == "." || c == "-" ? c : "_"
        }.suffix(80))
        return "port-" + safe + "-" + String(format: "%08x", hash) + ".lock"
    }

    /// The path of the lock file `fileName` in `directory`.
    public static func path(directory: String, fileName: String) -> String {
        (directory.hasSuffix("/") ? directory : directory + "/") + fileName
    }

    static func acquire(directory: String, fileName: String) throws(FleetError) -> DeviceLock? {
        if let failure = makeDirectories(directory) { throw .lockFailed(path: directory, detail: failure) }
        let path = Self.path(directory: directory, fileName: fileName)
        // O_NOFOLLOW: a lock file replaced by a symbolic link is refused (ELOOP), never
        // written through, so whoever can write the directory cannot make a run truncate
        // another file; a FIFO or device in its place is refused below before any write.
        let fd: Int32
        do {
            fd = try SystemCall.value("open", path: path) { open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o644) }
        } catch {
            throw .lockFailed(path: path, detail: error.errnoName)
        }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw .lockFailed(path: path, detail: systemErrorName(EINVAL))
        }
        do {
            try SystemCall.value("flock", path: path) { flock(fd, LOCK_EX | LOCK_NB) }
        } catch {
            close(fd)
            if error.errno == EWOULDBLOCK { return nil }
            throw .lockFailed(path: path, detail: error.errnoName)
        }
        // Who holds it, for people looking at the directory and for a refusal to name.
        let note = Array("pid \(getpid())\ncommand \(commandNote)\n".utf8)
        _ = ftruncate(fd, 0)
        _ = note.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        return DeviceLock(path: path, descriptor: fd)
    }

    /// `mkdir -p` of `directory`: `nil` when it exists (or was made), else the system's
    /// error name of the first component that could not be made (`EACCES`, `ENOTDIR`).
    static func makeDirectories(_ directory: String) -> String? {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
            return isDirectory.boolValue ? nil : systemErrorName(ENOTDIR)
        }
        var path = directory.hasPrefix("/") ? "" : "."
        for component in directory.split(separator: "/") {
            path += "/" + component
            if mkdir(path, 0o755) != 0, errno != EEXIST { return systemErrorName(errno) }
        }
        var made: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &made), made.boolValue else {
            return systemErrorName(ENOTDIR)
        }
        return nil
    }

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = Mutex(descriptor)
    }

    /// Releases the lock (the file stays, empty of meaning).
    public func unlock() {
        descriptor.withLock { fd in
            guard fd >= 0 else { return }
            _ = flock(fd, LOCK_UN)
            close(fd)
            fd = -1
        }
    }

    deinit { unlock() }
}
