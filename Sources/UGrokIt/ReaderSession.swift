import GrokAudio
import GrokFirmware
import GrokLink
import GrokProtocol

/// The vendor's connection states (`UGI_CONNECTION_STATE_*`).
public typealias ConnectionState = LinkState

/// Options for one reader connection. Times are seconds of audio (samples), never wall time.
public struct ReaderOptions: Sendable {
    /// Frames per audio transfer.
    public var blockSize = 256
    /// Pace an emulated bench to the wall clock.
    public var realtime = false
    /// How long to handshake before giving up (CANNOT_HANDSHAKE).
    public var handshakeTimeout = 3.0
    /// How long to wait for the reader to say what it is (CANNOT_GET_INFO).
    public var identifyTimeout = 3.0
    /// How long a command may take.
    public var commandTimeout = 5.0
    /// The link's own tunables.
    public var link = LinkConfiguration()
    /// After a failed connection attempt, the threaded ``Reader`` stays quiet this many
    /// seconds of audio before it handshakes again, doubling on each failure up to
    /// ``maximumRetryPause``: an unplugged jack or a peer that never answers costs audio
    /// time (real time on a sound card), not a spinning CPU.
    public var minimumRetryPause = 0.25
    /// The longest pause between connection attempts, seconds of audio.
    public var maximumRetryPause = 2.0
    /// What to log and where (nothing by default).
    public var logger = UgiLogger()

    public init() {}
}

/// One Grokker on one audio port, driven synchronously from one thread: the building block
/// under ``Reader`` and the CLI. Every wait pumps audio, so time passes as samples.
public final class ReaderSession {
    public let driver: LinkDriver<LinkEngine>
    public let options: ReaderOptions
    /// What the reader said it is, once connected.
    public private(set) var info: ReaderInfo?
    /// Messages the reader sent on its own that no one here understood, oldest first.
    public private(set) var unsolicited: [[UInt8]] = []
    /// Antenna-tuning progress events not yet handed to ``tuneAntenna(_:)``'s callback.
    var tuningProgress: [AntennaTuningProgress] = []
    /// The Grokker password this session authenticated with, to authenticate again when a
    /// lost connection is resumed (authentication lasts one link session).
    var grokkerPassword: String?
    /// Tag reads that arrived and were not yet taken with ``takeReports()``, oldest first.
    private var reports: [TagReport] = []
    /// How the reader said its last inventory ended on its own, if it did.
    public private(set) var inventoryStopped: InventoryStopReason?
    private var nextRequestID: UInt16 = 1

    public var port: any AudioPort { driver.port }
    public var engine: LinkEngine { driver.engine }
    public var connectionState: ConnectionState { engine.state }
    /// Audio time from opening the connection until the reader had identified itself, in ms.
    public private(set) var connectMilliseconds: Double?
    /// Audio time since the session started, in milliseconds.
    public var elapsedMilliseconds: Double { Double(engine.now) * 1000 / Double(engine.sampleRate) }

    public init(port: any AudioPort, options: ReaderOptions = ReaderOptions()) {
        self.options = options
        driver = LinkDriver(port: port, engine: LinkEngine(role: .host, sampleRate: port.sampleRate, configuration: options.link),
                            blockSize: options.blockSize, realtime: options.realtime)
        log(.state, "session opened on \(port.name) at \(port.sampleRate) Hz, blocks of \(options.blockSize)")
    }

    /// Logs `message` under `category` with this session's port and audio time.
    func log(_ category: UgiLoggingCategory, _ message: @autoclosure () -> String) {
        options.logger.log(category, port: port.name, audioSeconds: Double(engine.now) / Double(engine.sampleRate), message())
    }

    private var loggedState = ConnectionState.notConnected

    /// Logs a change of the link's state (and, on losing it, why and the link's counters).
    private func noteState() {
        let state = engine.state
        guard state != loggedState else { return }
        let old = loggedState
        loggedState = state
        log(.connectionState, "\(old) -> \(state)")
        if old == .connected {
            log(.connectionErrors, "connection lost")
            logLinkStatistics()
        }
        if state == .connected { log(.byteProtocol, "handshake done at \(engine.mode)") }
    }

    func logLinkStatistics() {
        guard options.logger.isEnabled(.packetProtocol) else { return }
        let s = engine.statistics
        log(.packetProtocol, "packets sent \(s.packetsSent) received \(s.packetsReceived), retries \(s.retries), "
            + "timeouts \(s.timeouts), CRC mismatches \(s.crcMismatches), invalid \(s.invalidPackets)")
    }

