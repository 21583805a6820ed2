/// The radio settings of an inventory as the reader takes them: inventory-start bytes 11-21,
/// and configuration 0 (the reader's defaults) in the same order. Powers are power bytes
/// `(dBm - 5) * 10`; sensitivities are negated.
public struct VendorRadioSettings: Sendable, Hashable {
    public var initialQ: UInt8
    public var initialPower: UInt8
    public var minusSensitivity: UInt8
    public var session: UInt8
    public var writePower: UInt8
    public var minusWriteSensitivity: UInt8
    public var minQ: UInt8
    public var maxQ: UInt8
    /// Rounds with no finds after which the reader toggles A/B (0 = never).
    public var roundsToToggleAB: UInt8
    public var minPower: UInt8
    public var maxPower: UInt8

    public init(initialQ: UInt8, initialPower: UInt8, minusSensitivity: UInt8, session: UInt8, writePower: UInt8,
                minusWriteSensitivity: UInt8, minQ: UInt8, maxQ: UInt8, roundsToToggleAB: UInt8, minPower: UInt8,
                maxPower: UInt8) {
        self.initialQ = initialQ
        self.initialPower = initialPower
        self.minusSensitivity = minusSensitivity
        self.session = session
        self.writePower = writePower
        self.minusWriteSensitivity = minusWriteSensitivity
        self.minQ = minQ
        self.maxQ = maxQ
        self.roundsToToggleAB = roundsToToggleAB
        self.minPower = minPower
        self.maxPower = maxPower
    }

    static let byteCount = 11

    func write(_ w: inout VendorWriter) {
        for byte in [initialQ, initialPower, minusSensitivity, session, writePower, minusWriteSensitivity, minQ, maxQ,
                     roundsToToggleAB, minPower, maxPower] {
            w.u8(byte)
        }
    }

    static func read(_ r: inout VendorReader) throws(VendorCommandError) -> VendorRadioSettings {
        VendorRadioSettings(initialQ: try r.u8("radio.initialQ"), initialPower: try r.u8("radio.initialPower"),
                            minusSensitivity: try r.u8("radio.sensitivity"), session: try r.u8("radio.session"),
                            writePower: try r.u8("radio.writePower"),
                            minusWriteSensitivity: try r.u8("radio.writeSensitivity"), minQ: try r.u8("radio.minQ"),
                            maxQ: try r.u8("radio.maxQ"), roundsToToggleAB: try r.u8("radio.roundsToToggleAB"),
                            minPower: try r.u8("radio.minPower"), maxPower: try r.u8("radio.maxPower"))
    }
}

/// A Gen2 memory bank, as the vendor API numbers them.
public enum VendorMemoryBank: UInt8, Sendable, Hashable, CaseIterable {
    case reserved = 0
    case epc = 1
    case tid = 2
    case user = 3
}

/// A memory word the reader reads on every find (inventory bytes 22-23: `offset << 2 | bank`).
public struct VendorWordLocation: Sendable, Hashable {
    public var bank: VendorMemoryBank
    /// Word offset, 0...63.
    public var wordOffset: UInt8

    public init(bank: VendorMemoryBank, wordOffset: UInt8) throws(VendorCommandError) {
        try checkRange("perReadWord.wordOffset", Int(wordOffset), 0...63)
        self.bank = bank
        self.wordOffset = wordOffset
    }

    var byte: UInt8 { wordOffset << 2 | bank.rawValue }

    init(byte: UInt8) {
        bank = VendorMemoryBank(rawValue: byte & 3)!
        wordOffset = byte >> 2
    }
}

/// The select block of an inventory start.
public struct VendorSelect: Sendable, Hashable {
    /// The mask length in bits (1...256; the library skips the select block when it is 0).
    public var bitLength: UInt16
    /// The bit offset of the mask in `bank` (only in the full form).
    public var bitOffset: UInt16
    public var bank: VendorMemoryBank
    /// `(bitLength + 7) / 8` bytes.
    public var mask: [UInt8]

