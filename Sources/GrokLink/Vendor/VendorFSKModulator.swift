// The vendor modem's transmitter: phase-continuous sine FSK from a 512-entry table, UART
// framed (start bit 1, eight data bits MSB first, stop bit 0, no gap), idling on the "0" tone.

/// The sine table the vendor's transmitter reads: entry `i` is `trunc(32767 × sin(2π i / 512))`
/// (the library computes it at start-up), here scaled to -1...1.
let vendorSineTable: [Float] = (0..<512).map { i in
    Float(Int(32767 * _sin(2 * Double.pi * Double(i) / 512))) / 32767
}

@inline(__always)
private func _sin(_ x: Double) -> Double { vendorSin(x) }

/// Transmits tones and UART bytes the way the vendor's modem does.
///
/// The phase is a 25-bit accumulator: each sample adds the tone's increment, wraps at 2^25,
/// and plays table entry `phase >> 16`. Changing tone keeps the phase, so every switch (bit
/// to bit, tone to tone) is phase-continuous. Pure: no I/O, no clock but the samples it
/// renders.
public struct VendorFSKModulator: Sendable {
    /// What the transmitter plays when it has no byte to send.
    public enum Carrier: Sendable, Equatable {
        /// Exact zeros.
        case silence
        /// A steady tone (the handshake's tones).
        case tone(VendorTone)
        /// The data carrier of a setting: bytes when queued, else its "0" tone.
        case data(VendorModemSetting)
    }

    /// Peak amplitude in full-scale units (the vendor plays full scale, 1).
    public var amplitude: Float
    /// What is played now.
    public private(set) var carrier: Carrier = .silence
    private var phase: UInt32 = 0
    private var increment: UInt32 = 0
    private var queue: [UInt8] = []
    private var queueHead = 0
    /// The UART word being sent, bit 9 first (start 1, data MSB first, stop 0).
    private var word: UInt16 = 0
    private var bitsLeft = 0
    private var samplesLeftInBit = 0
    /// Bytes fully sent since creation.
    public private(set) var bytesSent = 0

    public init(amplitude: Float = 1) {
        self.amplitude = amplitude
    }

    /// Switches what is played when no byte is queued. Bytes still queued stay queued for a
    /// data carrier and are dropped otherwise.
    public mutating func setCarrier(_ carrier: Carrier) {
        self.carrier = carrier
        switch carrier {
        case .silence:
            increment = 0
            dropQueue()
        case .tone(let tone):
            increment = tone.phaseIncrement
            dropQueue()
        case .data(let setting):
            if samplesLeftInBit == 0 { increment = setting.zeroTone.phaseIncrement }
        }
    }

    /// Queues bytes after those already queued (only a data carrier sends them).
    public mutating func enqueue(_ bytes: [UInt8]) {
        guard case .data = carrier else { return }
        queue.append(contentsOf: bytes)
    }

    /// Whether a byte is queued or on the wire.
    public var isSending: Bool { samplesLeftInBit > 0 || queueHead < queue.count }

    /// Bytes queued and not yet started.
    public var queuedCount: Int { queue.count - queueHead }

    /// Drops every queued byte and the one on the wire (the line returns to idle at once).
    public mutating func dropQueue() {
        queue.removeAll(keepingCapacity: true)
        queueHead = 0
        bitsLeft = 0
        samplesLeftInBit = 0
        if case .data(let setting) = carrier { increment = setting.zeroTone.phaseIncrement }
    }

    /// Renders the next `output.count` samples.
    public mutating func render(into output: UnsafeMutableBufferPointer<Float>) {
        if case .silence = carrier {
            output.update(repeating: 0)
            return
        }
        let table = vendorSineTable
        let scale = amplitude
        var i = 0
        let n = output.count
        while i < n {
            var run = n - i
            if case .data(let setting) = carrier {
                if samplesLeftInBit == 0 { nextBit(setting) }
                if samplesLeftInBit > 0 { run = Swift.min(run, samplesLeftInBit) }
            }
            let inc = increment
            var p = phase
            for k in i..<(i + run) {
                p &+= inc
                if p >= VendorTone.phaseCycle { p -= VendorTone.phaseCycle }
                output[k] = table[Int(p >> 16)] * scale
            }
            phase = p
            if samplesLeftInBit > 0 {
                samplesLeftInBit -= run
                if samplesLeftInBit == 0 && bitsLeft == 0 { bytesSent += 1 }
            }
            i += run
        }
    }

    /// Moves to the next bit (or to idle) at a bit boundary.
    private mutating func nextBit(_ setting: VendorModemSetting) {
        if bitsLeft == 0 {
            if queueHead < queue.count {
                word = (UInt16(queue[queueHead]) | 0x100) << 1
                queueHead += 1
                if queueHead == queue.count {
                    queue.removeAll(keepingCapacity: true)
                    queueHead = 0
                }
                bitsLeft = 10
            } else {
                increment = setting.zeroTone.phaseIncrement
                samplesLeftInBit = 0
                return
            }
        }
        let one = word & 0x200 != 0
        word <<= 1
        bitsLeft -= 1
        increment = one ? setting.oneTone.phaseIncrement : setting.zeroTone.phaseIncrement
        samplesLeftInBit = setting.samplesPerBit
    }
}
