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
    /// Vendor `customCommandToTag`: sends `commandBits` bits of `command` to the tag
    /// (singulated as for any access) and waits `receiveTimeoutUsec` µs for its reply of
    /// `responseBitLengthNoHeaderBit` bits (a reply without header bit) or
    /// `responseBitLengthWithHeaderBit` bits (with one); exactly one of the two is non-zero,
    /// and both count the tag's handle and CRC. No reply in time is TAG_NOT_FOUND.
    public func customCommandToTag(_ epc: UgiEpc, command: [UInt8], commandBits: Int, responseBitLengthNoHeaderBit: Int,
                                   responseBitLengthWithHeaderBit: Int, receiveTimeoutUsec: Int) throws(ReaderError) -> UgiCustomCommandResult {
        guard (1...Int(CustomTagCommand.maxCommandBits)).contains(commandBits), command.count * 8 >= commandBits else {
            throw .invalidArgument(field: "commandBits", value: String(commandBits),
                                   allowed: "1 to \(CustomTagCommand.maxCommandBits), within the command's bytes")
        }
        let limit = Int(CustomTagCommand.maxResponseBits)
        guard (responseBitLengthNoHeaderBit == 0) != (responseBitLengthWithHeaderBit == 0),
              (0...limit).contains(responseBitLengthNoHeaderBit), (0...limit).contains(responseBitLengthWithHeaderBit) else {
            throw .invalidArgument(field: "response bit length",
                                   value: "\(responseBitLengthNoHeaderBit)/\(responseBitLengthWithHeaderBit)",
                                   allowed: "exactly one of the two non-zero, at most \(limit)")
        }
        let custom = CustomTagCommand(
            command: Array(command.prefix((commandBits + 7) / 8)), commandBits: UInt16(commandBits),
            responseBitsNoHeader: UInt16(responseBitLengthNoHeaderBit), responseBitsWithHeader: UInt16(responseBitLengthWithHeaderBit),
            receiveTimeoutMicroseconds: UInt32(clamping: max(0, receiveTimeoutUsec)))
        let answer = try tagAccess(epc, .custom(custom))
        guard answer.status == .ok else { return UgiCustomCommandResult(status: answer.status, data: [], bits: 0) }
        let bits = custom.dataBits
        var bytes: [UInt8] = []
        for word in answer.words { bytes.append(UInt8(word >> 8)); bytes.append(UInt8(word & 0xFF)) }
        return UgiCustomCommandResult(status: .ok, data: Array(bytes.prefix((bits + 7) / 8)), bits: bits)
    }

    /// Vendor `changePower`: the running inventory's power from now on (dBm): `initial`,
    /// varied within `min...max` when they differ. Values outside 0...the reader's
    /// `maxPower` or out of order are refused before anything is sent. Returns the vendor's
    /// result; the inventory resumed after a lost connection keeps the new power.
    public func changePower(initial: Double, min: Double, max: Double) throws(ReaderError) -> TagAccessStatus {
        let top = Double(info?.maxPowerTenthsDBm ?? Int16.max) / 10
        guard [initial, min, max].allSatisfy({ $0.isFinite && $0 >= 0 && $0 <= top }), min <= initial, initial <= max else {
            throw .invalidArgument(field: "power", value: "\(initial) (\(min)...\(max)) dBm",
                                   allowed: "min ≤ initial ≤ max within 0...\(top) dBm")
        }
        guard inventoryRunning else { throw .noInventoryRunning(port: port.name) }
        func tenths(_ dBm: Double) -> Int16 { Int16((dBm * 10).rounded()) }
        let range = PowerRange(initialTenthsDBm: tenths(initial), minTenthsDBm: tenths(min), maxTenthsDBm: tenths(max))
        let response = try call(.changePower(range))
        guard case .powerChanged(let status) = response else {
            throw .malformedResponse(port: port.name, detail: "changePower answered with \(response.opcode)")
        }
        if status == .ok {
            inventory?.initialPowerTenthsDBm = range.initialTenthsDBm
            inventory?.minPowerTenthsDBm = range.minTenthsDBm
            inventory?.maxPowerTenthsDBm = range.maxTenthsDBm
            log(.inventory, "power changed to \(initial) dBm (\(min)...\(max))")
        }
        return status
    }
}
