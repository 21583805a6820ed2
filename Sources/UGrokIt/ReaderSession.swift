import GrokBasics
import GrokAudio
import GrokFirmware
import GrokLink
import GrokProtocol

/// The vendor's connection states (`UGI_CONNECTION_STATE_*`, numbered as the vendor does).
public enum ConnectionState: Int, Sendable, Codable, CustomStringConvertible {
    /// NOT_CONNECTED: closed, or the handshake has not started.
    case notConnected = 0
    /// CONNECTING: handshaking, or waiting for GetVersion's answer.
    case connecting = 1
    /// INCOMPATIBLE_READER: the reader's protocol is older than the host accepts.
    case incompatible = 2
    /// CONNECTED: the handshake is done and GetVersion was answered.
    case connected = 3

    public var description: String {
        switch self {
        case .notConnected: "not-connected"
        case .connecting: "connecting"
        case .incompatible: "incompatible"
        case .connected: "connected"
        }
    }
}

/// Options for one reader connection. Times are seconds of audio (samples), never wall time.
public struct ReaderOptions: Sendable {
    /// Frames per audio transfer.
    public var blockSize = 256
    /// Pace an emulated bench to the wall clock.
    public var realtime = false
    /// How long to handshake before giving up (CANNOT_HANDSHAKE).
    public var handshakeTimeout = 3.0
    /// After a failed connection attempt, the threaded ``Reader`` stays quiet this many
    /// seconds of audio before it handshakes again, doubling on each failure up to
    /// ``maximumRetryPause``: an unplugged jack or a peer that never answers costs audio
    /// time (real time on a sound card), not a spinning CPU.
    public var minimumRetryPause = 0.25
    /// The longest pause between connection attempts, seconds of audio.
    public var maximumRetryPause = 2.0
    /// Link resets a ``ReaderSession`` may try when the link fails under a request (all its
    /// tries spent, or the carrier lost): at most one per request, and this many per
    /// session; 0 turns recovery off (docs/vendor-protocol.md, section 4.7).
    public var maximumLinkRecoveries = 3
    /// How long a link reset handshakes for the Grokker to come back, seconds of audio: a
    /// little more than a request's 8 tries take with the vendor's timing (19.4 s), so a
    /// cable that goes dead for as long as the vendor's host would have kept trying is
    /// still recovered. The vendor's host handshakes without limit.
    public var linkRecoverySeconds = 25.0
    /// What to log and where (nothing by default).
    public var logger = UgiLogger()

    public init() {}
}

/// One Grokker on one audio port, spoken to in the vendor's own protocol: the vendor modem
/// and packet layer (``VendorLink``, host role, pumped by a ``LinkDriver``) and the vendor
/// command set (``VendorRequest``). Synchronous, one thread; every wait pumps audio, so time
/// passes as samples. The building block under ``Reader`` and the CLI.
///
/// What goes on the wire is what the vendor host library (SDK 1.7.16) sends for the same
/// call; `Tests/UGrokItTests/VendorReaderSessionTests.swift` checks it against the captures
/// in `Tests/VendorInterop/Fixtures/`.
public final class ReaderSession {
    public let driver: LinkDriver<VendorLink>
    /// The options it was made with; `logger` may change between calls (vendor
    /// `setLoggingStatus` at run time).
    public var options: ReaderOptions
    /// The packet layer's timing (the vendor host's Android figures by default); its audio
    /// latency is also what GetVersion tells the reader.
    public let timing: VendorPacketTiming
    /// Samples per bit the next ``connect()`` proposes (AutoConfig changes it).
    public var samplesPerBit: Int
    /// GetVersion flag 02: the host enforces regions (the vendor's default).
    public var enforceRegion = true
    /// GetVersion flag 01: the host runs in provisioning mode (replaces flag 02).
    public var provisioningMode = false
    /// What the reader said it is, once connected.
    public private(set) var version: VendorReaderVersion?
    public private(set) var info: ReaderInfo?
    /// Audio time from opening the connection until GetVersion was answered, ms.
    public private(set) var connectMilliseconds: Double?
    /// The inventory-state listeners (vendor `UgiInventoryDelegate` state changes).
    public var inventoryStateListeners: [(VendorInventoryState) -> Void] = []
    /// The running (or last) inventory's host side.
    public internal(set) var inventory: VendorInventoryHost?
    /// The audio sample at which the running (or last) inventory's start was sent, and the
    /// one at which it ended (the reader's completion, or slave mode lost): the inventory's
    /// own clock, from which its reads are timed (``takeReports()``, ``inventorySeconds``).
    var inventoryStartSample: Int64?
    var inventoryEndSample: Int64?
    /// The inventory's reads not yet taken, each with the audio sample its packet arrived at.
    var arrivedReads: [(read: VendorTagRead, sample: Int64)] = []
    /// The sounds set on the reader (the vendor host serves GetConfiguration from this cache).
    public internal(set) var configurationCache: [VendorConfigurationKind: VendorConfiguration] = [:]
    /// The bytes of AutoConfig's and testConnection's echoes (100 random bytes each by default).
    public var echoBytes: () -> [UInt8] = { (0..<VendorEcho.autoConfigBytes).map { _ in UInt8.random(in: 0...255) } }

