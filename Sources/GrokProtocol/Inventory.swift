/// How the emulated reader's radio runs an inventory: what the vendor's inventory start
/// (``VendorInventoryStart``) asks for, in the emulator's units. Powers are in 0.1 dBm.
public struct InventoryParameters: Sendable, Hashable {
    /// Listen before talk on (`true`) or off (`false`), where the region allows changing it
    /// (vendor `setListenBeforeTalk` + `listenBeforeTalk`); `nil`: the region's default.
    /// On the wire an optional last byte (1 off, 2 on), absent for `nil`, so older
    /// readers and hosts keep working.
    public var listenBeforeTalk: Bool?
    public var initialPowerTenthsDBm: Int16 = 300
    public var minPowerTenthsDBm: Int16 = 300
    public var maxPowerTenthsDBm: Int16 = 300
    public var initialQ: UInt8 = 4
    public var minQ: UInt8 = 0
    public var maxQ: UInt8 = 15
    /// Gen2 session 0...3.
    public var session: UInt8 = 0
    /// Empty rounds before the reader toggles its target A/B (0: never).
    public var roundsWithNoFindsToToggleAB: UInt8 = 4
    /// Reader sensitivity, 0.1 dBm.
    public var sensitivityTenthsDBm: Int16 = -800
    /// Transmit power and reader sensitivity while writing to a tag, 0.1 dBm.
    public var writePowerTenthsDBm: Int16 = 300
    public var writeSensitivityTenthsDBm: Int16 = -800
    /// Rounds per second at most (0: as fast as the air allows).
    public var maxRoundsPerSecond: UInt16 = 0
    /// Bytes of TID and USER to read with each find (0: none).
    public var tidBytes: UInt8 = 0
    public var userBytes: UInt8 = 0
    /// Bytes of RESERVED (kill and access passwords) to read with each find (0: none).
    public var reservedBytes: UInt8 = 0
    /// SELECT: only tags whose `bank` holds `mask` at `bitOffset` answer (empty mask: all).
    public var selectBank: UInt8 = 1
    public var selectBitOffset: UInt16 = 32
    public var selectBitLength: UInt16 = 0
    public var selectMask: [UInt8] = []
    /// Keep finding tags already found (false: each tag once per inventory).
    public var reportSubsequentFinds = true
    /// The vendor's sound type: 0 NONE, 1 GEIGER_COUNTER, 2 FIRST_FIND, 6 FIRST_FIND_AND_LAST.
    public var soundType: UInt8 = 0
    /// Speaker volume for this inventory, 0 (silent) to 255 (loudest).
    public var volume: UInt8 = 255
    /// EPCs the reader itself filters on (the inventory start's EPC list, vendor
    /// `startInventory...withEpcs` with a list that fits): it reports only these, sounds
    /// only for them, and with FIRST_FIND_AND_LAST plays the found-last sound once it has
    /// found them all. Empty: every tag.
    public var epcs: [[UInt8]] = []
    /// Words read with every read for the detailed per-read data (vendor
    /// `detailedPerReadNumReads` with its bank/word-offset pairs), at most
    /// ``maxDetailWords``; they arrive in ``TagReport/readData``.
    public var detailWords: [WordAddress] = []
    /// The most detail words per read (vendor: 2).
    public static let maxDetailWords = 2

    public init() {}

}

/// One word of tag memory: a bank and a word offset in it.
public struct WordAddress: Sendable, Hashable {
    public var bank: MemoryBank
    public var wordOffset: UInt16

    public init(bank: MemoryBank, wordOffset: UInt16) {
        self.bank = bank
        self.wordOffset = wordOffset
    }
}

/// One read of one tag, as the reader reports it (vendor detailed per-read data).
public struct TagReport: Sendable, Hashable {
    /// The EPC (4...62 bytes on the wire; the SDK checks 4...27).
    public var epc: [UInt8]
    /// The tag's protocol-control word.
    public var pc: UInt16
    /// Received signal strength, 0.1 dBm, in-phase and quadrature channels; nil when the
    /// reader sent none (the inventory did not ask for RSSI).
    public var rssiITenthsDBm: Int16?
    public var rssiQTenthsDBm: Int16?
    /// The channel it was read on, kHz.
    public var frequencyKHz: UInt32
    /// Milliseconds since the inventory started, on the reader's clock.
    public var milliseconds: UInt32
    /// TID and USER bytes read with the find, when asked for.
    public var tid: [UInt8]
    public var user: [UInt8]
    /// RESERVED bytes read with the find, when asked for.
    public var reserved: [UInt8]
    /// The detail words asked for (``InventoryParameters/detailWords``), in order, read
    /// with this very read (vendor `readData1`, `readData2`); it stops at the first word
    /// past the end of its bank.
    public var readData: [UInt16]

    public init(epc: [UInt8], pc: UInt16, rssiITenthsDBm: Int16?, rssiQTenthsDBm: Int16?, frequencyKHz: UInt32,
                milliseconds: UInt32, tid: [UInt8] = [], user: [UInt8] = [], reserved: [UInt8] = [], readData: [UInt16] = []) {
        self.readData = readData
        self.reserved = reserved
        self.epc = epc
        self.pc = pc
        self.rssiITenthsDBm = rssiITenthsDBm
        self.rssiQTenthsDBm = rssiQTenthsDBm
        self.frequencyKHz = frequencyKHz
        self.milliseconds = milliseconds
        self.tid = tid
        self.user = user
    }

    /// The read's RSSI, dBm: the stronger of the I and Q channels; nil when the reader sent
    /// none. The one RSSI figure grokctl shows and judges (inventory, locate, smoke test).
    public var rssiDBm: Double? {
        switch (rssiITenthsDBm, rssiQTenthsDBm) {
        case let (i?, q?): Double(max(i, q)) / 10
        case let (i?, nil): Double(i) / 10
        case let (nil, q?): Double(q) / 10
        case (nil, nil): nil
        }
    }
}

/// How an inventory ended, in the vendor's numbering (`UGI_INVENTORY_COMPLETED_*`).
public enum InventoryStopReason: UInt8, Sendable, Hashable, CaseIterable {
    case ok = 0
    case spiNotWorking = 1
    case enablePinNotWorking = 2
    case interruptPinNotWorking = 3
    case wrongChipVersion = 4
    case crystalNotStable = 5
    case pllNotLocked = 6
    case batteryTooLow = 7
    case temperatureTooHigh = 8
    case notProvisioned = 9
    case regionNotSet = 10
    case errorSending = 98
    case lostConnection = 99
}