    /// The longest mask the vendor API takes (`MAX_RFID_CONFIGURATION_MASK_LENGTH_BYTES`).
    public static let maxMaskBytes = 32

    public init(bitLength: UInt16, bitOffset: UInt16, bank: VendorMemoryBank, mask: [UInt8]) throws(VendorCommandError) {
        try checkRange("select.bitLength", Int(bitLength), 1...(Self.maxMaskBytes * 8))
        guard mask.count == (Int(bitLength) + 7) / 8 else {
            throw .inconsistent(field: "select.mask bytes for bit length", declared: (Int(bitLength) + 7) / 8, actual: mask.count)
        }
        self.bitLength = bitLength
        self.bitOffset = bitOffset
        self.bank = bank
        self.mask = mask
    }
}

/// How the select block is laid out: by the reader's protocol (`CommandInventory` 0x14ba0).
public enum VendorSelectForm: Sendable, Hashable {
    /// Reader protocol 15 and later: `[bitLength LE16][bitOffset LE16][bank][mask]`.
    case full
    /// Below protocol 15: `[bitLength u8][mask]`; offset and bank are not sent (the reader
    /// uses its own: EPC bank presumably, from code only).
    case short

    public init(readerProtocol: Int) { self = readerProtocol < 15 ? .short : .full }
}

/// Inventory start (0x07): the vendor's configuration struct on the wire, 22 bytes (24 with
/// per-read words), then a select block or, without select, the EPCs the reader is to report
/// (`InventoryStart` 0x17f70-0x181e8 builds the list; `CommandInventory` appends it at 0x14c70).
/// Layout from `CommandInventory` (0x14890):
///
/// `[0]` flags: bits 0-2 sound type (0 if volume is 0), bit 3 report RSSI, bit 4 continual,
/// bit 5 report subsequent finds, bit 6 select present, bit 7 the function's second argument;
/// `[1]` 22 or 24; `[2]` volume level; `[3]` max rounds per second; `[4..6]` max TID, USER,
/// RESERVED bytes (<= 208); `[7..9]` their minimums (clamped to the maximums by the library);
/// `[10]` bit 0 detailed per-read data, bit 1 set LBT, bit 2 LBT, bit 3 per-read words;
/// `[11..21]` ``VendorRadioSettings``; `[22..23]` the per-read word locations.
public struct VendorInventoryStart: Sendable, Hashable {
    /// Flags bits 0-2: 0 none, 1 Geiger counter, 2 first find, 6 first find and last.
    public var soundType: UInt8
    public var reportRssi: Bool
    public var continual: Bool
    public var reportSubsequentFinds: Bool
    /// Flags bit 7: `CommandInventory`'s second argument. The AutoConfig/firmware path passes 1;
    /// `InventoryStart` passes 0 when the host "determines tag inclusion locally" (a list of
    /// EPCs to ignore, or a list of EPCs to find that does not go to the reader), else 1
    /// unless its pointer +0x118 is set (0x17ea3-0x17eb8; that pointer's meaning is not
    /// decoded). Read from the code; every capture (no list) has it set.
    public var flag7: Bool
    public var volumeLevel: UInt8
    public var maxRoundsPerSecond: UInt8
    public var maxTidBytes: UInt8
    public var maxUserBytes: UInt8
    public var maxReservedBytes: UInt8
    public var minTidBytes: UInt8
    public var minUserBytes: UInt8
    public var minReservedBytes: UInt8
    public var detailedPerReadData: Bool
    public var setListenBeforeTalk: Bool
    public var listenBeforeTalk: Bool
    public var radio: VendorRadioSettings
    /// The two per-read words (byte 22 and 23). The library sends the first twice when only
    /// one word is asked for.
    public var perReadWords: (first: VendorWordLocation, second: VendorWordLocation)?
    public var select: VendorSelect?
    /// The EPCs the reader is to report (vendor `startInventory...withEpcs:`), appended after
    /// the struct when there is no select block, each as `[length u8][EPC bytes]`
    /// (0x17fc0-0x17fdf); empty: every tag. At most ``maxEPCListBytes`` bytes in all.
    public var epcs: [[UInt8]]

