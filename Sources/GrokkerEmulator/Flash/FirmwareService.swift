import Foundation
import GrokAudio
import GrokCrypto
import GrokProtocol

/// The emulated Grokker's loader: it boots the right application slot, and carries out
/// the firmware-update requests (``FirmwareRequest``) on the flash, so that no sequence of
/// requests, unplugs or power cuts leaves the unit without a verified image to run
/// (docs/flashing.md).
final class FirmwareService {
    /// Where the loader starts applications: images must be built for this address.
    static let applicationAddress: UInt32 = 0x0800_8000
    /// Seconds from reset until the application answers the link.
    static let bootSeconds = 0.4

    let flash: FlashMemory
    let hardwareType: HardwareType
    /// The program that runs.
    private(set) var mode: SoftwareMode = .loader
    /// The slot whose application runs (or ran before the loader took over).
    private(set) var runningSlot: Int?
    /// The running slot was booted on trial and waits for ``FirmwareRequest/confirm``.
    private(set) var pendingConfirm = false
    /// The device asks to be restarted (after ``FirmwareRequest/activate``).
    private(set) var restartRequested = false
    /// Images (by SHA-256) that crash when booted: a test's stand-in for broken firmware.
    var failingImages: Set<[UInt8]> = []

    /// The upload under way since the last ``FirmwareRequest/beginUpload(_:)``.
    private var upload: (slot: Int, image: ImageDescriptor, offset: Int, marked: Int)?
    private var inflater: Inflater?

    /// Opens the unit's flash; a blank one is programmed as at the factory with an image
    /// reporting `factoryVersion`.
    init(flash: FlashMemory, hardwareType: HardwareType) {
        self.flash = flash
        self.hardwareType = hardwareType
    }

    /// Opens the unit's flash at `path`. A unit that has none yet gets it as from the
    /// factory — an image reporting `factoryVersion` in slot 0, confirmed — programmed in a
    /// temporary file that is renamed into place only once whole, so a process killed
    /// meanwhile leaves no half-made flash behind.
    /// What a flash being made adds to the file's name: `flash.bin.factory-<pid>`.
    static let factorySuffix = ".factory-"

    static func openFlash(path: String, sampleRate: Int, hardwareType: HardwareType, factoryVersion: FirmwareVersion,
                          serial: UInt32) throws(EmulatorError) -> FlashMemory {
        // A process killed while making a flash leaves its temporary file: remove those whose maker is gone.
        AtomicFile.removeStaleTemporaries(of: path, suffix: factorySuffix)
        if !FileManager.default.fileExists(atPath: path) {
            let temporary = path + factorySuffix + "\(getpid())"
            try? FileManager.default.removeItem(atPath: temporary)
            // Held from just after the file exists until it is renamed: tells a cleaner in
            // another process that this maker is alive (before it, the maker's pid does).
            var guardFD: Int32 = -1
            defer { if guardFD >= 0 { close(guardFD) } }
            do {
                let blank = try FlashMemory(path: temporary, size: FlashLayout.totalSize, sampleRate: sampleRate)
                guardFD = open(temporary, O_RDONLY | O_CLOEXEC)
                if guardFD >= 0 { _ = flock(guardFD, LOCK_EX | LOCK_NB) }
                try programFactoryImage(flash: blank, hardwareType: hardwareType, version: factoryVersion, serial: serial)
                try blank.synchronize()
            } catch let error as EmulatorError {
                try? FileManager.default.removeItem(atPath: temporary)
                throw error
            } catch {
                try? FileManager.default.removeItem(atPath: temporary)
                throw .flash(path: path, detail: "the factory image could not be written: \(error)")
            }
            guard rename(temporary, path) == 0 else {
                let reason = String(cString: strerror(errno))
                try? FileManager.default.removeItem(atPath: temporary)
                throw .flash(path: path, detail: "could not put the new flash file in place: \(reason)")
            }
        }
        return try FlashMemory(path: path, size: FlashLayout.totalSize, sampleRate: sampleRate)
    }

