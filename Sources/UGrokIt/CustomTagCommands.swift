import GrokAudio
import GrokLink
import GrokProtocol

/// The answer to a custom command (vendor `customCommandToTag` completion): the result
/// and the reply's data bits (without header bit, handle and CRC), MSB first.
public struct UgiCustomCommandResult: Sendable, Hashable {
    public var status: TagAccessStatus
    /// The data, `(bits + 7) / 8` bytes, the last one padded with zeros.
    public var data: [UInt8]
    /// How many bits of `data` the tag sent.
    public var bits: Int
}

extension ReaderSession {
    /// The longest custom command, bits: what fits a tag-access request beside a 62-byte EPC.
    public static let maxCustomCommandBits = 1024

    /// Vendor `customCommandToTag`: sends `commandBits` bits of `command` to the tag (during
    /// an inventory, in the answer to the reader's next packet) and waits for the reader's
    /// result. The vendor request carries each response length in one byte (at most 255
    /// bits) and the receive timeout in 16 bits; exactly one of the two lengths is non-zero.
    /// The reply's data are the bytes the reader returned.
    public func customCommandToTag(_ epc: UgiEpc, command: [UInt8], commandBits: Int, responseBitLengthNoHeaderBit: Int,
                                   responseBitLengthWithHeaderBit: Int, receiveTimeoutUsec: Int) throws(ReaderError) -> UgiCustomCommandResult {
        guard (1...Self.maxCustomCommandBits).contains(commandBits), command.count * 8 >= commandBits else {
            throw .invalidArgument(field: "commandBits", value: String(commandBits),
                                   allowed: "1 to \(Self.maxCustomCommandBits), within the command's bytes")
        }
        guard (responseBitLengthNoHeaderBit == 0) != (responseBitLengthWithHeaderBit == 0),
              (0...255).contains(responseBitLengthNoHeaderBit), (0...255).contains(responseBitLengthWithHeaderBit) else {
            throw .invalidArgument(field: "response bit length",
                                   value: "\(responseBitLengthNoHeaderBit)/\(responseBitLengthWithHeaderBit)",
                                   allowed: "exactly one of the two non-zero, at most 255 (one byte on the vendor wire)")
        }
        guard (0...0xFFFF).contains(receiveTimeoutUsec) else {
            throw .invalidArgument(field: "receiveTimeoutUsec", value: String(receiveTimeoutUsec), allowed: "0 to 65535")
        }
        let answer = try customCommand(epc, command: Array(command.prefix((commandBits + 7) / 8)), commandBits: commandBits,
                                       responseBitsNoHeader: responseBitLengthNoHeaderBit,
                                       responseBitsWithHeader: responseBitLengthWithHeaderBit, receiveTimeoutUsec: receiveTimeoutUsec)
        let status = Self.status(answer.result)
        guard status == .ok else { return UgiCustomCommandResult(status: status, data: [], bits: 0) }
        return UgiCustomCommandResult(status: .ok, data: answer.data, bits: answer.data.count * 8)
    }

    /// Vendor `changePower`: the running inventory's power from now on (dBm): `initial`,
    /// varied within `min...max` when they differ. Values outside 0...the reader's
    /// `maxPower` or out of order are refused before anything is sent. The reader answers
    /// nothing for it (docs/vendor-protocol.md, "change power"): OK means it was sent.
    @discardableResult
    public func changePower(initial: Double, min: Double, max: Double) throws(ReaderError) -> TagAccessStatus {
        let top = Double(info?.maxPowerTenthsDBm ?? 300) / 10
        guard [initial, min, max].allSatisfy({ $0.isFinite && $0 >= 0 && $0 <= top }), min <= initial, initial <= max else {
            throw .invalidArgument(field: "power", value: "\(initial) (\(min)...\(max)) dBm",
                                   allowed: "min ≤ initial ≤ max within 0...\(top) dBm")
        }
        guard inventoryRunning else { throw .noInventoryRunning(port: port.name) }
        let bytes: (UInt8, UInt8, UInt8)
        do {
            bytes = (try VendorUnits.powerByte(dBm: initial, field: "initial"), try VendorUnits.powerByte(dBm: min, field: "min"),
                     try VendorUnits.powerByte(dBm: max, field: "max"))
        } catch {
            throw ReaderError(error)
        }
        let outcome = try tagAccess(.changePower(initial: bytes.0, min: bytes.1, max: bytes.2))
        log(.inventory, "power changed to \(initial) dBm (\(min)...\(max))")
        return Self.status(outcome.result)
    }

    /// A raw custom tag access as the vendor sends it; the result and the tag's reply.
    func customCommand(_ epc: UgiEpc, command: [UInt8], commandBits: Int, responseBitsNoHeader: Int,
                       responseBitsWithHeader: Int, receiveTimeoutUsec: Int) throws(ReaderError) -> (result: UInt8, data: [UInt8]) {
        let o = try tagAccess(.custom(epc: epc.bytes, receiveTimeout: UInt16(clamping: receiveTimeoutUsec),
                                      commandBits: UInt16(clamping: commandBits),
                                      responseBitsNoHeader: UInt8(clamping: responseBitsNoHeader),
                                      responseBitsWithHeader: UInt8(clamping: responseBitsWithHeader), command: command))
        return (o.result, o.data)
    }
}
