import GrokCrypto

/// Vendor `UgiUtil`: hex text for bytes and back (upper-case out, either case in).
public enum UgiUtil {
    /// Vendor `dataToString:`: upper-case hex, two digits a byte.
    public static func dataToString(_ data: some Sequence<UInt8>) -> String { Hex.encode(data, uppercase: true) }

    /// Vendor `bytesToString:length:`: the first `length` bytes (at most all of them) as
    /// upper-case hex.
    public static func bytesToString(_ bytes: [UInt8], length: Int) -> String {
        Hex.encode(bytes.prefix(max(0, length)), uppercase: true)
    }

    /// Vendor `stringToData:`: the bytes of an even number of hex digits; `nil` for
    /// anything else (odd length, a character that is not a hex digit).
    public static func stringToData(_ string: String) -> [UInt8]? { Hex.decode(string) }

    /// Vendor `stringToBytes:toBuffer:bufferSize:`: decodes into `buffer` (replacing its
    /// contents) at most `bufferSize` bytes and returns how many; 0 when `string` is not hex.
    @discardableResult
    public static func stringToBytes(_ string: String, toBuffer buffer: inout [UInt8], bufferSize: Int) -> Int {
        guard let bytes = Hex.decode(string) else {
            buffer = []
            return 0
        }
        buffer = Array(bytes.prefix(max(0, bufferSize)))
        return buffer.count
    }
}
