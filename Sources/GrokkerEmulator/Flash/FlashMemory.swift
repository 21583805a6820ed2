import Foundation
import GrokBasics

/// The emulated Grokker's NOR flash, kept in one file (`flash.bin` in the unit's
/// directory) so it survives restarts and power cuts exactly as written.
///
/// Like real NOR flash: erasing sets a whole sector to FF; programming can only clear
/// bits (the new byte is the old one AND the data); each operation takes time on the
/// device's sample clock (``clock``). A power cut can be scheduled at any sample: the
/// operation under way when it falls is left partly done (a prefix of its bytes), and
/// ``Fault/powerCut`` is thrown. Not thread-safe: the device that owns it drives it.
final class FlashMemory {
    /// Bytes per erase sector.
    static let sectorSize = 4096
    /// Bytes per program page.
    static let pageSize = 256
    /// Seconds to erase one sector (typical 4 KiB serial NOR).
    static let sectorEraseSeconds = 0.045
    /// Seconds to program one page.
    static let pageProgramSeconds = 0.0008
    /// Bytes per second the MCU hashes when it reads flash back (CRC-32 and SHA-256).
    static let hashBytesPerSecond = 1_000_000.0

    /// Why a flash operation did not finish.
    enum Fault: Error {
        /// The power went off at ``FlashMemory/powerCutAt``.
        case powerCut
        /// The flash file could not be written (the host's disk, not the emulated chip); the
        /// detail is a code under `emulator.detail`.
        case storage(ErrorDetail)
    }

    let path: String
    let sampleRate: Int
    private(set) var bytes: [UInt8]
    private let file: FileHandle
    /// The device's sample clock as the flash sees it: operations move it forward.
    var clock: Int64 = 0
    /// The sample at which the power goes off, if one is scheduled.
    var powerCutAt: Int64?

    /// Opens the flash file at `path`, creating it erased (all FF) with `size` bytes when
    /// it does not exist. A file of another size is refused.
    init(path: String, size: Int, sampleRate: Int) throws(EmulatorError) {
        self.path = path
        self.sampleRate = sampleRate
        // Through UnitFile's checked system calls, so a failure names its errno (Foundation's file
        // APIs say only "NSCocoaErrorDomain 256" for a directory in its place).
        let data: [UInt8]
        do {
            if !FileManager.default.fileExists(atPath: path) {
                try UnitFile.replace(path, with: [UInt8](repeating: 0xFF, count: size))
            }
            guard let read = try UnitFile.readAll(path, limit: size) else {
                throw EmulatorError.flash(path: path, detail: ErrorDetail("vanished"))
            }
            data = read
        } catch let error as EmulatorError {
            throw error
        } catch UnitFile.Failure.tooLarge(let found) {
            throw .flash(path: path, detail: ErrorDetail("flash_size", [String(found), String(size)]))
        } catch let error as UnitFile.Failure {
            throw .flash(path: path, detail: error.errorDetail)
        } catch {
            throw .flash(path: path, detail: ErrorDetail("flash_write_failed"))
        }
        let handle: FileHandle
        do {
            handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        } catch {
            throw .flash(path: path, detail: EmulatorError.systemDetail("open", error))
        }
        guard data.count == size else {
            throw .flash(path: path, detail: ErrorDetail("flash_size", [String(data.count), String(size)]))
        }
        bytes = [UInt8](data)
        file = handle
    }

    deinit { try? file.close() }

    /// Forces what was written to the disk (fsync).
    func synchronize() throws(Fault) {
        do {
            try file.synchronize()
        } catch {
            throw .storage(EmulatorError.systemDetail("fsync", error))
        }
    }


    /// The bytes in `range`.
    func read(_ range: Range<Int>) -> [UInt8] { Array(bytes[range]) }

    /// Spends `seconds` of device time (computing), stopping at a scheduled power cut.
    func spend(_ seconds: Double) throws(Fault) {
        let end = clock + Int64((seconds * Double(sampleRate)).rounded(.up))
        if let cut = powerCutAt, cut < end {
            clock = cut
            throw .powerCut
        }
        clock = end
    }

    /// Erases the sector that holds byte `offset`.
    func eraseSector(at offset: Int) throws(Fault) {
        let start = offset / Self.sectorSize * Self.sectorSize
        let duration = Int64(Self.sectorEraseSeconds * Double(sampleRate))
        var count = Self.sectorSize
        var cut = false
        if let at = powerCutAt, at < clock + duration {
            // Cut mid-erase: part of the sector is erased, the rest keeps its bytes.
            count = Int(Double(Self.sectorSize) * Double(max(0, at - clock)) / Double(duration))
            cut = true
        }
        for i in start..<(start + count) { bytes[i] = 0xFF }
        try writeThrough(start..<(start + count))
        if cut {
            clock = powerCutAt!
            throw .powerCut
        }
        clock += duration
    }

    /// Programs `data` at `offset` (bits can only go from 1 to 0).
    func program(_ data: ArraySlice<UInt8>, at offset: Int) throws(Fault) {
        guard !data.isEmpty else { return }
        let pages = (offset + data.count - 1) / Self.pageSize - offset / Self.pageSize + 1
        let duration = Int64(Double(pages) * Self.pageProgramSeconds * Double(sampleRate))
        var count = data.count
        var cut = false
        if let at = powerCutAt, at < clock + duration {
            count = Int(Double(data.count) * Double(max(0, at - clock)) / Double(max(1, duration)))
            cut = true
        }
        var index = data.startIndex
        for i in offset..<(offset + count) {
            bytes[i] &= data[index]
            index += 1
        }
        try writeThrough(offset..<(offset + count))
        if cut {
            clock = powerCutAt!
            throw .powerCut
        }
        clock += duration
    }

    /// Writes changed bytes to the file (the flash file is the flash).
    private func writeThrough(_ range: Range<Int>) throws(Fault) {
        guard !range.isEmpty else { return }
        do {
            try file.seek(toOffset: UInt64(range.lowerBound))
            try file.write(contentsOf: bytes[range])
        } catch {
            throw .storage(EmulatorError.systemDetail("write", error))
        }
    }
}
