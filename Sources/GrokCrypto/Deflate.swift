import CZlib
import GrokBasics

/// CRC-32 (IEEE 802.3, the zlib and PNG one) through zlib.
public enum CRC32 {
    /// The CRC-32 of `bytes`, continuing from `crc` (0 to start).
    public static func checksum(_ bytes: [UInt8], continuing crc: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0, continuing: crc) }
    }

    /// The CRC-32 of `bytes`, continuing from `crc` (0 to start).
    public static func checksum(_ bytes: ArraySlice<UInt8>, continuing crc: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0, continuing: crc) }
    }

    /// The CRC-32 of `buffer`, continuing from `crc` (0 to start).
    public static func checksum(_ buffer: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        do {
            var value = UInt(crc)
            var rest = buffer
            // crc32 takes a 32-bit length; feed in pieces so any size works.
            while !rest.isEmpty {
                let count = min(rest.count, Int(UInt32.max >> 1))
                let start = rest.baseAddress!.assumingMemoryBound(to: Bytef.self)
                value = crc32(value, start, uInt(count))
                rest = UnsafeRawBufferPointer(rebasing: rest[count...])
            }
            return UInt32(truncatingIfNeeded: value)
        }
    }
}

/// How much a ``Deflater`` flushes after a piece.
public enum DeflateFlush: Sendable {
    /// Nothing forced: output comes when deflate has enough.
    case none
    /// Everything fed so far is decodable from the output (a sync point), and the history
    /// is kept so later pieces still compress against earlier ones.
    case sync
    /// The stream ends.
    case finish
}

/// A raw deflate stream (RFC 1951, no zlib header), fed piece by piece.
///
/// A preset dictionary lets a stream refer back to bytes the receiver already has (for
/// example the firmware a device runs now). Owns a `z_stream`; not thread-safe.
public final class Deflater {
    private var stream = z_stream()

    /// A compressor at `level` (0-9), primed with the last 32 KiB of `dictionary`.
    public init(level: Int32 = 9, dictionary: [UInt8] = []) throws(CryptoError) {
        let status = CZlib_deflateInit2(&stream, level, -15)
        guard status == Z_OK else { throw .zlib(function: "deflateInit2", status: status) }
        if !dictionary.isEmpty {
            let window = Array(dictionary.suffix(32 * 1024))
            let set = window.withUnsafeBufferPointer { deflateSetDictionary(&stream, $0.baseAddress, uInt($0.count)) }
            guard set == Z_OK else {
                deflateEnd(&stream)
                throw .zlib(function: "deflateSetDictionary", status: set)
            }
        }
    }

    deinit { deflateEnd(&stream) }

    /// Compresses `input` and returns the output that is ready, forcing it out by `flush`.
    public func compress(_ input: [UInt8], flush: DeflateFlush) throws(CryptoError) -> [UInt8] {
        let mode: Int32 = switch flush {
        case .none: Z_NO_FLUSH
        case .sync: Z_SYNC_FLUSH
        case .finish: Z_FINISH
        }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: max(1024, input.count / 2 + 64))
        var input = input
        let count = input.count
        var failure: Int32?
        input.withUnsafeMutableBufferPointer { inBuffer in
            stream.next_in = inBuffer.baseAddress
            stream.avail_in = uInt(count)
            while true {
                let produced: Int = chunk.withUnsafeMutableBufferPointer { outBuffer in
                    stream.next_out = outBuffer.baseAddress
                    stream.avail_out = uInt(outBuffer.count)
                    let status = deflate(&stream, mode)
                    if status != Z_OK && status != Z_STREAM_END && status != Z_BUF_ERROR { failure = status }
                    return outBuffer.count - Int(stream.avail_out)
                }
                output.append(contentsOf: chunk[0..<produced])
                // Done when deflate left room in the output buffer: nothing more is pending.
                if failure != nil || stream.avail_out != 0 { break }
            }
            stream.next_in = nil
        }
        if let failure { throw .zlib(function: "deflate", status: failure) }
        return output
    }

    /// The raw deflate form of `bytes` in one piece.
    public static func compress(_ bytes: [UInt8], level: Int32 = 9, dictionary: [UInt8] = []) throws(CryptoError) -> [UInt8] {
        try Deflater(level: level, dictionary: dictionary).compress(bytes, flush: .finish)
    }
}