    /// The volume (0...1) set with ``setVolume(_:)``: sent in every inventory start from
    /// then on (`nil`: each configuration's own).
    public internal(set) var volume: Double?
    /// The hop table the reader runs, as sent: from the last SetRegion, else the built-in
    /// entry of the region the reader reported.
    public var regionChannelsKHz: [Int] {
        if let sentRegionEntry { return sentRegionEntry.channelsKHz }
        guard let index = version?.regionIndex, let entry = RegionCatalog.entry(number: UInt16(index) + 1),
              let vendor = try? VendorRegionEntry(entry) else { return [] }
        return vendor.channelsKHz
    }
    /// The entry the last SetRegion of this session carried.
    public private(set) var sentRegionEntry: VendorRegionEntry?

    /// Answers the reader's packets in a slave mode other than an inventory (TuneAntenna).
    var slaveHandler: ((RequestPacket) -> VendorReply)?

    private var answer: Result<ResponsePacket, VendorPacketError>?
    private var slaveModeOn = false

    /// Link resets tried after a request failed on the link (``recoverLink(after:)``), and
    /// how many of them did not bring the Grokker back.
    public internal(set) var linkRecoveries = 0
    public internal(set) var linkRecoveriesFailed = 0
    /// Hear every link recovery as it starts and ends (the ``Reader`` turns them into the
    /// vendor's CONNECTING and CONNECTED).
    public var linkRecoveryListeners: [(LinkRecoveryEvent) -> Void] = []
    /// Whether a connection is being set up (``connect()``'s GetVersion, or a recovery's
    /// requests): their failures never start a recovery; the caller's connection retries,
    /// or the recovery itself, answer them.
    var settingUpConnection = false
    /// The configuration kinds the application set (``setConfiguration(_:)``): sent again
    /// after a link reset, as the vendor's host does; the others in ``configurationCache``
    /// were read from the reader.
    var configurationsSet: Set<VendorConfigurationKind> = []

    public var link: VendorLink { driver.engine }
    public var port: any AudioPort { driver.port }
    public var elapsedMilliseconds: Double { Double(link.now) * 1000 / Double(link.sampleRate) }

    public init(port: any AudioPort, options: ReaderOptions = ReaderOptions(), samplesPerBit: Int = VendorModemSetting.defaultSamplesPerBit,
                timing: VendorPacketTiming = .vendorHost) throws(ReaderError) {
        self.options = options
        self.timing = timing
        self.samplesPerBit = samplesPerBit
        let link: VendorLink
        do {
            link = try VendorLink(role: .host, sampleRate: port.sampleRate, timing: timing)
        } catch {
            throw .invalidArgument(field: "sampleRate", value: String(port.sampleRate), allowed: "44100 or 48000")
        }
        driver = LinkDriver(port: port, engine: link, blockSize: options.blockSize, realtime: options.realtime)
        link.packets.onRequest = { [unowned self] request in self.answerReader(request) }
    }

    func log(_ category: UgiLoggingCategory, _ message: @autoclosure () -> String) {
        options.logger.log(category, port: port.name, audioSeconds: Double(link.now) / Double(link.sampleRate), message())
    }

    // MARK: Connection

    /// Vendor `isAnythingPluggedIntoAudioJack`: false only when the port knows the jack is empty.
    public var isAnythingPluggedIntoAudioJack: Bool { port.jackPlugged != false }

    /// Whether the handshake is done and GetVersion was answered.
    public var isConnected: Bool { link.isConnected && version != nil }

    /// Vendor `connectionState`: connected once GetVersion was answered, connecting while the
    /// modem handshakes (or waits for GetVersion), not connected when it is closed.
    public var connectionState: ConnectionState {
        if isConnected { return .connected }
        if incompatible { return .incompatible }
        return link.modem.state == .closed ? .notConnected : .connecting
    }
    private var incompatible = false

    /// The GetVersion the vendor host sends: host protocol 20, its audio latency, flags 01
    /// (provisioning mode), 02 (region enforcement) or 00.
    public var versionRequest: VendorVersionRequest {
        let flags: VendorVersionRequestFlags = provisioningMode ? .provisioningMode : enforceRegion ? .enforceRegion : []
        return VendorVersionRequest(hostProtocol: 20, latencyMs: UInt16(clamping: timing.audioLatencyMs), flags: flags)
    }