    /// The slot an upload goes to: the one not active.
    private var spareSlot: Int { 1 - (BootRecord.newest(in: flash)?.record.active ?? 0) }

    /// The image the running slot holds.
    var runningImage: ImageDescriptor? { runningSlot.flatMap { SlotTrailer.read(from: flash, slot: $0)?.image } }

    // MARK: Boot

    /// What the loader does at reset: boot the slot on trial once, go back to the active
    /// one if the trial image was already tried (and never confirmed) or does not check,
    /// fall back to the other slot if the active one is damaged, and stay in the loader if
    /// neither holds a good image.
    func boot() throws(FlashMemory.Fault) {
        upload = nil
        inflater = nil
        restartRequested = false
        pendingConfirm = false
        runningSlot = nil
        mode = .loader
        try flash.spend(Self.bootSeconds)
        guard var record = BootRecord.newest(in: flash)?.record else {
            for slot in 0..<FlashLayout.slotCount where try isBootable(slot) {
                try BootRecord.write(BootRecord(sequence: 0, active: slot, pending: nil, tried: false), in: flash)
                run(slot)
                return
            }
            return
        }
        if let trial = record.pending {
            if !record.tried, try isBootable(trial) {
                record.tried = true
                try BootRecord.write(record, in: flash)
                if let image = SlotTrailer.read(from: flash, slot: trial)?.image, failingImages.contains(image.sha256) {
                    // It crashes; the watchdog resets the unit and the loader sees a tried,
                    // unconfirmed trial below.
                    try flash.spend(Self.bootSeconds)
                } else {
                    run(trial)
                    pendingConfirm = true
                    return
                }
            }
            record.pending = nil
            record.tried = false
            try BootRecord.write(record, in: flash)
        }
        if try isBootable(record.active) {
            run(record.active)
        } else if try isBootable(1 - record.active) {
            record.active = 1 - record.active
            try BootRecord.write(record, in: flash)
            run(record.active)
        }
    }

    private func run(_ slot: Int) {
        runningSlot = slot
        mode = .application
    }

    /// Whether `slot` holds a complete, verified image whose bytes still check.
    private func isBootable(_ slot: Int) throws(FlashMemory.Fault) -> Bool {
        guard let trailer = SlotTrailer.read(from: flash, slot: slot), trailer.verified,
              trailer.heldBytes == Int(trailer.image.length), trailer.image.hardwareType == hardwareType
        else { return false }
        let start = FlashLayout.slotStart(slot)
        try flash.spend(Double(trailer.image.length) / FlashMemory.hashBytesPerSecond / 4)  // CRC only: fast
        return CRC32.checksum(flash.read(start..<(start + Int(trailer.image.length)))) == trailer.image.crc32
    }

    // MARK: Requests