@available(*, unavailable)
extension Deflater: Sendable {}

/// Decodes a raw deflate stream fed piece by piece, with a cap on the output.
public final class Inflater {
    private var stream = z_stream()
    private let limit: Int
    private var produced = 0
    /// Whether the stream's final block has been decoded.
    public private(set) var finished = false

    /// A decoder primed with the last 32 KiB of `dictionary` (the same the sender used),
    /// that refuses to produce more than `limit` bytes in total.
    public init(dictionary: [UInt8] = [], limit: Int) throws(CryptoError) {
        self.limit = limit
        let status = CZlib_inflateInit2(&stream, -15)
        guard status == Z_OK else { throw .zlib(function: "inflateInit2", status: status) }
        if !dictionary.isEmpty {
            let window = Array(dictionary.suffix(32 * 1024))
            let set = window.withUnsafeBufferPointer { inflateSetDictionary(&stream, $0.baseAddress, uInt($0.count)) }
            guard set == Z_OK else {
                inflateEnd(&stream)
                throw .zlib(function: "inflateSetDictionary", status: set)
            }
        }
    }

    deinit { inflateEnd(&stream) }

    /// Decodes `input` and returns every byte it yields.
    public func decompress(_ input: [UInt8]) throws(CryptoError) -> [UInt8] {
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: max(4096, input.count * 4))
        var input = input
        let count = input.count
        var failure: CryptoError?
        input.withUnsafeMutableBufferPointer { inBuffer in
            stream.next_in = inBuffer.baseAddress
            stream.avail_in = uInt(count)
            decoding: while !finished {
                let (status, made): (Int32, Int) = chunk.withUnsafeMutableBufferPointer { outBuffer in
                    stream.next_out = outBuffer.baseAddress
                    stream.avail_out = uInt(outBuffer.count)
                    let status = inflate(&stream, Z_NO_FLUSH)
                    return (status, outBuffer.count - Int(stream.avail_out))
                }
                produced += made
                if produced > limit {
                    failure = .outputLimitExceeded(limit: limit)
                    break decoding
                }
                output.append(contentsOf: chunk[0..<made])
                switch status {
                case Z_STREAM_END:
                    finished = true
                case Z_OK:
                    // A full output buffer may hide more output; otherwise stop when the
                    // input is used up.
                    if stream.avail_out != 0 && stream.avail_in == 0 { break decoding }
                case Z_BUF_ERROR:
                    break decoding  // no progress possible until more input comes
                case Z_DATA_ERROR, Z_NEED_DICT:
                    let detail = stream.msg.map { ErrorDetail("zlib_said", [String(cString: $0)]) } ?? ErrorDetail("zlib_status", [String(status)])
                    failure = .corruptStream(detail: detail)
                    break decoding
                default:
                    failure = .zlib(function: "inflate", status: status)
                    break decoding
                }
            }
            stream.next_in = nil
        }
        if let failure { throw failure }
        return output
    }

    /// The bytes of the raw deflate stream `bytes`, which must end within it.
    public static func decompress(_ bytes: [UInt8], dictionary: [UInt8] = [], limit: Int) throws(CryptoError) -> [UInt8] {
        let inflater = try Inflater(dictionary: dictionary, limit: limit)
        let output = try inflater.decompress(bytes)
        guard inflater.finished else { throw .corruptStream(detail: ErrorDetail("stream_truncated")) }
        return output
    }
}

@available(*, unavailable)
extension Inflater: Sendable {}