    /// Handshakes at ``samplesPerBit`` and asks the reader what it is (the vendor's
    /// `openConnection` up to CONNECTED).
    @discardableResult
    public func connect() throws(ReaderError) -> ReaderInfo {
        try connect(handshakeTimeout: options.handshakeTimeout)
    }

    /// ``connect()`` with its own handshake timeout, seconds of audio.
    @discardableResult
    public func connect(handshakeTimeout: Double) throws(ReaderError) -> ReaderInfo {
        guard isAnythingPluggedIntoAudioJack else { throw .notPluggedIn(port: port.name) }
        incompatible = false
        let setting = settingUpConnection
        settingUpConnection = true
        defer { settingUpConnection = setting }
        let start = link.now
        try handshake(samplesPerBit: samplesPerBit, timeout: handshakeTimeout)
        let response: VendorResponse
        do {
            response = try call(.getVersion(versionRequest))
        } catch .invalidArgument(let field, let value, let allowed) {
            throw .invalidArgument(field: field, value: value, allowed: allowed)
        } catch {
            log(.connectionErrors, "GetVersion failed: \(error)")
            throw .cannotGetInfo(port: port.name)
        }
        guard case .version(let fresh) = response else { throw .cannotGetInfo(port: port.name) }
        guard fresh.protocolVersion >= VendorReaderVersion.minimumAcceptedProtocol else {
            incompatible = true
            throw .incompatibleReader(port: port.name, detail: ErrorDetail(
                "protocol_too_old", [String(fresh.protocolVersion), String(VendorReaderVersion.minimumAcceptedProtocol)]))
        }
        version = fresh
        let made = Self.readerInfo(fresh, enforceRegion: enforceRegion)
        info = made
        connectMilliseconds = Double(link.now - start) * 1000 / Double(link.sampleRate)
        log(.connectionState, "\(ConnectionState.connecting) -> \(ConnectionState.connected)")
        log(.byteProtocol, "connected at \(link.samplesPerBit) spb: \(fresh.hardwareTypeName) serial \(fresh.serialNumber)")
        return made
    }

    /// Asks the reader what it is again (GetVersion on the open connection); the vendor host
    /// does so after a provisioning write or an update.
    @discardableResult
    public func identify() throws(ReaderError) -> ReaderInfo {
        guard case .version(let fresh) = try call(.getVersion(versionRequest)) else { throw .cannotGetInfo(port: port.name) }
        version = fresh
        let made = Self.readerInfo(fresh, enforceRegion: enforceRegion)
        info = made
        return made
    }

    /// Goes quiet (no handshaking) and lets `seconds` of audio pass: the pause between
    /// connection attempts. The next ``connect()`` handshakes again.
    public func rest(forAtMost seconds: Double) throws(ReaderError) {
        disconnect()
        _ = try pump(forAtMost: seconds) { false }
    }

    /// Closes the link and handshakes again at `samplesPerBit` (no GetVersion).
    func handshake(samplesPerBit spb: Int, timeout: Double) throws(ReaderError) {
        if link.modem.state != .closed { link.close() }
        do {
            try link.open(samplesPerBit: spb)
        } catch {
            throw .invalidArgument(field: "samplesPerBit", value: String(spb),
                                   allowed: VendorModemSetting.supportedSamplesPerBit.map(String.init).joined(separator: ", "))
        }
        let connected = try pump(forAtMost: timeout) { link.isConnected }
        guard connected else {
            if port.jackPlugged == false { throw .notPluggedIn(port: port.name) }
            if let shortfall = port.levelShortfall { throw .levelTooLow(port: port.name, shortfall: shortfall) }
            throw .cannotHandshake(port: port.name, seconds: timeout)
        }
    }

    /// Goes quiet (vendor `closeConnection`); the port stays open for a later ``connect()``.
    public func disconnect() {
        if isConnected { log(.connectionState, "\(ConnectionState.connected) -> \(ConnectionState.notConnected)") }
        link.close()
        drain()
        version = nil
    }

    /// Goes quiet and releases the port.
    public func close() {
        disconnect()
        try? driver.pump()
        port.close()
    }

    /// Takes a version as if GetVersion had answered it (tests whose peer skips GetVersion).
    func setVersionForTesting(_ fresh: VendorReaderVersion) {
        version = fresh
        info = Self.readerInfo(fresh, enforceRegion: enforceRegion)
    }