    /// Handshakes and learns what the reader is (the vendor's `openConnection` followed by
    /// waiting for CONNECTED). Throws the vendor's test-connection failures as errors.
    @discardableResult
    public func connect() throws(ReaderError) -> ReaderInfo {
        if port.jackPlugged == false {
            log(.connectionErrors, "nothing plugged in")
            throw .notPluggedIn(port: port.name)
        }
        engine.connect()
        let connected = try pump(forAtMost: options.handshakeTimeout) {
            engine.state == .connected || engine.state == .incompatible
        }
        if engine.state == .incompatible {
            throw .incompatibleReader(port: port.name, detail: "link protocol")
        }
        guard connected else {
            if port.jackPlugged == false { throw .notPluggedIn(port: port.name) }
            log(.connectionErrors, "no handshake answer within \(options.handshakeTimeout) s")
            throw .cannotHandshake(port: port.name, seconds: options.handshakeTimeout)
        }
        _ = try pump(forAtMost: options.identifyTimeout) {
            takeMessages()
            return info != nil
        }
        var identified: ReaderInfo
        if let info {
            identified = info
        } else {
            do {
                identified = try identify()
            } catch .timeout {
                throw .cannotGetInfo(port: port.name)
            }
        }
        connectMilliseconds = elapsedMilliseconds
        // Let the faster-mode trials finish so the first command runs at the settled rate.
        _ = try pump(forAtMost: 2) { !engine.negotiating || engine.state != .connected }
        log(.byteProtocol, "settled at \(engine.mode), clock skew \(engine.statistics.skewFactor)")
        log(.connectionState, "reader \(identified.hardwareModel) serial \(identified.serialNumber) identified")
        return identified
    }

    /// Asks the reader what it is.
    public func identify() throws(ReaderError) -> ReaderInfo {
        let response = try call(.identify)
        guard case .identify(let fresh) = response else {
            throw .malformedResponse(port: port.name, detail: "identify answered with \(response.opcode)")
        }
        info = fresh
        return fresh
    }

    /// The regions this reader may be set to, and the index of the one it is set to (vendor
    /// `getRegionNames`). Valid once connected.
    ///
    /// - Parameter catalogue: the verified region catalogue
    ///   (``FirmwareChannels/regionCatalogue()``): the list is then the regions this
    ///   reader's hardware revision and serial number may choose. Without one, all 22.
    public func regionNames(catalogue: RegionCatalogue? = nil) -> (names: [String], selected: Int?) {
        if let catalogue, let info {
            let choices = RegionChoices(catalogue: catalogue, reader: info)
            return (choices.names, choices.selected)
        }
        let names = RegionCatalog.all.map(\.name)
        let selected = info?.region.flatMap { current in RegionCatalog.all.firstIndex { $0.number == current.number } }
        return (names, selected)
    }

    /// Sets the region by vendor name, stable code (`etsi`) or number (vendor `setRegion`).
    /// A name that is not a region, or (with a `catalogue`) not one this reader may choose,
    /// is refused before anything is sent. Firmware too old to set a region is
    /// ``ReaderError/firmwareDoesNotSupportSetRegion(port:firmware:)`` (vendor
    /// `notifyFirmwareDoesNotSupportSetRegion`).
    @discardableResult
    public func setRegion(_ name: String, catalogue: RegionCatalogue? = nil) throws(ReaderError) -> ReaderInfo {
        guard let region = RegionCatalog.find(name) else { throw .unknownRegion(name) }
        if let catalogue, let info, let wanted = UgiRegion(region.setting),
           !RegionChoices(catalogue: catalogue, reader: info).allows(wanted) {
            throw .regionNotApproved(port: port.name, region: region.name)
        }
        let response: Response
        do {
            response = try call(.setRegion(region.setting))
        } catch .rejected(_, _, let status) where status.hasPrefix(StatusCode.setRegionNotSupported.name) {
            throw .firmwareDoesNotSupportSetRegion(port: port.name, firmware: info?.firmwareVersion.description ?? "?")
        }
        guard case .setRegion(let fresh) = response else {
            throw .malformedResponse(port: port.name, detail: "setRegion answered with \(response.opcode)")
        }
        info = fresh
        return fresh
    }