    /// Carries out one request; the flash clock says when it is done.
    func handle(_ request: FirmwareRequest) throws(FlashMemory.Fault) -> Response {
        let opcode = request.opcode
        func refuse(_ status: StatusCode, _ message: String) -> Response {
            .failure(opcode: opcode, status: status, message: message)
        }
        switch request {
        case .status:
            return .firmware(.status(status()), for: opcode)
        case .enterLoader:
            mode = .loader
            return .firmware(.status(status()), for: opcode)
        case .leaveLoader:
            guard runningSlot != nil else {
                return refuse(.notAllowed, "no application image to run: upload, verify and activate one")
            }
            upload = nil
            inflater = nil
            mode = .application
            return .firmware(.status(status()), for: opcode)
        case .beginUpload(let image):
            guard mode == .loader else { return refuse(.wrongMode, "enter the loader before uploading") }
            guard !pendingConfirm else {
                return refuse(.notAllowed, "the running image is on trial: confirm it (or restart the unit) before uploading another")
            }
            guard image.hardwareType == hardwareType else {
                return refuse(.invalidArgument, "image built for \(image.hardwareType.vendorName), this unit is \(hardwareType.vendorName)")
            }
            guard image.loadAddress == Self.applicationAddress else {
                return refuse(.invalidArgument, String(format: "image loads at 0x%08X; this loader starts applications at 0x%08X",
                                                       image.loadAddress, Self.applicationAddress))
            }
            guard image.length > 0, Int(image.length) <= FlashLayout.slotCapacity else {
                return refuse(.invalidArgument, "image of \(image.length) bytes; a slot takes 1 to \(FlashLayout.slotCapacity)")
            }
            let slot = spareSlot
            inflater = nil
            if let trailer = SlotTrailer.read(from: flash, slot: slot), trailer.image == image {
                // Go on from the last whole sector held (blocks are sector-aligned, so a
                // compressed stream restarts where the x86 filter's pages start), or from
                // the end when all of it is there.
                var held = trailer.heldBytes
                if held < Int(image.length) { held = held / FlashLayout.sector * FlashLayout.sector }
                upload = (slot, image, held, (held + FlashLayout.granule - 1) / FlashLayout.granule)
            } else {
                try SlotTrailer.begin(image, in: flash, slot: slot)
                upload = (slot, image, 0, 0)
            }
            return progress(accepted: true)
        case .uploadBlock(let block):
            return try write(block)
        case .verifyUpload:
            guard let upload else { return refuse(.wrongMode, "begin the upload before verifying it") }
            guard upload.offset == Int(upload.image.length) else {
                return refuse(.invalidArgument, "the upload is incomplete: \(upload.offset) of \(upload.image.length) bytes")
            }
            let start = FlashLayout.slotStart(upload.slot)
            let bytes = flash.read(start..<(start + upload.offset))
            try flash.spend(Double(bytes.count) / FlashMemory.hashBytesPerSecond)
            let crc = CRC32.checksum(bytes)
            let sha = SHA256.hash(bytes).bytes
            if crc == upload.image.crc32 && sha == upload.image.sha256 {
                try SlotTrailer.markVerified(in: flash, slot: upload.slot)
            }
            return .firmware(.check(ImageCheck(length: UInt32(bytes.count), crc32: crc, sha256: sha)), for: opcode)
        case .activate:
            guard mode == .loader else { return refuse(.wrongMode, "enter the loader before activating an image") }
            let slot = spareSlot
            guard let trailer = SlotTrailer.read(from: flash, slot: slot), trailer.verified,
                  trailer.heldBytes == Int(trailer.image.length)
            else { return refuse(.notAllowed, "no verified image to activate: upload and verify one first") }
            let active = BootRecord.newest(in: flash)?.record.active ?? 1 - slot
            try BootRecord.write(BootRecord(sequence: 0, active: active, pending: slot, tried: false), in: flash)
            restartRequested = true
            return .done(.activateImage)
        case .confirm:
            if pendingConfirm, let running = runningSlot {
                try BootRecord.write(BootRecord(sequence: 0, active: running, pending: nil, tried: false), in: flash)
                pendingConfirm = false
            }
            return .firmware(.status(status()), for: opcode)
        }
    }

    private func progress(accepted: Bool) -> Response {
        let held = UInt32(upload?.offset ?? 0)
        let length = upload?.image.length ?? 0
        return .firmware(.progress(UploadProgress(accepted: accepted, offset: held, length: length)), for: .uploadBlock)
    }