    /// ``ReaderInfo`` from a GetVersion answer, with the vendor's region rules. The region is
    /// what the unit says: the region of its index (byte 30) when its "user has set region"
    /// flag (byte 12, bit 7) is on, else none. A unit out of the box reports index 0 (FCC)
    /// with the flag off; that index is no region anybody chose, whatever the board revision.
    public static func readerInfo(_ v: VendorReaderVersion, enforceRegion: Bool) -> ReaderInfo {
        let rules = RegionSettingRules(readerProtocolVersion: v.protocolVersion, hardwareRevision: v.hardwareRevision,
                                       softwareType: v.softwareType, deviceFlags: v.deviceFlags, enforceRegion: enforceRegion)
        let region = rules.userHasSetRegion ? RegionCatalog.named(vendorIndex: v.regionIndex)?.setting : nil
        let firmware = FirmwareVersion(major: v.firmwareMajor, minor: v.firmwareMinor, build: UInt16(v.firmwareBuild))
        let isGrokker = v.hardwareType == 5
        return ReaderInfo(
            hardwareType: isGrokker ? .grokker1 : .unknown, hardwareModel: v.hardwareTypeName, hardwareRevision: v.hardwareRevision,
            firmwareVersion: firmware, loaderVersion: firmware, serialNumber: v.serialNumber,
            readerProtocolVersion: UInt16(clamping: v.protocolVersion), region: region,
            userMustSetRegion: rules.userMustSetRegion, userCanSetRegion: rules.userCanSetRegion,
            provisioned: v.provisioningStatus != 0, enforceRegion: enforceRegion,
            maxPowerTenthsDBm: Int16((v.maxPowerDBm * 10).rounded()), maxSensitivityTenthsDBm: Int16(v.maxSensitivityDB * 10),
            numVolumeLevels: v.volumeLevels, maxTonesInSound: v.maxTones, hasBattery: isGrokker, hasExternalPower: isGrokker,
            batteryCapacityMinutes: isGrokker ? Self.grokkerBatteryMinutes : 0,
            batteryCapacityMAh: isGrokker ? Self.grokkerBatteryMAh : 0, deviceInitializedSuccessfully: v.initStatus == 0)
    }

    /// The GR-1's battery capacity as the vendor host reports it (140 min, 1800 mAh: seen in
    /// the harness for hardware type 5, revision 6).
    public static let grokkerBatteryMinutes: UInt16 = 140
    public static let grokkerBatteryMAh: UInt16 = 1800

    // MARK: Requests

    /// Sends one request and waits for its answer (the packet layer retries as the vendor
    /// does); returns the answer decoded.
    @discardableResult
    public func call(_ request: VendorRequest, extraTimeoutMs: Int = 0, retries: Bool = true,
                     slaveMode: VendorSlaveMode? = nil) throws(ReaderError) -> VendorResponse {
        let response = try exchange(request, extraTimeoutMs: extraTimeoutMs, retries: retries, slaveMode: slaveMode)
        if response.isNack {
            throw .rejected(port: port.name, command: "\(request.opcode)", status: "ACK_7 (NACK)")
        }
        guard response.id == 0 else {
            throw .rejected(port: port.name, command: "\(request.opcode)", status: "ACK_\(response.id)")
        }
        do {
            return try request.decodeResponse(response.data)
        } catch {
            throw .malformedResponse(port: port.name, detail: ErrorDetail("undecodable_answer", ["\(request.opcode)"]))
        }
    }

    /// Sends one request and returns the reader's answer as it came. When the link fails
    /// under it (every try spent, or the carrier lost), the link is reset and the Grokker
    /// connected again as the vendor's host does, and the request sent once more if it may
    /// be (``LinkRecoveryDecision``).
    public func exchange(_ request: VendorRequest, extraTimeoutMs: Int = 0, retries: Bool = true,
                         slaveMode: VendorSlaveMode? = nil) throws(ReaderError) -> ResponsePacket {
        let command = "\(request.opcode)"
        var elapsed = 0.0
        var reset = false
        while true {
            let outcome = try send(request, extraTimeoutMs: extraTimeoutMs, retries: retries, slaveMode: slaveMode)
            switch outcome {
            case .answered(let response):
                return response
            case .linkFailed(let seconds, let lost):
                elapsed += seconds
                if reset { throw .timeout(port: port.name, command: command, seconds: elapsed, recovery: ErrorDetail("reset_unanswered")) }
                switch LinkRecoveryDecision.decide(request, retries: retries, nested: settingUpConnection,
                                                   plugged: isAnythingPluggedIntoAudioJack, used: linkRecoveries,
                                                   allowed: options.maximumLinkRecoveries) {
                case .report(let reason):
                    if lost { throw .lostConnection(port: port.name) }
                    throw .timeout(port: port.name, command: command, seconds: elapsed, recovery: ErrorDetail(reason))
                case .reset(let again):
                    let started = link.now
                    let back = try recoverLink(after: command)
                    elapsed += Double(link.now - started) / Double(link.sampleRate)
                    guard back else { throw .timeout(port: port.name, command: command, seconds: elapsed, recovery: ErrorDetail("reset_failed")) }
                    guard again else { throw .outcomeUnknown(port: port.name, command: command) }
                    reset = true
                    log(.connectionErrors, "link recovered: sending \(command) again")
                }
            }
        }
    }