    /// Sends one command and waits for its response.
    public func call(_ command: Command) throws(ReaderError) -> Response {
        let id = try submit(command)
        log(.command, "-> \(command.opcode) id \(id)")
        let response = try awaitResponse(to: [id], timeout: nil, command: "\(command.opcode)").response
        if case .failure(_, let status, _) = response {
            log(.command, "<- \(command.opcode) id \(id): \(status)")
        } else {
            log(.command, "<- \(command.opcode) id \(id): ok")
        }
        if case .failure(_, .regionNotSet, _) = response { throw .regionNotSet(port: port.name) }
        if case .failure(_, .authenticationRequired, _) = response { throw .authenticationRequired(port: port.name) }
        if case .failure(_, let status, let message) = response {
            throw .rejected(port: port.name, command: "\(command.opcode)", status: message.isEmpty ? "\(status)" : "\(status): \(message)")
        }
        return response
    }

    /// Sends a command without waiting for its answer, so several can be in flight (a
    /// firmware upload keeps the link busy this way); collect answers with
    /// ``awaitResponse(to:timeout:)``. Returns the request id.
    public func submit(_ command: Command) throws(ReaderError) -> UInt16 {
        guard engine.state == .connected else { throw .lostConnection(port: port.name) }
        let id = nextRequestID
        nextRequestID = nextRequestID == .max ? 1 : nextRequestID + 1
        do {
            try engine.send(RequestMessage(id: id, command: command).encode())
        } catch {
            throw .link(error)
        }
        return id
    }

    /// Waits for the answer to one of the requests `ids` (sent with ``submit(_:)``) and
    /// returns it as it came, failures included; answers to the others are kept for later
    /// calls. Throws when the link drops or nothing comes within `timeout` seconds of audio.
    public func awaitResponse(to ids: Set<UInt16>, timeout: Double? = nil) throws(ReaderError) -> (id: UInt16, response: Response) {
        try awaitResponse(to: ids, timeout: timeout, command: "pipelined request")
    }

    private func awaitResponse(to ids: Set<UInt16>, timeout: Double?, command: String) throws(ReaderError) -> (id: UInt16, response: Response) {
        func take() -> (UInt16, Response)? {
            for id in ids { if let response = early.removeValue(forKey: id) { return (id, response) } }
            return nil
        }
        if let found = take() { return found }
        var failure: ReaderError?
        _ = try pump(forAtMost: timeout ?? options.commandTimeout) {
            takeMessages { response in
                self.early[response.id] = response.response
            } unreadable: { count in
                failure = .malformedResponse(port: port.name, detail: "unreadable message of \(count) bytes")
            }
            return failure != nil || engine.state != .connected || ids.contains { early[$0] != nil }
        }
        if let failure { throw failure }
        if let found = take() { return found }
        if engine.state != .connected { throw .lostConnection(port: port.name) }
        throw .timeout(port: port.name, command: command, seconds: timeout ?? options.commandTimeout)
    }

    /// Answers that arrived for ``submit(_:)``ted requests before anyone asked for them.
    private var early: [UInt16: Response] = [:]

    /// Goes quiet and releases the port (the vendor's `closeConnection`).
    public func close() {
        logLinkStatistics()
        log(.state, "session closed")
        engine.disconnect()
        try? driver.pump()
        port.close()
    }

    /// Routes every message that has arrived: responses to `response`, events to where they
    /// belong (announcements to ``info``, tag reads to the report buffer).
    func takeMessages(response: (ResponseMessage) -> Void = { _ in }, unreadable: (Int) -> Void = { _ in }) {
        while let message = engine.receive() {
            guard let header = try? MessageHeader.decode(message) else {
                unreadable(message.count)
                continue
            }
            switch header.kind {
            case .response:
                if let decoded = try? ResponseMessage.decode(message) { response(decoded) } else { unreadable(message.count) }
            case .event:
                if let announced = try? Announcement.decode(message) {
                    info = announced.info
                } else if let event = try? InventoryEvent.decode(message) {
                    switch event {
                    case .tagReports(let batch):
                        reports.append(contentsOf: batch)
                        log(.inventoryEvents, "\(batch.count) reads")
                        if options.logger.isEnabled(.inventoryDetail) {
                            for r in batch {
                                log(.inventoryDetail, "read \(hexString(r.epc)) at \(r.milliseconds) ms, \(r.frequencyKHz) kHz, "
                                    + "RSSI I \(Double(r.rssiITenthsDBm) / 10) Q \(Double(r.rssiQTenthsDBm) / 10) dBm")
                            }
                        }
                    case .stopped(let reason):
                        inventoryStopped = reason
                        log(.inventoryEvents, "the reader stopped the inventory: \(reason)")
                    case .status(let rounds):
                        // In order on the link: the final one arrives before stop's answer, and
                        // none of an old inventory after a new one's start.
                        inventoryRounds = roundsBeforeResumption + Int(rounds)
                    }
                } else if let progress = try? AntennaTuningProgress.decode(message) {
                    tuningProgress.append(progress)
                } else {
                    unsolicited.append(message)
                }
            case .request:
                unsolicited.append(message)
            }
        }
    }

