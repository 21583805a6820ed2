/// Air-interface timing of the Gen2 link (EPC Gen2 v2, 6.3.1), used to give each inventory
/// round its duration.
///
/// The default, ``denseReaderM4``, is the dense-reader profile most handheld readers use:
/// Tari 25 µs with data-1 = 2 Tari (RTcal 75 µs), DR = 64/3 and BLF 250 kHz (TRcal
/// 85.3 µs), Miller M = 4 without pilot tone (62.5 kbit/s from the tag), T2 = 10 tag
/// periods, T3 = 25 µs. Reader commands are timed at the average of a data-0 and a data-1
/// symbol.
public struct Gen2LinkTiming: Sendable, Hashable {
    /// Reader data-0 symbol length, µs (6.25...25).
    public var tariMicroseconds: Double
    /// Data-1 length in Tari (1.5...2).
    public var data1Tari: Double
    /// Backscatter link frequency, kHz.
    public var blfKHz: Double
    /// Miller subcarrier cycles per bit: 1 (FM0), 2, 4 or 8.
    public var millerM: Int
    /// Extended (pilot-tone) preamble.
    public var trExt: Bool
    /// T2 (tag reply to next reader command), in tag periods (3...20).
    public var t2Periods: Double
    /// T3 (extra wait before deciding a slot is empty), µs.
    public var t3Microseconds: Double

    /// Creates a timing.
    public init(
        tariMicroseconds: Double, data1Tari: Double, blfKHz: Double, millerM: Int, trExt: Bool,
        t2Periods: Double, t3Microseconds: Double
    ) {
        self.tariMicroseconds = tariMicroseconds
        self.data1Tari = data1Tari
        self.blfKHz = blfKHz
        self.millerM = millerM
        self.trExt = trExt
        self.t2Periods = t2Periods
        self.t3Microseconds = t3Microseconds
    }

    /// Tari 25 µs, BLF 250 kHz, Miller 4 (see the type's description).
    public static let denseReaderM4 = Gen2LinkTiming(
        tariMicroseconds: 25, data1Tari: 2, blfKHz: 250, millerM: 4, trExt: false, t2Periods: 10, t3Microseconds: 25)

    // MARK: Derived times, seconds

    private var tari: Double { tariMicroseconds * 1e-6 }
    /// RTcal = data-0 + data-1.
    var rtcal: Double { tari * (1 + data1Tari) }
    /// Tag period (1 / BLF).
    var tpri: Double { 1 / (blfKHz * 1e3) }
    /// TRcal = DR / BLF with DR = 64/3.
    var trcal: Double { 64.0 / 3.0 * tpri }
    /// T1: tag reply after a command, max(RTcal, 10 Tpri).
    var t1: Double { max(rtcal, 10 * tpri) }
    var t2: Double { t2Periods * tpri }
    var t3: Double { t3Microseconds * 1e-6 }
    /// T4: minimum wait after a Select, 2 RTcal.
    var t4: Double { 2 * rtcal }
    private static let delimiter = 12.5e-6

    /// A reader command of `bits`, with the full preamble (Query) or a frame-sync.
    func command(bits: Int, preamble: Bool) -> Double {
        let start = Self.delimiter + tari + rtcal + (preamble ? trcal : 0)
        return start + Double(bits) * tari * (1 + data1Tari) / 2
    }

    /// A tag reply of `bits` (preamble and the trailing dummy 1 included).
    func reply(bits: Int) -> Double {
        let preambleBits = millerM == 1 ? (trExt ? 18 : 6) : (trExt ? 22 : 10)
        return Double(preambleBits + bits + 1) * Double(millerM) * tpri
    }

    /// Command lengths in bits (8-bit EBVs).
    enum Bits {
        static let query = 22
        static let queryRep = 4
        static let queryAdjust = 9
        static let ack = 18
        static let reqRN = 40
        static let read = 58
        static func select(maskBits: Int) -> Int { 45 + maskBits }
    }

    /// A slot where no tag answers.
    func emptySlot(command: Double) -> Double {
        command + t1 + t3
    }

    /// A slot where RN16s collide (the reader gives up after the garbled RN16).
    func collidedSlot(command: Double) -> Double {
        command + t1 + reply(bits: 16) + t2
    }

    /// A slot where one tag is singulated: RN16, ACK, PC+EPC+CRC, then for each bank read a
    /// Req_RN and a Read. Returns the time the EPC is in and the slot's whole length.
    func singleSlot(command: Double, epcWords: Int, bankReads: [Int]) -> (epcDone: Double, total: Double) {
        var t = command + t1 + reply(bits: 16) + t2
        t += self.command(bits: Bits.ack, preamble: false) + t1 + reply(bits: 16 * (epcWords + 2))
        let epcDone = t
        t += t2
        for words in bankReads {
            t += self.command(bits: Bits.reqRN, preamble: false) + t1 + reply(bits: 32) + t2
            t += self.command(bits: Bits.read, preamble: false) + t1 + reply(bits: 1 + 16 * words + 32) + t2
        }
        return (epcDone, t)
    }
}