    /// How one send of a request ended.
    private enum SendOutcome {
        case answered(ResponsePacket)
        /// No answer: the tries ran out (or the wait did), or `lost`, the connection dropped.
        case linkFailed(seconds: Double, lost: Bool)
    }

    /// Sends `request` once through the packet layer (with its tries) and waits.
    private func send(_ request: VendorRequest, extraTimeoutMs: Int, retries: Bool,
                      slaveMode: VendorSlaveMode?) throws(ReaderError) -> SendOutcome {
        guard !slaveModeOn else { throw .inventoryRunning(port: port.name) }
        guard link.isConnected else { throw .lostConnection(port: port.name) }
        let payload: [UInt8]
        do {
            payload = try request.encodePayload()
        } catch {
            throw ReaderError(error)
        }
        answer = nil
        do {
            try link.send(command: request.opcode.rawValue, payload: payload, extraTimeoutMs: extraTimeoutMs,
                          retries: retries, slaveMode: slaveMode)
        } catch .busy {
            throw .inventoryRunning(port: port.name)
        } catch {
            throw .invalidArgument(field: "\(request.opcode)", value: error.description, allowed: "a packet the vendor protocol carries")
        }
        log(.command, "-> \(request.opcode)")
        let started = link.now
        let limit = worstCaseSeconds(payloadBytes: payload.count, extraMs: extraTimeoutMs, retries: retries)
        _ = try pump(forAtMost: limit) { answer != nil }
        let seconds = Double(link.now - started) / Double(link.sampleRate)
        switch answer {
        case .success(let response):
            log(.command, "<- \(request.opcode): \(response)")
            return .answered(response)
        case .failure(.notConnected), .failure(.connectionLost):
            log(.connectionErrors, "\(request.opcode): the connection dropped")
            return .linkFailed(seconds: seconds, lost: true)
        case .failure(let error):
            log(.connectionErrors, "\(request.opcode) failed: \(error)")
            return .linkFailed(seconds: seconds, lost: false)
        case nil:
            return .linkFailed(seconds: seconds, lost: false)
        }
    }

    /// The longest the packet layer can take over a request: every try timing out, plus a
    /// pause before each resend, plus a second of slack.
    func worstCaseSeconds(payloadBytes: Int, extraMs: Int, retries: Bool) -> Double {
        let tries = retries ? max(1, timing.tries) : 1
        let perTry = timing.responseTimeoutMs(requestBytes: payloadBytes + 3, extraMs: extraMs, sampleRate: link.sampleRate,
                                              samplesPerBit: max(1, link.samplesPerBit))
        // An answer may take as long as its own bytes after it starts: 255 bytes at most.
        let answerMs = VendorPacketTiming.airTimeMs(bytes: 256, sampleRate: link.sampleRate, samplesPerBit: max(1, link.samplesPerBit))
        return Double(tries * (perTry + timing.retryDelayMs + answerMs)) / 1000 + 1
    }

    /// Takes the link's events: answers to our requests, slave mode coming and going.
    private func drain() {
        for event in link.drainEvents() {
            switch event {
            case .packet(.completed(_, let response)):
                answer = .success(response)
            case .packet(.failed(_, let error)):
                answer = .failure(error)
            case .packet(.enteredSlaveMode):
                slaveModeOn = true
                inventory?.started()
            case .packet(.exitedSlaveMode(let error)):
                slaveModeOn = false
                if let error { log(.connectionErrors, "slave mode ended: \(error)") }
                inventory?.slaveModeEnded()
            case .packet(.fault(let fault)):
                log(.packetProtocol, "packet dropped: \(fault)")
            case .packet(.requestReceived):
                break
            case .modem(let modem):
                log(.byteProtocol, "\(modem)")
            }
        }
    }

    /// The answer to a packet the reader sends in slave mode.
    private func answerReader(_ request: RequestPacket) -> VendorReply {
        if let slaveHandler { return slaveHandler(request) }
        if let inventory, inventory.isActive {
            let reply = inventory.answer(request)
            // Stamped on arrival: the reader's "ms ago" counts back from this packet.
            let now = link.now
            arrivedReads.append(contentsOf: inventory.takeReads().map { (read: $0, sample: now) })
            return reply
        }
        return VendorReply(.ack, endsSlaveMode: request.command == 0)
    }

