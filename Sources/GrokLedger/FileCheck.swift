import GrokBasics
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The first 100 bytes of a SQLite database file, as the file format documents them
/// (sqlite.org/fileformat2.html, "The Database Header"). Read straight from the file, so a
/// file can be judged before SQLite touches it.
struct DatabaseHeader: Equatable, Sendable {
    /// "SQLite format 3" and a NUL.
    static let magic: [UInt8] = Array("SQLite format 3".utf8) + [0]
    static let size = 100

    /// Bytes per page: a power of two from 512 to 65536 (stored as 1 for 65536).
    let pageSize: Int
    /// Bytes 18 and 19 are 2 in WAL mode, 1 in rollback (legacy) mode.
    let walMode: Bool
    /// `PRAGMA user_version`, bytes 60...63 (big-endian). In WAL mode a newer value may still
    /// be in the `-wal` only.
    let userVersion: Int32
    /// `PRAGMA application_id`, bytes 68...71 (big-endian).
    let applicationID: Int32

    enum Problem: Error, Equatable, Sendable {
        /// Fewer than 100 bytes.
        case short(Int)
        /// The first 16 bytes are not SQLite's.
        case notSQLite
        /// The header is SQLite's but a field is impossible.
        case invalid(String)
    }

    /// Parses the header, or says why it is not one.
    static func parse(_ bytes: [UInt8]) -> Result<DatabaseHeader, Problem> {
        guard bytes.count >= 16, Array(bytes[0..<16]) == magic else {
            return .failure(bytes.count < 16 && magic.starts(with: bytes) ? .short(bytes.count) : .notSQLite)
        }
        guard bytes.count >= size else { return .failure(.short(bytes.count)) }
        let raw = Int(bytes[16]) << 8 | Int(bytes[17])
        let pageSize = raw == 1 ? 65536 : raw
        guard pageSize >= 512, pageSize <= 65536, pageSize & (pageSize - 1) == 0 else {
            return .failure(.invalid("page_size=\(raw)"))
        }
        guard (1...2).contains(bytes[18]), (1...2).contains(bytes[19]) else {
            return .failure(.invalid("format_versions=\(bytes[18]),\(bytes[19])"))
        }
        // Bytes 21...23 are fixed by the format: payload fractions 64, 32 and 32.
        guard bytes[21] == 64, bytes[22] == 32, bytes[23] == 32 else {
            return .failure(.invalid("payload_fractions=\(bytes[21]),\(bytes[22]),\(bytes[23])"))
        }
        return .success(DatabaseHeader(pageSize: pageSize, walMode: bytes[18] == 2 && bytes[19] == 2,
                                       userVersion: Int32(bitPattern: bigEndian32(bytes, 60)),
                                       applicationID: Int32(bitPattern: bigEndian32(bytes, 68))))
    }
}

func bigEndian32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
    UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
}

/// What a `-wal` file holds, frame by frame (sqlite.org/fileformat2.html, "The WAL File
/// Format"). SQLite's own recovery stops at the first frame whose checksum fails and silently
/// ignores everything after it, committed or not; this scan finds that case.
struct WALScan: Equatable, Sendable {
    /// The 32-byte header is valid (magic, version 3007000, its own checksum).
    var headerValid: Bool
    /// Whole frames in the file (stale ones from before the last restart included).
    var frames: Int
    /// Frames SQLite will use: up to the last valid commit frame.
    var committedFrames: Int
    /// Committed transactions among them.
    var commits: Int
    /// The first frame (0-based) of the current generation whose checksum fails.
    var firstBadFrame: Int?
    /// Frames of the current generation (the header's salts) after `firstBadFrame`: written
    /// after the damaged one, so lost with it.
    var framesLostAfterDamage: Int
    /// Commit frames among `firstBadFrame` and the frames after it.
    var commitsLostAfterDamage: Int

    static let headerSize = 32
    static let frameHeaderSize = 24

    /// A damaged frame with later frames of the same generation after it: SQLite would drop
    /// committed data without a word. A bad last frame alone is a write cut short before its
    /// commit returned (a power cut), which SQLite rightly ignores.
    var isDamaged: Bool { firstBadFrame != nil && framesLostAfterDamage > 0 }

    /// Scans the bytes of a `-wal` file. An empty (or shorter than a header) file is a WAL
    /// with nothing in it.
    static func scan(_ bytes: [UInt8]) -> WALScan {
        var result = WALScan(headerValid: false, frames: 0, committedFrames: 0, commits: 0, firstBadFrame: nil,
                             framesLostAfterDamage: 0, commitsLostAfterDamage: 0)
        guard bytes.count >= headerSize else { result.headerValid = bytes.isEmpty; return result }
        let magic = bigEndian32(bytes, 0)
        guard magic & 0xFFFF_FFFE == 0x377F_0682 else { return result }
        let bigEndian = magic & 1 == 1
        let pageSize = Int(bigEndian32(bytes, 8))
        guard bigEndian32(bytes, 4) == 3_007_000, pageSize >= 512, pageSize <= 65536, pageSize & (pageSize - 1) == 0 else {
            return result
        }
        var (s0, s1) = checksum(bytes, 0, 24, bigEndian: bigEndian, 0, 0)
        guard s0 == bigEndian32(bytes, 24), s1 == bigEndian32(bytes, 28) else { return result }
        result.headerValid = true
        let salt1 = bigEndian32(bytes, 16), salt2 = bigEndian32(bytes, 20)
        let frameSize = frameHeaderSize + pageSize
        result.frames = (bytes.count - headerSize) / frameSize
        var chainIntact = true
        for frame in 0..<result.frames {
            let at = headerSize + frame * frameSize
            let current = bigEndian32(bytes, at + 8) == salt1 && bigEndian32(bytes, at + 12) == salt2
            let commit = bigEndian32(bytes, at + 4) != 0
            if chainIntact {
                guard current else { break }    // the end of this generation: older frames follow
                (s0, s1) = checksum(bytes, at, 8, bigEndian: bigEndian, s0, s1)
                (s0, s1) = checksum(bytes, at + frameHeaderSize, pageSize, bigEndian: bigEndian, s0, s1)
                if s0 == bigEndian32(bytes, at + 16), s1 == bigEndian32(bytes, at + 20) {
                    if commit {
                        result.committedFrames = frame + 1
                        result.commits += 1
                    }
                    continue
                }
                chainIntact = false
                result.firstBadFrame = frame
                if commit { result.commitsLostAfterDamage += 1 }
            } else if current {
                result.framesLostAfterDamage += 1
                if commit { result.commitsLostAfterDamage += 1 }
            }
        }
        return result
    }