    // MARK: Inventory

    /// Starts an inventory on the reader (vendor `startInventory`); reads then arrive while
    /// audio is pumped, see ``collect(forAtMost:until:)``. A reader whose region is not set
    /// refuses with ``ReaderError/rejected(port:command:status:)`` (REGION_NOT_SET).
    public func startInventory(_ parameters: InventoryParameters) throws(ReaderError) {
        inventoryStopped = nil
        _ = try call(.startInventory(parameters))
        inventory = parameters
        log(.inventory, "inventory started: power \(Double(parameters.initialPowerTenthsDBm) / 10) dBm, session \(parameters.session)")
        inventoryRounds = 0
        roundsBeforeResumption = 0
    }

    /// Query rounds the running inventory has run, as the reader last said (vendor
    /// `UgiInventory.numInventoryRounds`); rounds run before a lost connection count too.
    /// Exact once ``stopInventory()`` has returned: the reader sends its count before it
    /// answers the stop.
    public private(set) var inventoryRounds = 0
    private var roundsBeforeResumption = 0

    /// The parameters of the inventory this session started and has not stopped.
    public internal(set) var inventory: InventoryParameters?
    /// Whether this session started an inventory that has not been stopped.
    public var inventoryRunning: Bool { inventory != nil }
    /// Times the running inventory was cut by a lost connection and resumed by itself.
    public private(set) var inventoryResumptions = 0

    /// Stops the reader's inventory; returns once no more reads will come.
    public func stopInventory() throws(ReaderError) {
        inventory = nil
        if engine.state == .connected { _ = try call(.stopInventory) }
        takeMessages()
        log(.inventory, "inventory stopped after \(inventoryRounds) rounds")
    }

    /// The battery's state (vendor `getBatteryInfo`); not while an inventory runs (nothing
    /// is sent then).
    public func batteryInfo() throws(ReaderError) -> BatteryInfo {
        guard !inventoryRunning else { throw .inventoryRunning(port: port.name) }
        let response = try call(.getBattery)
        guard case .battery(let info) = response else {
            throw .malformedResponse(port: port.name, detail: "getBattery answered with \(response.opcode)")
        }
        log(.batteryStatusInternal, "battery \(info.millivolts) mV")
        log(.batteryStatus, "battery \(info.percentRemaining) %, \(info.minutesRemaining) min, charging \(info.isCharging)")
        return info
    }

    // MARK: Tag access (while an inventory runs)

    /// Reads `bank` from byte `offset` (even); `maxBytes` 0 reads to the end of the bank
    /// (vendor `readTag`). Returns the vendor's result and the bytes read.
    public func readTag(_ epc: UgiEpc, bank: UgiMemoryBank, offset: Int, maxBytes: Int,
                        password: UInt32 = 0) throws(ReaderError) -> (status: TagAccessStatus, data: [UInt8]) {
        try checkEven("offset", offset)
        let words = (maxBytes + 1) / 2
        let answer = try tagAccess(epc, .read(bank: bank, wordPointer: UInt16(clamping: offset / 2),
                                             wordCount: UInt16(clamping: words), password: password))
        var bytes: [UInt8] = []
        for word in answer.words { bytes.append(UInt8(word >> 8)); bytes.append(UInt8(word & 0xFF)) }
        return (answer.status, maxBytes > 0 ? Array(bytes.prefix(maxBytes)) : bytes)
    }

    /// Writes `data` (even length) into `bank` at byte `offset` (even) (vendor `writeTag`).
    public func writeTag(_ epc: UgiEpc, bank: UgiMemoryBank, offset: Int, data: [UInt8],
                         password: UInt32 = 0) throws(ReaderError) -> TagAccessStatus {
        try checkEven("offset", offset)
        try checkEven("data", data.count)
        let words = stride(from: 0, to: data.count, by: 2).map { UInt16(data[$0]) << 8 | UInt16(data[$0 + 1]) }
        return try tagAccess(epc, .write(bank: bank, wordPointer: UInt16(clamping: offset / 2),
                                         words: words, password: password)).status
    }

    /// Gives the tag `epc` the EPC `newEpc`, PC length and CRC included (vendor `programTag`).
    public func programTag(_ epc: UgiEpc, to newEpc: UgiEpc, password: UInt32 = 0) throws(ReaderError) -> TagAccessStatus {
        try checkEven("new EPC", newEpc.bytes.count)
        return try tagAccess(epc, .programEPC(newEPC: newEpc.bytes, password: password)).status
    }