    func pump(forAtMost seconds: Double, until done: () -> Bool) throws(ReaderError) -> Bool {
        do {
            return try driver.run(forAtMost: seconds) {
                drain()
                return done()
            }
        } catch {
            throw .audio(error)
        }
    }

    /// Keeps the link up for `seconds` of audio.
    public func idle(forAtMost seconds: Double) throws(ReaderError) {
        _ = try pump(forAtMost: seconds) { false }
    }

    // MARK: Commands

    /// The battery (vendor `getBatteryInfo`); not while an inventory runs.
    public func batteryInfo() throws(ReaderError) -> BatteryInfo {
        guard case .battery(let level) = try call(.getBatteryLevel) else {
            throw .malformedResponse(port: port.name, detail: ErrorDetail("unexpected_answer", ["GetBatteryLevel"]))
        }
        let v = version
        let info = level.info(readerProtocol: v?.protocolVersion ?? 20, hardwareRevision: v?.hardwareRevision ?? 6,
                              capacityMinutes: Int(self.info?.batteryCapacityMinutes ?? Self.grokkerBatteryMinutes))
        return BatteryInfo(canScan: info.canScan, externalPowerIsConnected: info.externalPowerIsConnected,
                           isCharging: info.isCharging, minutesRemaining: UInt16(clamping: info.minutesRemaining),
                           percentRemaining: UInt8(clamping: info.percentRemaining),
                           millivolts: UInt16(clamping: Int((info.volts * 1000).rounded())))
    }

    /// Sets one configuration (SetConfiguration 0x0b) and caches it.
    public func setConfiguration(_ configuration: VendorConfiguration) throws(ReaderError) {
        try call(.setConfiguration(configuration))
        configurationCache[configuration.kind] = configuration
        configurationsSet.insert(configuration.kind)
    }

    /// A configuration: from the cache as the vendor host serves it, else GetConfiguration 0x0a.
    public func configuration(_ kind: VendorConfigurationKind) throws(ReaderError) -> VendorConfiguration {
        if let cached = configurationCache[kind] { return cached }
        guard case .configuration(let fresh) = try call(.getConfiguration(VendorGetConfiguration(kind: kind))) else {
            throw .malformedResponse(port: port.name, detail: ErrorDetail("unexpected_answer", ["GetConfiguration"]))
        }
        configurationCache[kind] = fresh
        return fresh
    }

    /// Vendor `setGeigerCounterSound`.
    public func setGeigerCounterSound(_ sound: UgiGeigerCounterSound) throws(ReaderError) {
        let geiger: VendorGeigerSound
        do {
            geiger = try VendorGeigerSound(frequencyHz: UInt16(clamping: sound.frequency),
                                           clickDurationMs: UInt16(clamping: sound.clickDurationMsec), clickRate: sound.clickRate,
                                           maxClicksPerSecond: UInt8(clamping: sound.maxClicksPerSecond),
                                           historyMs: sound.historyDepthMsec)
        } catch {
            throw ReaderError(error)
        }
        try setConfiguration(.geigerCounterSound(geiger))
    }

    /// Vendor `setFoundItemSound`.
    public func setFoundItemSound(_ tones: [UgiTone]) throws(ReaderError) {
        try setConfiguration(.tones(.foundItemSound, tones.map { GrokProtocol.VendorTone(frequencyHz: $0.frequencyHz, durationMs: $0.durationMs) }))
    }

    /// Vendor `setFoundLastItemSound` (configuration 3).
    public func setFoundLastItemSound(_ tones: [UgiTone]) throws(ReaderError) {
        try setConfiguration(.tones(.foundLastItemSound, tones.map { GrokProtocol.VendorTone(frequencyHz: $0.frequencyHz, durationMs: $0.durationMs) }))
    }

    /// Vendor `playSound`: the sound number as the vendor sends it (0 found-last-item).
    public func playSound(_ number: UInt8) throws(ReaderError) {
        try call(.playSound(number))
    }

    /// Vendor `pauseConnection`: the reader goes quiet for `ms` plus the platform's pause
    /// latency (the vendor adds 300 ms), then the link resumes without a new handshake.
    public func pause(ms: Int, latencyMs: Int = 300) throws(ReaderError) {
        try call(.pauseConnection(ms: UInt16(clamping: ms + latencyMs)))
    }

