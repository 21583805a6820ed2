/// HMAC-SHA256 (RFC 2104, FIPS 198-1) over this module's SHA-256: a message authentication
/// code only a holder of `key` can make.
public enum HMACSHA256 {
    /// SHA-256's block size in bytes.
    static let blockSize = 64

    /// The 32-byte code of `message` under `key` (a key longer than the block is hashed first).
    public static func code(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var block = key.count > blockSize ? SHA256.hash(key).bytes : key
        block += [UInt8](repeating: 0, count: blockSize - block.count)
        let inner = SHA256.hash(block.map { $0 ^ 0x36 } + message).bytes
        return SHA256.hash(block.map { $0 ^ 0x5c } + inner).bytes
    }

    /// Whether `code` is `message`'s code under `key`, compared in time that does not depend
    /// on where the bytes differ.
    public static func isValid(_ code: [UInt8], key: [UInt8], message: [UInt8]) -> Bool {
        let expected = Self.code(key: key, message: message)
        guard code.count == expected.count else { return false }
        var difference: UInt8 = 0
        for (a, b) in zip(code, expected) { difference |= a ^ b }
        return difference == 0
    }
}