    /// Vendor `setTagAccessPassword`.
    public func setTagAccessPassword(_ epc: UgiEpc, to new: UInt32, password: UInt32 = 0) throws(ReaderError) -> TagAccessStatus {
        try tagAccess(epc, .setAccessPassword(new, password: password)).status
    }

    /// Vendor `setTagKillPassword`.
    public func setTagKillPassword(_ epc: UgiEpc, to new: UInt32, password: UInt32 = 0) throws(ReaderError) -> TagAccessStatus {
        try tagAccess(epc, .setKillPassword(new, password: password)).status
    }

    /// Applies a Gen2 Lock payload (vendor `lockUnlockTag`; see `Gen2LockPayload` for its bits).
    public func lockUnlockTag(_ epc: UgiEpc, payload: UInt32, password: UInt32 = 0) throws(ReaderError) -> TagAccessStatus {
        try tagAccess(epc, .lock(payload: payload, password: password)).status
    }

    /// Kills the tag for ever (vendor `killTag`).
    public func killTag(_ epc: UgiEpc, killPassword: UInt32) throws(ReaderError) -> TagAccessStatus {
        try tagAccess(epc, .kill(killPassword: killPassword)).status
    }

    private func checkEven(_ field: String, _ value: Int) throws(ReaderError) {
        if value % 2 != 0 || value < 0 { throw .oddTagMemoryBytes(field: field, value: value) }
    }

    func tagAccess(_ epc: UgiEpc, _ operation: TagOperation) throws(ReaderError) -> (status: TagAccessStatus, words: [UInt16]) {
        guard inventoryRunning else { throw .noInventoryRunning(port: port.name) }
        let response = try call(.tagAccess(epc: epc.bytes, operation))
        guard case .tagAccess(let status, let words) = response else {
            throw .malformedResponse(port: port.name, detail: "tag access answered with \(response.opcode)")
        }
        return (status, words)
    }

    /// Pumps audio for up to `seconds` (or until `done`), gathering tag reads.
    ///
    /// A running inventory survives a lost connection as the vendor's did: the link goes
    /// back to handshaking, ``inventoryStopped`` says LOST_CONNECTION meanwhile, and once the
    /// Grokker answers again the same inventory is started again by itself
    /// (``inventoryResumptions`` counts it). Without a running inventory a lost connection
    /// is an error.
    public func collect(forAtMost seconds: Double, until done: () -> Bool = { false }) throws(ReaderError) {
        let end = engine.now + driver.samples(seconds)
        while engine.now < end {
            let remaining = Double(end - engine.now) / Double(engine.sampleRate)
            _ = try pump(forAtMost: remaining) {
                takeMessages()
                return done() || engine.state != .connected
            }
            if done() { return }
            guard engine.state != .connected else { continue }
            guard let parameters = inventory else { throw .lostConnection(port: port.name) }
            inventoryStopped = .lostConnection
            log(.inventory, "inventory interrupted: the connection was lost")
            let back = Double(end - engine.now) / Double(engine.sampleRate)
            _ = try pump(forAtMost: back) {
                takeMessages()
                return engine.state == .connected && !engine.negotiating
            }
            guard engine.state == .connected else { return }
            do {
                roundsBeforeResumption = inventoryRounds
                if let password = grokkerPassword { _ = try call(.authenticateGrokker(password)) }
                _ = try call(.startInventory(parameters))
                inventoryStopped = nil
                inventoryResumptions += 1
            } catch .lostConnection {
                continue
            }
        }
    }

    /// Goes quiet (no handshaking) and lets `seconds` of audio pass: the pause between
    /// connection attempts. The next ``connect()`` handshakes again.
    public func rest(forAtMost seconds: Double) throws(ReaderError) {
        engine.disconnect()
        _ = try pump(forAtMost: seconds) { false }
    }

    /// Keeps the link up for `seconds` of audio with nothing to do (keep-alives, events).
    public func idle(forAtMost seconds: Double) throws(ReaderError) {
        _ = try pump(forAtMost: seconds) {
            takeMessages()
            return false
        }
    }

    /// The tag reads gathered so far, oldest first; the buffer is emptied.
    public func takeReports() -> [TagReport] {
        defer { reports.removeAll(keepingCapacity: true) }
        return reports
    }

    func pump(forAtMost seconds: Double, until done: () -> Bool) throws(ReaderError) -> Bool {
        do {
            return try driver.run(forAtMost: seconds) {
                noteState()
                return done()
            }
        } catch {
            throw .audio(error)
        }
    }
}