    /// The regions this reader may be set to, and the index of the one it is set to (vendor
    /// `getRegionNames`). Valid once connected.
    ///
    /// - Parameter catalogue: the verified region catalogue: the list is then the regions
    ///   this reader's hardware revision and serial number may choose. Without one, all 22.
    public func regionNames(catalogue: RegionCatalogue? = nil) -> (names: [String], selected: Int?) {
        if let catalogue, let info {
            let choices = RegionChoices(catalogue: catalogue, reader: info)
            return (choices.names, choices.selected)
        }
        let names = RegionCatalog.all.map(\.name)
        let selected = info?.region.flatMap { current in RegionCatalog.all.firstIndex { $0.number == current.number } }
        return (names, selected)
    }

    /// Sets the region by vendor name (`FCC (US), IC (Canada)`), stable code (`etsi`) or
    /// number (vendor `setRegion`), by the vendor's set-region rules. A name that is not a
    /// region, or (with a `catalogue`) not one this reader may choose, is refused before
    /// anything is sent. What is sent is our entry for the region (``RegionCatalog``), or,
    /// when the signed `catalogue` has different values for it, the catalogue's
    /// (``setRegionEntry(_:catalogue:band:)``); with `table` ``RegionTableChoice/vendor``, the
    /// vendor's own entry byte for byte (``VendorRegionTable``).
    ///
    /// A region with an allocation per hardware band (Russia) is sent in the allocation of
    /// the reader's band: the band of the region it reports, when that region has one
    /// allocation (GetVersion carries no band of its own); otherwise each allocation in turn,
    /// the next one when the reader refuses (NACKs) an entry its radio cannot tune. When it
    /// refuses them all: ``ReaderError/regionNotForHardware(port:region:allocations:)``.
    /// Firmware that cannot set a region is
    /// ``ReaderError/firmwareDoesNotSupportSetRegion(port:firmware:)``. Returns the reader
    /// information with the new region.
    @discardableResult
    public func setRegion(_ name: String, catalogue: RegionCatalogue? = nil,
                          table: RegionTableChoice = .ours) throws(ReaderError) -> ReaderInfo {
        guard let region = RegionCatalog.find(name) else { throw .unknownRegion(name) }
        if let catalogue, let info, let wanted = UgiRegion(region.setting),
           !RegionChoices(catalogue: catalogue, reader: info).allows(wanted) {
            throw .regionNotApproved(port: port.name, region: region.name)
        }
        var candidates: [VendorRegionEntry]
        switch table {
        case .vendor:
            guard let entry = VendorRegionTable.entry(number: region.number) else { throw .unknownRegion(name) }
            candidates = [entry]
        case .ours:
            candidates = try RegionCatalog.allocations(number: region.number).map { (allocation) throws(ReaderError) in
                try Self.setRegionEntry(region.setting, catalogue: catalogue, band: allocation.hardwareBand)
            }
        }
        if let band = knownHardwareBand, let index = candidates.firstIndex(where: { $0.frequencyBand == band.rawValue }) {
            candidates.insert(candidates.remove(at: index), at: 0)
        }
        // Each allocation is offered once without the packet layer's retries, so that a NACK
        // (an entry the unit cannot take) comes back at once instead of after the vendor's
        // eight tries; an offer that got no answer is sent again with the retries.
        attempts: for (i, entry) in candidates.enumerated() {
            do throws(ReaderError) {
                do throws(ReaderError) {
                    try setRegion(entry, retries: false)
                } catch .timeout {
                    try setRegion(entry)
                }
                break attempts
            } catch .rejected(_, _, let status) where status.contains("NACK") {
                guard i == candidates.count - 1 else { continue }
                throw .regionNotForHardware(
                    port: port.name, region: region.name,
                    allocations: candidates.map { RegionEntry.mhzRange($0.channelsKHz) }.joined(separator: ", "))
            }
        }
        // GetVersion again, so the information says what the reader now reports (its
        // "user has set region" flag among it); the vendor host only caches the index.
        return try identify()
    }

    /// The hardware band of this reader as far as it says: the band of the region it reports
    /// set, when that region has a single allocation (a unit set to FCC has the 900 MHz
    /// hardware); `nil` when no region is set or the region has allocations for both bands.
    public var knownHardwareBand: VendorFrequencyBand? {
        guard let region = info?.region else { return nil }
        let allocations = RegionCatalog.allocations(number: region.number)
        return allocations.count == 1 ? allocations[0].hardwareBand : nil
    }