    /// SQLite's WAL checksum: 32-bit words in the byte order the magic names, taken in pairs,
    /// `s0 += x[i] + s1; s1 += x[i+1] + s0`, carried from the header through every frame.
    static func checksum(_ bytes: [UInt8], _ from: Int, _ count: Int, bigEndian: Bool, _ s0: UInt32, _ s1: UInt32)
        -> (UInt32, UInt32)
    {
        var s0 = s0, s1 = s1
        var i = from
        let end = from + count
        bytes.withUnsafeBufferPointer { b in
            while i < end {
                let x0: UInt32, x1: UInt32
                if bigEndian {
                    x0 = UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3])
                    x1 = UInt32(b[i + 4]) << 24 | UInt32(b[i + 5]) << 16 | UInt32(b[i + 6]) << 8 | UInt32(b[i + 7])
                } else {
                    x0 = UInt32(b[i + 3]) << 24 | UInt32(b[i + 2]) << 16 | UInt32(b[i + 1]) << 8 | UInt32(b[i])
                    x1 = UInt32(b[i + 7]) << 24 | UInt32(b[i + 6]) << 16 | UInt32(b[i + 5]) << 8 | UInt32(b[i + 4])
                }
                s0 = s0 &+ x0 &+ s1
                s1 = s1 &+ x1 &+ s0
                i += 8
            }
        }
        return (s0, s1)
    }

    /// The damage, for ``LedgerError/corrupt(path:damage:)``; nil when the WAL is sound.
    var damage: LedgerDamage? {
        if !headerValid { return LedgerDamage("wal_header") }
        guard isDamaged, let bad = firstBadFrame else { return nil }
        return LedgerDamage("wal_frame", [String(bad + 1), String(framesLostAfterDamage), String(commitsLostAfterDamage)])
    }
}

/// Checks made on the files themselves, before SQLite opens them.
enum FileCheck {
    /// Refuses, without modifying it, a file that is empty, not SQLite, has an impossible
    /// header, is another application's (its header's `application_id`), or whose size is not
    /// a whole number of pages.
    static func verifyHeader(_ path: String) throws(LedgerError) -> DatabaseHeader {
        let bytes = try readPrefix(path, DatabaseHeader.size)
        guard !bytes.isEmpty else { throw .empty(path: path) }
        let header: DatabaseHeader
        switch DatabaseHeader.parse(bytes) {
        case .success(let parsed): header = parsed
        case .failure(.notSQLite): throw .notSQLite(path: path)
        case .failure(.short(let count)): throw .corrupt(path: path, damage: LedgerDamage("short_file", [String(count)]))
        case .failure(.invalid(let what)): throw .corrupt(path: path, damage: LedgerDamage("bad_header", [what]))
        }
        if header.applicationID != 0 && header.applicationID != Schema.applicationID {
            throw .notALedger(path: path, applicationID: header.applicationID)
        }
        var info = stat()
        if stat(path, &info) == 0, Int(info.st_size) % header.pageSize != 0 {
            throw .corrupt(path: path, damage: LedgerDamage("partial_page", [String(info.st_size), String(header.pageSize)]))
        }
        return header
    }

    /// Scans `<path>-wal`, if there is one; throws ``LedgerError/corrupt(path:damage:)`` when
    /// SQLite would drop committed transactions. `attempts` above 1 re-reads a WAL found
    /// damaged (a reader without the write lock may catch a frame half-written by another
    /// process); only damage seen at the same frame every time is reported.
    @discardableResult
    static func verifyWAL(_ path: String, attempts: Int = 1) throws(LedgerError) -> WALScan {
        var last: WALScan?
        for attempt in 0..<max(1, attempts) {
            let scan = WALScan.scan(try readAll(path + "-wal"))
            guard scan.damage != nil else { return scan }
            if let last, last.firstBadFrame != scan.firstBadFrame || last.headerValid != scan.headerValid {
                return scan
            }
            last = scan
            if attempt + 1 < attempts { usleep(20_000) }
        }
        throw .corrupt(path: path, damage: last?.damage ?? LedgerDamage("wal_header"))
    }

    /// Up to `count` bytes from the start of the file.
    static func readPrefix(_ path: String, _ count: Int) throws(LedgerError) -> [UInt8] {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw .cannotOpen(path: path, detail: "open: \(SystemCodes.errnoName(errno))")
        }
        defer { try? handle.close() }
        do {
            return [UInt8](try handle.read(upToCount: count) ?? Data())
        } catch {
            throw .cannotOpen(path: path, detail: "read: \(SystemCodes.name(of: error))")
        }
    }

    /// The whole file; empty when it does not exist.
    static func readAll(_ path: String) throws(LedgerError) -> [UInt8] {
        guard FileManager.default.fileExists(atPath: path) else { return [] }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .cannotOpen(path: path, detail: "unreadable")
        }
        return [UInt8](data)
    }
}
