#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where a ``Console`` writes: a file descriptor, or a buffer in tests.
public protocol OutputSink: AnyObject {
    /// Writes `text` as UTF-8, completely.
    func write(_ text: String)
}

/// Writes straight to a file descriptor with `write(2)`, retrying on `EINTR` and short
/// writes; stdout and stderr are unbuffered so messages on the two interleave in order.
public final class FileDescriptorSink: OutputSink, Sendable {
    /// The descriptor written to.
    public let fileDescriptor: Int32

    /// A sink for an open descriptor, which it does not own (nor close).
    public init(fileDescriptor: Int32) {
        self.fileDescriptor = fileDescriptor
    }

    /// Standard output.
    public static let standardOutput = FileDescriptorSink(fileDescriptor: 1)
    /// Standard error.
    public static let standardError = FileDescriptorSink(fileDescriptor: 2)

    public func write(_ text: String) {
        var bytes = Array(text.utf8)
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(fileDescriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0, errno == EINTR {
                    continue
                } else {
                    return  // EPIPE, a full disk, a closed descriptor: nobody is left to tell.
                }
            }
        }
    }
}

/// Keeps everything written, for tests.
public final class BufferSink: OutputSink {
    /// Everything written so far.
    public private(set) var text = ""

    /// An empty buffer.
    public init() {}

    public func write(_ text: String) {
        self.text += text
    }
}

@available(*, unavailable)
extension BufferSink: Sendable {}