    /// The largest memory-bank byte count (`RfidConfigurationGetInventoryLimits`: 0xd0).
    public static let maxMemoryBankBytes: UInt8 = 208
    /// The most bytes of EPC list (length bytes included) the vendor host sends: one more
    /// EPC would pass 0xe2 (0x17fb4), and it filters on the host instead. Seventeen 96-bit
    /// EPCs fit.
    public static let maxEPCListBytes = 226

    /// The list's size on the wire: a length byte and the bytes of each EPC.
    public static func listBytes(_ epcs: [[UInt8]]) -> Int { epcs.reduce(0) { $0 + 1 + $1.count } }

    public init(soundType: UInt8 = 0, reportRssi: Bool = false, continual: Bool = true, reportSubsequentFinds: Bool = false,
                flag7: Bool = true, volumeLevel: UInt8 = 0, maxRoundsPerSecond: UInt8 = 0, maxTidBytes: UInt8 = 0,
                maxUserBytes: UInt8 = 0, maxReservedBytes: UInt8 = 0, minTidBytes: UInt8 = 0, minUserBytes: UInt8 = 0,
                minReservedBytes: UInt8 = 0, detailedPerReadData: Bool = false, setListenBeforeTalk: Bool = false,
                listenBeforeTalk: Bool = false, radio: VendorRadioSettings,
                perReadWords: (first: VendorWordLocation, second: VendorWordLocation)? = nil,
                select: VendorSelect? = nil, epcs: [[UInt8]] = []) {
        self.soundType = soundType
        self.reportRssi = reportRssi
        self.continual = continual
        self.reportSubsequentFinds = reportSubsequentFinds
        self.flag7 = flag7
        self.volumeLevel = volumeLevel
        self.maxRoundsPerSecond = maxRoundsPerSecond
        self.maxTidBytes = maxTidBytes
        self.maxUserBytes = maxUserBytes
        self.maxReservedBytes = maxReservedBytes
        self.minTidBytes = minTidBytes
        self.minUserBytes = minUserBytes
        self.minReservedBytes = minReservedBytes
        self.detailedPerReadData = detailedPerReadData
        self.setListenBeforeTalk = setListenBeforeTalk
        self.listenBeforeTalk = listenBeforeTalk
        self.radio = radio
        self.perReadWords = perReadWords
        self.select = select
        self.epcs = epcs
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.soundType == b.soundType && a.reportRssi == b.reportRssi && a.continual == b.continual
            && a.reportSubsequentFinds == b.reportSubsequentFinds && a.flag7 == b.flag7 && a.volumeLevel == b.volumeLevel
            && a.maxRoundsPerSecond == b.maxRoundsPerSecond && a.maxTidBytes == b.maxTidBytes
            && a.maxUserBytes == b.maxUserBytes && a.maxReservedBytes == b.maxReservedBytes
            && a.minTidBytes == b.minTidBytes && a.minUserBytes == b.minUserBytes && a.minReservedBytes == b.minReservedBytes
            && a.detailedPerReadData == b.detailedPerReadData && a.setListenBeforeTalk == b.setListenBeforeTalk
            && a.listenBeforeTalk == b.listenBeforeTalk && a.radio == b.radio
            && a.perReadWords?.first == b.perReadWords?.first && a.perReadWords?.second == b.perReadWords?.second
            && a.select == b.select && a.epcs == b.epcs
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(soundType)
        hasher.combine(radio)
        hasher.combine(select)
        hasher.combine(epcs)
        hasher.combine(perReadWords?.first)
        hasher.combine(perReadWords?.second)
    }

