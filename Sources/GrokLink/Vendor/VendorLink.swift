import GrokAudio

/// Something that happened on a ``VendorLink``, oldest first: the modem's handshake and
/// carrier, and the packet layer's answers, requests and slave-mode changes.
public enum VendorLinkEvent: Sendable, Equatable {
    case modem(VendorModemEvent)
    case packet(PacketEvent)
}

/// One end of the vendor's audio link: the modem (``VendorModem``: handshake tones, FSK,
/// UART bytes) and the packet layer (``PacketEndpoint``: requests, responses, retries, slave
/// mode) pumped together, one audio block at a time.
///
/// Each ``process(input:output:)`` runs the modem over the block, then lets the packet layer
/// take the bytes that arrived and queue what it sends, so what it queues goes out from the
/// next block on. Like the vendor, the link counts every damaged packet against the modem
/// (more than four in about a second drop it back to the handshake), and a host whose
/// request failed all its tries starts the handshake over.
///
/// Pure: no I/O and no wall clock. Not thread-safe: one owner at a time (a ``LinkDriver``, a
/// simulated cable, or the emulated Grokker).
public final class VendorLink: SamplePump, CablePeer {
    public let modem: VendorModem
    public let packets: PacketEndpoint
    private var events: [VendorLinkEvent] = []

    /// One end of the link.
    /// - Parameters:
    ///   - role: host (workstation) or device (Grokker).
    ///   - sampleRate: 44100 or 48000.
    ///   - modem: the modem's tunables (the vendor's by default).
    ///   - timing: the packet layer's timing (the vendor host's by default).
    public init(role: VendorModemRole, sampleRate: Int, modem configuration: VendorModem.Configuration = .init(),
                timing: VendorPacketTiming = .vendorHost) throws(VendorModemError) {
        modem = try VendorModem(role: role, sampleRate: sampleRate, configuration: configuration)
        packets = PacketEndpoint(role: role == .host ? .host : .device, timing: timing)
    }

    public var role: VendorModemRole { modem.role }
    public var now: Int64 { modem.now }
    public var sampleRate: Int { modem.sampleRate }
    /// Whether the handshake is done and packets can flow.
    public var isConnected: Bool { modem.isConnected }
    /// The modem's samples per bit (the proposed one until connected).
    public var samplesPerBit: Int { modem.samplesPerBit }

    /// Host: starts listening for the reader's request tone and proposes `samplesPerBit`.
    public func open(samplesPerBit: Int = VendorModemSetting.defaultSamplesPerBit) throws(VendorModemError) {
        try modem.open(samplesPerBit: samplesPerBit)
    }

    /// Host: goes silent; a request in flight fails as the connection is lost.
    public func close() {
        modem.close()
        record(packets.poll(modem))
    }

    /// Device: starts sending the request tone (a reader switched on or plugged in).
    public func start() throws(VendorModemError) { try modem.start() }

    /// Device: goes silent (switched off, restarting).
    public func stop() {
        modem.stop()
        record(packets.poll(modem))
    }

    /// Queues a request (host normally, device in slave mode); its answer arrives as a
    /// ``PacketEvent/completed(_:_:)`` or ``PacketEvent/failed(_:_:)`` event.
    public func send(command: UInt8, payload: [UInt8] = [], extraTimeoutMs: Int = 0, retries: Bool = true,
                     slaveMode: VendorSlaveMode? = nil, endsSlaveMode: Bool = false) throws(VendorPacketError) {
        try packets.send(command: command, payload: payload, extraTimeoutMs: extraTimeoutMs, retries: retries,
                         slaveMode: slaveMode, endsSlaveMode: endsSlaveMode)
    }

    /// Events since the last call, oldest first.
    public func drainEvents() -> [VendorLinkEvent] {
        defer { events.removeAll(keepingCapacity: true) }
        return events
    }

    public func process(input: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>) {
        // The host hands a request queued since the last block to the modem before the
        // modem fills this block, so it goes on the air now, not one block later (a block
        // after every answer: 256 of the 640 samples measured from an ACK's end to the next
        // chunk). The device keeps its own timing: the emulated unit's turnaround is the model's.
        if role == .host { record(packets.poll(modem)) }
        modem.process(input: input, output: output)
        for event in modem.drainEvents() { events.append(.modem(event)) }
        record(packets.poll(modem))
    }

    private func record(_ packetEvents: [PacketEvent]) {
        var restart = false
        for event in packetEvents {
            events.append(.packet(event))
            switch event {
            case .fault:
                modem.countError()
            case .failed(_, .retriesExhausted) where role == .host:
                restart = true
            default:
                break
            }
        }
        // The vendor host resets the link after a request failed all its tries: silence,
        // then the handshake again at the same setting.
        if restart, modem.state != .closed {
            let spb = modem.proposedSamplesPerBit
            modem.close()
            try? modem.open(samplesPerBit: spb)
            for event in modem.drainEvents() { events.append(.modem(event)) }
        }
    }
}
