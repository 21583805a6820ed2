import GrokCrypto
import GrokProtocol

/// How the emulated Grokker lays out its flash, and what its loader keeps there: two
/// application slots, each with a trailer sector describing the image it holds, and two
/// boot-record sectors written alternately so a power cut while one is written leaves the
/// other (docs/flashing.md, "The device's flash").
///
/// | sectors | what |
/// |---|---|
/// | 0, 1 | boot records (newest valid one wins) |
/// | 2 ... 34 | slot 0: 32 sectors of image, then its trailer |
/// | 35 ... 67 | slot 1: the same |
struct FlashLayout {
    static let sector = FlashMemory.sectorSize
    /// Image sectors per slot.
    static let imageSectors = 32
    /// Bytes of image a slot takes.
    static let slotCapacity = imageSectors * sector
    /// Granularity of upload progress: bytes per bit of the trailer's done map.
    static let granule = 256
    static let slotCount = 2
    static let totalSize = (2 + slotCount * (imageSectors + 1)) * sector

    static func slotStart(_ slot: Int) -> Int { (2 + slot * (imageSectors + 1)) * sector }
    static func trailerStart(_ slot: Int) -> Int { slotStart(slot) + imageSectors * sector }
    static func bootRecordStart(_ copy: Int) -> Int { copy * sector }

    // Trailer fields (offsets within the trailer sector).
    static let trailerMagic: [UInt8] = Array("GTRL".utf8)
    static let descriptorOffset = 4
    static let erasedMapOffset = 64        // 32 bits: bit k cleared once image sector k is erased
    static let doneMapOffset = 128         // 512 bits: bit g cleared once granule g is written
    static let verifiedOffset = 256        // 4 bytes: 00000000 once the image is verified
}

/// What a slot's trailer says.
struct SlotTrailer: Equatable {
    var image: ImageDescriptor
    /// Image sectors erased since this upload began.
    var erased: [Bool]
    /// Granules written, from the start of the image.
    var done: [Bool]
    var verified: Bool

    /// Image bytes held from the start: the leading written granules.
    var heldBytes: Int {
        let leading = done.firstIndex(of: false) ?? done.count
        return min(leading * FlashLayout.granule, Int(image.length))
    }

    static func read(from flash: FlashMemory, slot: Int) -> SlotTrailer? {
        let start = FlashLayout.trailerStart(slot)
        guard flash.read(start..<(start + 4)) == FlashLayout.trailerMagic else { return nil }
        let descriptorStart = start + FlashLayout.descriptorOffset
        guard let image = ImageDescriptor(bytes: flash.read(descriptorStart..<(descriptorStart + ImageDescriptor.wireSize))),
              Int(image.length) <= FlashLayout.slotCapacity
        else { return nil }
        func bits(_ offset: Int, _ count: Int) -> [Bool] {
            let raw = flash.read((start + offset)..<(start + offset + (count + 7) / 8))
            return (0..<count).map { raw[$0 / 8] & (1 << ($0 % 8)) == 0 }
        }
        let verifiedStart = start + FlashLayout.verifiedOffset
        return SlotTrailer(
            image: image, erased: bits(FlashLayout.erasedMapOffset, FlashLayout.imageSectors),
            done: bits(FlashLayout.doneMapOffset, FlashLayout.slotCapacity / FlashLayout.granule),
            verified: flash.read(verifiedStart..<(verifiedStart + 4)) == [0, 0, 0, 0])
    }

    /// Starts a slot over for `image`: erases the trailer and writes the descriptor.
    static func begin(_ image: ImageDescriptor, in flash: FlashMemory, slot: Int) throws(FlashMemory.Fault) {
        let start = FlashLayout.trailerStart(slot)
        try flash.eraseSector(at: start)
        // The descriptor goes first and the magic last: a trailer is valid only once whole.
        try flash.program(image.bytes[...], at: start + FlashLayout.descriptorOffset)
        try flash.program(FlashLayout.trailerMagic[...], at: start)
    }

    static func markErased(sector: Int, in flash: FlashMemory, slot: Int) throws(FlashMemory.Fault) {
        try clearBit(sector, mapOffset: FlashLayout.erasedMapOffset, flash: flash, slot: slot)
    }

    static func markDone(granule: Int, in flash: FlashMemory, slot: Int) throws(FlashMemory.Fault) {
        try clearBit(granule, mapOffset: FlashLayout.doneMapOffset, flash: flash, slot: slot)
    }

    static func markVerified(in flash: FlashMemory, slot: Int) throws(FlashMemory.Fault) {
        try flash.program([0, 0, 0, 0][...], at: FlashLayout.trailerStart(slot) + FlashLayout.verifiedOffset)
    }

    private static func clearBit(_ bit: Int, mapOffset: Int, flash: FlashMemory, slot: Int) throws(FlashMemory.Fault) {
        let at = FlashLayout.trailerStart(slot) + mapOffset + bit / 8
        try flash.program([~UInt8(1 << (bit % 8))][...], at: at)
    }
}

/// The loader's boot record: which slot runs, and which one is on trial.
struct BootRecord: Equatable {
    var sequence: UInt32
    var active: Int
    /// The slot booted on trial, waiting for the host's confirmation.
    var pending: Int?
    /// The trial slot has been booted once already (a second boot without confirmation
    /// means it failed: the loader goes back to ``active``).
    var tried: Bool

    static let magic: [UInt8] = Array("GBOT".utf8)
    static let size = 4 + 4 + 3 + 4

    var bytes: [UInt8] {
        var out = Self.magic
        out += withUnsafeBytes(of: sequence.littleEndian, Array.init)
        out += [UInt8(active), UInt8(pending ?? 0xFF), tried ? 1 : 0]
        out += withUnsafeBytes(of: CRC32.checksum(out).littleEndian, Array.init)
        return out
    }

    init(sequence: UInt32, active: Int, pending: Int?, tried: Bool) {
        self.sequence = sequence
        self.active = active
        self.pending = pending
        self.tried = tried
    }

    init?(bytes: [UInt8]) {
        guard bytes.count == Self.size, Array(bytes[0..<4]) == Self.magic else { return nil }
        let crc = bytes[11..<15].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard CRC32.checksum(Array(bytes[0..<11])) == crc else { return nil }
        sequence = bytes[4..<8].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard Int(bytes[8]) < FlashLayout.slotCount else { return nil }
        active = Int(bytes[8])
        pending = bytes[9] == 0xFF ? nil : Int(bytes[9])
        if let pending, pending >= FlashLayout.slotCount { return nil }
        tried = bytes[10] != 0
    }

    /// The newest valid record, and the copy it is in.
    static func newest(in flash: FlashMemory) -> (record: BootRecord, copy: Int)? {
        var best: (BootRecord, Int)?
        for copy in 0..<2 {
            let start = FlashLayout.bootRecordStart(copy)
            if let record = BootRecord(bytes: flash.read(start..<(start + size))), record.sequence > (best?.0.sequence ?? 0) {
                best = (record, copy)
            }
        }
        return best
    }

    /// Writes `record` (its sequence one past the newest) into the copy not holding the
    /// newest, so the newest survives a power cut during the write.
    static func write(_ record: BootRecord, in flash: FlashMemory) throws(FlashMemory.Fault) {
        let current = newest(in: flash)
        var next = record
        next.sequence = (current?.record.sequence ?? 0) + 1
        let copy = current.map { 1 - $0.copy } ?? 0
        let start = FlashLayout.bootRecordStart(copy)
        try flash.eraseSector(at: start)
        try flash.program(next.bytes[...], at: start)
    }
}