    /// The SetRegion entry for `setting` on hardware of `band`: our allocation of the region
    /// for that band (``RegionCatalog/entry(number:band:)``), unless the `catalogue`'s entry
    /// for it differs, then the catalogue's values, with the power capped at what the region
    /// allows conducted and at the Grokker's 30 dBm
    /// (``GrokProtocol/VendorRegionEntry/init(_:antennaGainDBi:)``). A catalogue entry whose
    /// channels another hardware band tunes is refused (nothing is sent).
    public static func setRegionEntry(_ setting: RegionSetting, catalogue: RegionCatalogue?,
                                      band: VendorFrequencyBand? = nil) throws(ReaderError) -> VendorRegionEntry {
        let builtIn: RegionEntry
        if let band {
            guard let allocation = RegionCatalog.entry(number: setting.number, band: band) else { throw .unknownRegion(setting.name) }
            builtIn = allocation
        } else {
            guard let first = RegionCatalog.entry(number: setting.number) else { throw .unknownRegion(setting.name) }
            builtIn = first
        }
        var chosen = builtIn
        if let ours = catalogue?.entry(for: setting), ours != builtIn,
           RegionCatalog.allocations(number: setting.number).count == 1 || ours.hardwareBand == builtIn.hardwareBand {
            guard ours.hardwareBand == builtIn.hardwareBand else {
                throw .invalidArgument(field: "region catalogue \(setting.name) channels",
                                       value: "\(ours.channelsKHz.first ?? 0)...\(ours.channelsKHz.last ?? 0) kHz",
                                       allowed: "channels of the \(builtIn.hardwareBand) hardware band")
            }
            chosen = ours
        }
        do {
            return try VendorRegionEntry(chosen)
        } catch {
            throw .invalidArgument(field: "region \(error.field)", value: error.found, allowed: error.expected)
        }
    }

    /// Sends `entry` (SetRegion 0x11) if the reader's firmware takes it; `retries: false`
    /// fails at the first try that goes wrong (a NACK then comes back as
    /// ``ReaderError/rejected(port:command:status:)`` at once).
    public func setRegion(_ entry: VendorRegionEntry, retries: Bool = true) throws(ReaderError) {
        if let v = version {
            let rules = RegionSettingRules(readerProtocolVersion: v.protocolVersion, hardwareRevision: v.hardwareRevision,
                                           softwareType: v.softwareType, deviceFlags: v.deviceFlags, enforceRegion: enforceRegion)
            guard rules.userCanSetRegion else {
                throw .firmwareDoesNotSupportSetRegion(port: port.name, firmware: "\(v.firmwareMajor).\(v.firmwareMinor).\(v.firmwareBuild)")
            }
        }
        let request: VendorSetRegion
        do {
            request = try VendorSetRegion(entry: entry.encode())
        } catch {
            throw ReaderError(error)
        }
        try call(.setRegion(request), retries: retries)
        sentRegionEntry = entry
        // As the vendor: the cached region index follows (GetVersion byte 30).
        if var v = version {
            v.regionIndex = entry.index
            version = v
            info = Self.readerInfo(v, enforceRegion: enforceRegion)
        }
    }

    /// Provisioning 0x04, sub-ops 00-04.
    public func provision(_ request: VendorProvisioning) throws(ReaderError) {
        try call(.provisioning(request))
    }

    /// GetDiagnostics 0x06; nil when the reader answers a bare ACK (layout unknown then).
    public func readerDiagnostics(reset: Bool = false) throws(ReaderError) -> VendorDiagnostics? {
        let response = try exchange(.getDiagnostics(reset: reset))
        guard response.id == 0, !response.data.isEmpty else { return nil }
        guard case .diagnostics(let d) = try decode(.getDiagnostics(reset: reset), response) else { return nil }
        return d
    }

    /// The link's own counters (the vendor's `PacketProtocolGetConnectionStatistics`).
    public var linkStatistics: VendorPacketStatistics { link.packets.statistics }

    /// GetTemperature 0x15; nil when the reader answers a bare ACK.
    public func temperature() throws(ReaderError) -> VendorTemperature? {
        let response = try exchange(.getTemperature)
        guard response.id == 0, !response.data.isEmpty else { return nil }
        guard case .temperature(let t) = try decode(.getTemperature, response) else { return nil }
        return t
    }

    private func decode(_ request: VendorRequest, _ response: ResponsePacket) throws(ReaderError) -> VendorResponse {
        do {
            return try request.decodeResponse(response.data)
        } catch {
            throw .malformedResponse(port: port.name, detail: ErrorDetail("undecodable_answer", ["\(request.opcode)"]))
        }
    }

    /// One echo (0x0c); whether it came back equal. `retries: false` fails at the first
    /// try that goes wrong, as AutoConfig's steps do.
    func echo(_ data: [UInt8], retries: Bool) throws(ReaderError) -> Bool {
        let request: VendorRequest
        do {
            request = .echo(try VendorEcho(data))
        } catch {
            throw ReaderError(error)
        }
        let response = try exchange(request, retries: retries)
        return response.id == 0 && response.data == data
    }
}
