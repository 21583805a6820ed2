/// What the vendor's packet layer needs from the modem below it: a byte pipe with a sample
/// clock. The modem (``VendorModem``) implements it; tests may use an in-memory pair.
///
/// Everything happens on one thread: the owner pumps audio through the modem, then lets the
/// packet layer look at the transport. Nothing here reads the wall clock.
public protocol VendorByteTransport: AnyObject {
    /// Samples processed so far: the clock every timeout is counted on.
    var now: Int64 { get }
    /// Frames per second of that clock.
    var sampleRate: Int { get }
    /// Samples per bit of the modem setting in use (10 bits a byte on the wire).
    var samplesPerBit: Int { get }
    /// Whether the handshake is done and bytes can flow.
    var isConnected: Bool { get }
    /// Whether bytes handed to ``send(_:)`` are still queued or on the wire.
    var isSending: Bool { get }
    /// Queues bytes to go out, UART-framed, right after what is already queued.
    func send(_ bytes: [UInt8])
    /// The bytes received since the last call, oldest first.
    func takeReceived() -> [UInt8]
}