    private func write(_ block: UploadBlock) throws(FlashMemory.Fault) -> Response {
        guard mode == .loader, var current = upload else {
            return .failure(opcode: .uploadBlock, status: .wrongMode, message: "begin the upload before sending blocks")
        }
        let reject = { () -> Response in
            self.inflater = nil
            return self.progress(accepted: false)
        }
        guard Int(block.offset) == current.offset else { return reject() }
        let end = current.offset + Int(block.decodedLength)
        guard end <= Int(current.image.length) else {
            return .failure(opcode: .uploadBlock, status: .invalidArgument,
                            message: "block ends at \(end), past the image's \(current.image.length) bytes")
        }
        var decoded: [UInt8]
        switch block.encoding {
        case .raw:
            decoded = block.data
        case .deflate, .deflateX86:
            // x86-filtered blocks start on filter pages.
            if block.encoding == .deflateX86, block.offset % UInt32(BranchFilter.pageSize) != 0 { return reject() }
            if block.restart {
                // The sender primed its compressor with the image just before this block,
                // in the same form it compresses (filtered for x86).
                let start = FlashLayout.slotStart(current.slot)
                let from = max(0, current.offset - 32 * 1024)
                var history = flash.read((start + from)..<(start + current.offset))
                if block.encoding == .deflateX86 { BranchFilter.encodePages(&history, position: UInt32(from)) }
                inflater = try? Inflater(dictionary: history, limit: Int(current.image.length) - current.offset)
            }
            guard let inflater, let out = try? inflater.decompress(block.data) else { return reject() }
            decoded = out
            if block.encoding == .deflateX86 { BranchFilter.decodePages(&decoded, position: block.offset) }
        }
        guard decoded.count == Int(block.decodedLength), CRC32.checksum(decoded) == block.crc32 else { return reject() }

        // Erase the sectors this block reaches that this upload has not erased yet, then program.
        let trailer = SlotTrailer.read(from: flash, slot: current.slot)
        let base = FlashLayout.slotStart(current.slot)
        let firstSector = current.offset / FlashLayout.sector
        let lastSector = (end - 1) / FlashLayout.sector
        for sector in firstSector...lastSector where trailer?.erased[sector] != true {
            try flash.eraseSector(at: base + sector * FlashLayout.sector)
            try SlotTrailer.markErased(sector: sector, in: flash, slot: current.slot)
        }
        try flash.program(decoded[...], at: base + current.offset)
        current.offset = end
        let complete = end == Int(current.image.length)
        let target = complete ? (end + FlashLayout.granule - 1) / FlashLayout.granule : end / FlashLayout.granule
        while current.marked < target {
            try SlotTrailer.markDone(granule: current.marked, in: flash, slot: current.slot)
            current.marked += 1
        }
        upload = current
        return progress(accepted: true)
    }

    /// The firmware state as the host sees it.
    func status() -> FirmwareStatus {
        var slots: [SlotStatus] = []
        var uploadState: UploadState?
        let spare = spareSlot
        for slot in 0..<FlashLayout.slotCount {
            let trailer = SlotTrailer.read(from: flash, slot: slot)
            let complete = trailer.map { $0.verified && $0.heldBytes == Int($0.image.length) } ?? false
            let running = slot == runningSlot
            slots.append(SlotStatus(image: complete ? trailer?.image : nil, running: running, pendingConfirm: running && pendingConfirm))
            if slot == spare, let trailer, !complete {
                uploadState = UploadState(image: trailer.image, offset: UInt32(trailer.heldBytes))
            }
        }
        return FirmwareStatus(mode: mode, slots: slots, upload: uploadState, slotCapacity: UInt32(FlashLayout.slotCapacity),
                              encodings: BlockEncoding.allCases)
    }

    // MARK: Factory

    /// The image a new unit ships with: 24 KiB from the unit's serial, reporting `version`.
    private static func programFactoryImage(flash: FlashMemory, hardwareType: HardwareType, version: FirmwareVersion,
                                            serial: UInt32) throws(FlashMemory.Fault) {
        var generator = SplitMix64(seed: UInt64(serial) ^ 0xF1A5_4000)
        let bytes = (0..<(24 * 1024)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        let image = ImageDescriptor(version: version, hardwareType: hardwareType, loadAddress: applicationAddress,
                                    length: UInt32(bytes.count), crc32: CRC32.checksum(bytes), sha256: SHA256.hash(bytes).bytes)
        try SlotTrailer.begin(image, in: flash, slot: 0)
        for sector in 0..<FlashLayout.imageSectors { try SlotTrailer.markErased(sector: sector, in: flash, slot: 0) }
        try flash.program(bytes[...], at: FlashLayout.slotStart(0))
        for granule in 0..<(bytes.count / FlashLayout.granule) { try SlotTrailer.markDone(granule: granule, in: flash, slot: 0) }
        try SlotTrailer.markVerified(in: flash, slot: 0)
        try BootRecord.write(BootRecord(sequence: 0, active: 0, pending: nil, tried: false), in: flash)
        flash.clock = 0
    }
}
