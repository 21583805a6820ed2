import Foundation
import GrokBasics
import GrokTestSupport
import Testing

/// The names in `directory`, sorted.
private func names(_ directory: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
}

private func contents(_ path: String) -> [UInt8]? {
    FileManager.default.contents(atPath: path).map { [UInt8]($0) }
}

@Suite("AtomicFile: the one crash-safe file writer")
struct AtomicFileTests {
    @Test("a write replaces the file whole and leaves no temporary beside it")
    func replaces() throws {
        let scratch = TemporaryDirectory("atomic")
        let path = scratch.file("state.json")
        try AtomicFile.write(Array("old".utf8), to: path)
        #expect(try AtomicFile.write(Array("new content".utf8), to: path))
        #expect(contents(path) == Array("new content".utf8))
        #expect(names(scratch.path) == ["state.json"])
    }

    @Test("the new file has the caller's mode (less the umask)", arguments: [mode_t(0o600), 0o644])
    func mode(_ mode: mode_t) throws {
        let scratch = TemporaryDirectory("atomic")
        let path = scratch.file("key")
        try AtomicFile.write([1, 2, 3], to: path, options: AtomicFile.Options(mode: mode))
        // The process's umask, read without changing it (umask(2) would race other tests).
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("Umask:") })
        let mask = try #require(UInt16(line.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces), radix: 8))
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.uint16Value == UInt16(mode) & ~mask)
    }

    @Test("an exclusive create writes a missing file, and leaves an existing one as it is")
    func exclusive() throws {
        let scratch = TemporaryDirectory("atomic")
        let path = scratch.file("seed")
        let options = AtomicFile.Options(exclusive: true)
        #expect(try AtomicFile.write([1], to: path, options: options))
        #expect(try !AtomicFile.write([2], to: path, options: options))
        #expect(contents(path) == [1])
        #expect(names(scratch.path) == ["seed"])
    }

    @Test("a rename that fails leaves the target untouched and removes the temporary; the error names the call and errno")
    func failedRename() throws {
        let scratch = TemporaryDirectory("atomic")
        // A non-empty directory where the file should go: rename(2) refuses to replace it.
        let path = scratch.directory("report")
        _ = scratch.directory("report/inside")
        #expect(throws: SystemCallError(call: "rename", errno: EISDIR, path: path)) {
            try AtomicFile.write([1, 2], to: path)
        }
        #expect(names(scratch.path) == ["report"])
        #expect(names(path) == ["inside"])
    }

    @Test("a missing directory is an open failure naming the temporary, unless the writer makes it")
    func directories() throws {
        let scratch = TemporaryDirectory("atomic")
        let path = scratch.file("a/b/out.csv")
        let error = try #require(throws: SystemCallError.self) { try AtomicFile.write([1], to: path) }
        #expect(error.call == "open")
        #expect(error.errno == ENOENT)
        #expect(error.path?.hasPrefix(path + AtomicFile.temporarySuffix) == true)
        try AtomicFile.write([1], to: path, options: AtomicFile.Options(createsDirectories: true))
        #expect(contents(path) == [1])
        // A file where a directory should be.
        try AtomicFile.write([1], to: scratch.file("file"))
        #expect(throws: SystemCallError(call: "mkdir", errno: ENOTDIR, path: scratch.file("file"))) {
            try AtomicFile.write([1], to: scratch.file("file/x"), options: AtomicFile.Options(createsDirectories: true))
        }
    }

    @Test("a device is written in place when asked (renaming over it would replace it); a full one is ENOSPC on write")
    func specialFiles() throws {
        try AtomicFile.write([1, 2, 3], to: "/dev/null", options: AtomicFile.Options(writesSpecialFilesInPlace: true))
        #expect(throws: SystemCallError(call: "write", errno: ENOSPC, path: "/dev/full")) {
            try AtomicFile.write([1], to: "/dev/full", options: AtomicFile.Options(writesSpecialFilesInPlace: true))
        }
    }

    @Test("a write removes the temporaries of writers that are gone, and keeps a live writer's")
    func staleTemporaries() throws {
        let scratch = TemporaryDirectory("atomic")
        let path = scratch.file("state.json")
        let dead = scratch.file("state.json.tmp-\(try exitedProcessID())-1")
        let live = scratch.file("state.json.tmp-\(getpid())-2")
        for file in [dead, live] { #expect(FileManager.default.createFile(atPath: file, contents: Data())) }
        try AtomicFile.write([7], to: path)
        #expect(names(scratch.path) == ["state.json", "state.json.tmp-\(getpid())-2"])
    }

    @Test("a staged file streams into a named temporary; the target appears only on commit, and a discard leaves nothing")
    func staged() throws {
        let scratch = TemporaryDirectory("atomic")
        let path = scratch.file("take.wav")
        let file = try StagedFile(replacing: path, temporaryPath: path + ".partial")
        try file.write([1, 2, 3, 4])
        try [UInt8]([9, 9]).withUnsafeBytes { buffer in try file.write(buffer, at: 1) }
        #expect(names(scratch.path) == ["take.wav.partial"])
        #expect(try file.commit())
        #expect(contents(path) == [1, 9, 9, 4])
        #expect(names(scratch.path) == ["take.wav"])

        let second = try StagedFile(replacing: path, temporaryPath: path + ".partial")
        // Another writer's temporary is never taken over.
        #expect(throws: SystemCallError(call: "open", errno: EEXIST, path: path + ".partial")) {
            _ = try StagedFile(replacing: path, temporaryPath: path + ".partial")
        }
        try second.write([5])
        second.discard()
        #expect(contents(path) == [1, 9, 9, 4])
        #expect(names(scratch.path) == ["take.wav"])
    }
}
