import GrokLink
import UGrokIt

/// `grokctl info`: connects to each Grokker at once (the fleet's fan-out, one thread per
/// port) and tells what each one is, with the host's link counters for the session.
public struct InfoJob: Sendable {
    public var access: DeviceAccess

    public init(access: DeviceAccess) {
        self.access = access
    }

    /// What one Grokker said about itself.
    public struct Identity: Sendable, Hashable {
        /// Its GetVersion answer.
        public var info: ReaderInfo
        /// The negotiated bit rate (bits per second), read while connected.
        public var linkBitRate: Double
        /// The setting it was reached at: samples per bit and sample rate.
        public var samplesPerBit: Int
        public var sampleRate: Int
        /// Where the setting came from: stored, or AutoConfig now.
        public var settingSource: LinkSetup.Source
        /// Audio from the first handshake to connected at the setting (AutoConfig's echoes
        /// included), in milliseconds.
        public var setupMilliseconds: Double
        /// How long the handshake and GetVersion took, in milliseconds of audio.
        public var connectMilliseconds: Double
        /// Whether the unit runs its loader (software type 1): an update stopped mid-way, not
        /// finished; GetVersion's version is then the loader's, not an application's.
        public var inLoader = false
    }

    /// One device's answer; ``link`` is set whenever a session was opened, even when it failed.
    public struct Result: Sendable {
        public var device: DeviceSpec
        public var outcome: Swift.Result<Identity, any Error>
        public var link: LinkCounters?

        public var identity: Identity? { try? outcome.get() }
        public var error: (any Error)? {
            if case .failure(let error) = outcome { error } else { nil }
        }
    }

    /// Queries every device concurrently and returns the results in the order given.
    public func run(_ devices: [DeviceSpec]) -> [Result] {
        FleetRunner.each(devices) { query($0) }
    }

    /// Queries one device on the calling thread.
    public func query(_ spec: DeviceSpec) -> Result {
        var session: ReaderSession?
        do {
            let opened = try access.session(spec)
            session = opened
            let started = opened.elapsedMilliseconds
            let setup = try access.connect(opened, spec)
            let setupMilliseconds = opened.elapsedMilliseconds - started
            let info = setup.info
            // Read while connected (close() forgets the GetVersion answer).
            let inLoader = opened.version?.software == .loader
            // The negotiated bit rate, read while connected (close() drops the connection).
            let bitRate = Double(opened.link.sampleRate) / Double(max(1, opened.link.samplesPerBit))
            // Close before reading the counters, so they cover the session to its end.
            opened.close()
            session = nil
            return Result(device: spec,
                          outcome: .success(Identity(info: info, linkBitRate: bitRate, samplesPerBit: setup.samplesPerBit,
                                                     sampleRate: setup.sampleRate, settingSource: setup.source, setupMilliseconds: setupMilliseconds,
                                                     connectMilliseconds: opened.connectMilliseconds ?? 0, inLoader: inLoader)),
                          link: LinkCounters(opened))
        } catch {
            session?.close()
            return Result(device: spec, outcome: .failure(error), link: session.map(LinkCounters.init))
        }
    }
}

/// The host's link counters of one session, read after ``ReaderSession/close()`` so they
/// cover the session to its end (`info --json`):
/// - packetsSent: requests handed to the line (a request and its resends count once);
///   retries: the resends; timeouts: the tries that got no answer in time.
/// - packetsReceived: valid responses, plus the reader's own requests (slave mode).
/// - bytesSent / bytesReceived: bytes the modem put on / took off the line while connected.
/// - crcMismatches: packets whose crc8 did not match; internalCrcMismatches: response code
///   bytes whose nibbles are not complements; invalidPackets: packets refused for their
///   form (bad length, cut off by silence).
public struct LinkCounters: Sendable, Hashable {
    public var packetsSent: Int
    public var packetsReceived: Int
    public var bytesSent: Int
    public var bytesReceived: Int
    public var retries: Int
    public var timeouts: Int
    public var crcMismatches: Int
    public var internalCrcMismatches: Int
    public var invalidPackets: Int

    /// The session's packet layer and modem counters.
    public init(_ session: ReaderSession) {
        let packets = session.linkStatistics
        let modem = session.link.modem.statistics
        packetsSent = packets.packetsSent
        packetsReceived = packets.responsesReceived + packets.packetsReceived
        bytesSent = modem.bytesSent
        bytesReceived = modem.bytesReceived
        retries = packets.sendRetries
        timeouts = packets.sendTimeouts
        crcMismatches = packets.crcMismatches
        internalCrcMismatches = packets.internalCRCMismatches
        invalidPackets = packets.invalidPackets
    }
}