    /// The header length byte: 22, or 24 with per-read words.
    public var headerLength: Int { perReadWords == nil ? 22 : 24 }

    public func encode(form: VendorSelectForm) throws(VendorCommandError) -> [UInt8] {
        try checkRange("inventory.soundType", Int(soundType), 0...7)
        for (name, value) in [("maxTidBytes", maxTidBytes), ("maxUserBytes", maxUserBytes), ("maxReservedBytes", maxReservedBytes)] {
            try checkRange("inventory." + name, Int(value), 0...Int(Self.maxMemoryBankBytes))
        }
        for (name, value, maximum) in [("minTidBytes", minTidBytes, maxTidBytes), ("minUserBytes", minUserBytes, maxUserBytes),
                                       ("minReservedBytes", minReservedBytes, maxReservedBytes)] {
            try checkRange("inventory." + name, Int(value), 0...Int(maximum))
        }
        var flags = soundType
        if reportRssi { flags |= 0x08 }
        if continual { flags |= 0x10 }
        if reportSubsequentFinds { flags |= 0x20 }
        if select != nil { flags |= 0x40 }
        if flag7 { flags |= 0x80 }
        var options: UInt8 = 0
        if detailedPerReadData { options |= 0x01 }
        if setListenBeforeTalk { options |= 0x02 }
        if listenBeforeTalk { options |= 0x04 }
        if perReadWords != nil { options |= 0x08 }
        var w = VendorWriter(capacity: 64)
        w.u8(flags)
        w.u8(UInt8(headerLength))
        w.u8(volumeLevel)
        w.u8(maxRoundsPerSecond)
        w.u8(maxTidBytes)
        w.u8(maxUserBytes)
        w.u8(maxReservedBytes)
        w.u8(minTidBytes)
        w.u8(minUserBytes)
        w.u8(minReservedBytes)
        w.u8(options)
        radio.write(&w)
        if let words = perReadWords {
            w.u8(words.first.byte)
            w.u8(words.second.byte)
        }
        if let select {
            guard epcs.isEmpty else {
                throw .inconsistent(field: "inventory EPC list beside a select block", declared: 0, actual: epcs.count)
            }
            switch form {
            case .full:
                w.u16(select.bitLength)
                w.u16(select.bitOffset)
                w.u8(select.bank.rawValue)
            case .short:
                guard select.bitLength <= 255 else {
                    throw .outOfRange(field: "select.bitLength (short form)", value: String(select.bitLength), allowed: "1...255")
                }
                guard select.bitOffset == 0, select.bank == .epc else {
                    throw .outOfRange(field: "select offset/bank (not carried below reader protocol 15)",
                                      value: "\(select.bitOffset)/\(select.bank)", allowed: "0/epc")
                }
                w.u8(UInt8(select.bitLength))
            }
            w.raw(select.mask)
        } else {
            let bytes = Self.listBytes(epcs)
            guard bytes <= Self.maxEPCListBytes else {
                throw .tooLong(field: "inventory EPC list", length: bytes, limit: Self.maxEPCListBytes)
            }
            for epc in epcs {
                guard (1...255).contains(epc.count) else {
                    throw .outOfRange(field: "inventory EPC length", value: String(epc.count), allowed: "1...255 bytes")
                }
                w.u8(UInt8(epc.count))
                w.raw(epc)
            }
        }
        guard w.bytes.count <= VendorWireLimits.maxPayloadBytes else {
            throw .tooLong(field: "inventory payload", length: w.bytes.count, limit: VendorWireLimits.maxPayloadBytes)
        }
        return w.bytes
    }

