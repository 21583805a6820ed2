/// A reversible transform that makes x86 machine code compress better: the 32-bit
/// displacement of each near `CALL` (E8) and `JMP` (E9) becomes the absolute target, so
/// calls to one function from many places carry the same bytes.
///
/// Only displacements whose top byte is 00 or FF (targets within ±16 MiB) are changed,
/// and the result keeps that property, so the decoder recognises exactly the operands the
/// encoder changed. After an E8 or E9 byte the scan skips its 4 operand bytes whether it
/// changed them or not, so later changes never touch bytes an earlier decision read. A
/// run is filtered on its own (an instruction that would cross its end is left alone), and
/// positions are image offsets. Firmware uploads filter in 4 KiB pages aligned to the image
/// start (``encodePages(_:position:)``), so any page can be decoded on its own.
public enum BranchFilter {
    /// The page size of ``encodePages(_:position:)``.
    public static let pageSize = 4096

    /// Filters `bytes` (at image offset `position`, a multiple of ``pageSize``) page by page.
    public static func encodePages(_ bytes: inout [UInt8], position: UInt32) {
        pages(&bytes, position: position, forward: true)
    }

    /// Undoes ``encodePages(_:position:)``.
    public static func decodePages(_ bytes: inout [UInt8], position: UInt32) {
        pages(&bytes, position: position, forward: false)
    }

    private static func pages(_ bytes: inout [UInt8], position: UInt32, forward: Bool) {
        precondition(position % UInt32(pageSize) == 0, "BranchFilter pages start at multiples of \(pageSize)")
        var start = 0
        while start < bytes.count {
            let end = min(start + pageSize, bytes.count)
            var page = Array(bytes[start..<end])
            transform(&page, position: position + UInt32(start), forward: forward)
            bytes.replaceSubrange(start..<end, with: page)
            start = end
        }
    }

    private static let mask: UInt32 = 0x01FF_FFFF

    /// Makes the near branches in `bytes` (which sit at image offset `position`) absolute.
    public static func encode(_ bytes: inout [UInt8], position: UInt32) {
        transform(&bytes, position: position, forward: true)
    }

    /// Undoes ``encode(_:position:)``.
    public static func decode(_ bytes: inout [UInt8], position: UInt32) {
        transform(&bytes, position: position, forward: false)
    }

    private static func transform(_ bytes: inout [UInt8], position: UInt32, forward: Bool) {
        let count = bytes.count
        var i = 0
        bytes.withUnsafeMutableBufferPointer { b in
            while i + 5 <= count {
                let opcode = b[i]
                guard opcode == 0xE8 || opcode == 0xE9 else {
                    i += 1
                    continue
                }
                let top = b[i + 4]
                if top == 0x00 || top == 0xFF {
                    let value = UInt32(b[i + 1]) | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3]) << 16 | UInt32(top) << 24
                    let next = position &+ UInt32(i + 5)
                    let low = forward ? (value &+ next) & mask : (value &- next) & mask
                    let result = low & 0x0100_0000 != 0 ? low | 0xFE00_0000 : low
                    b[i + 1] = UInt8(truncatingIfNeeded: result)
                    b[i + 2] = UInt8(truncatingIfNeeded: result >> 8)
                    b[i + 3] = UInt8(truncatingIfNeeded: result >> 16)
                    b[i + 4] = UInt8(truncatingIfNeeded: result >> 24)
                }
                i += 5
            }
        }
    }
}