    public init(decoding payload: [UInt8], form: VendorSelectForm) throws(VendorCommandError) {
        var r = VendorReader(payload)
        let flags = try r.u8("inventory.flags")
        let length = try r.u8("inventory.length")
        guard length == 22 || length == 24 else {
            throw .unknownValue(field: "inventory.length", value: Int(length))
        }
        soundType = flags & 0x07
        reportRssi = flags & 0x08 != 0
        continual = flags & 0x10 != 0
        reportSubsequentFinds = flags & 0x20 != 0
        flag7 = flags & 0x80 != 0
        volumeLevel = try r.u8("inventory.volumeLevel")
        maxRoundsPerSecond = try r.u8("inventory.maxRoundsPerSecond")
        maxTidBytes = try r.u8("inventory.maxTidBytes")
        maxUserBytes = try r.u8("inventory.maxUserBytes")
        maxReservedBytes = try r.u8("inventory.maxReservedBytes")
        minTidBytes = try r.u8("inventory.minTidBytes")
        minUserBytes = try r.u8("inventory.minUserBytes")
        minReservedBytes = try r.u8("inventory.minReservedBytes")
        let options = try r.u8("inventory.options")
        guard options & 0xf0 == 0 else { throw .unknownValue(field: "inventory.options", value: Int(options)) }
        detailedPerReadData = options & 0x01 != 0
        setListenBeforeTalk = options & 0x02 != 0
        listenBeforeTalk = options & 0x04 != 0
        radio = try VendorRadioSettings.read(&r)
        let hasWords = options & 0x08 != 0
        guard hasWords == (length == 24) else {
            throw .inconsistent(field: "inventory.length (24 with per-read words)", declared: Int(length), actual: hasWords ? 24 : 22)
        }
        if hasWords {
            perReadWords = (VendorWordLocation(byte: try r.u8("inventory.perReadWord1")),
                            VendorWordLocation(byte: try r.u8("inventory.perReadWord2")))
        } else {
            perReadWords = nil
        }
        if flags & 0x40 != 0 {
            let bitLength: UInt16
            var bitOffset: UInt16 = 0
            var bank = VendorMemoryBank.epc
            switch form {
            case .full:
                bitLength = try r.u16("select.bitLength")
                bitOffset = try r.u16("select.bitOffset")
                let bankByte = try r.u8("select.bank")
                guard let value = VendorMemoryBank(rawValue: bankByte) else {
                    throw .unknownValue(field: "select.bank", value: Int(bankByte))
                }
                bank = value
            case .short:
                bitLength = UInt16(try r.u8("select.bitLength"))
            }
            try checkRange("select.bitLength", Int(bitLength), 1...(VendorSelect.maxMaskBytes * 8))
            let mask = try r.raw((Int(bitLength) + 7) / 8, "select.mask")
            select = try VendorSelect(bitLength: bitLength, bitOffset: bitOffset, bank: bank, mask: mask)
            epcs = []
            try r.finish("inventory select block")
        } else {
            select = nil
            var list: [[UInt8]] = []
            while !r.isAtEnd {
                let length = try r.u8("inventory EPC length")
                guard length > 0 else { throw .unknownValue(field: "inventory EPC length", value: 0) }
                list.append(try r.raw(Int(length), "inventory EPC"))
            }
            epcs = list
        }
        for (name, value) in [("maxTidBytes", maxTidBytes), ("maxUserBytes", maxUserBytes), ("maxReservedBytes", maxReservedBytes)] {
            try checkRange("inventory." + name, Int(value), 0...Int(Self.maxMemoryBankBytes))
        }
        // The library never sends a minimum above its maximum (it lowers it: 0x149fe).
        for (name, value, maximum) in [("minTidBytes", minTidBytes, maxTidBytes), ("minUserBytes", minUserBytes, maxUserBytes),
                                       ("minReservedBytes", minReservedBytes, maxReservedBytes)] {
            try checkRange("inventory." + name, Int(value), 0...Int(maximum))
        }
    }
}

/// The reader's one-byte error answer to an inventory start (the host asks for 1 byte back;
/// `0x12030`): any non-zero byte ends the inventory with that error code.
public struct VendorInventoryStartError: Sendable, Hashable {
    public var code: UInt8
    public init(code: UInt8) { self.code = code }
}
