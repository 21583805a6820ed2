import Foundation
import GrokAudio
import GrokFirmware
import GrokLink
import GrokProtocol
import Synchronization

/// The vendor's inventory delegate (`UgiInventoryDelegate`). Every method is optional (the
/// extension below gives each a default). Methods are called on the reader's callback
/// queue, one at a time, in order.
public protocol UgiInventoryDelegate: AnyObject {
    /// `inventoryDidStart`.
    func inventoryDidStart()
    /// `inventoryDidStopWithResult`.
    func inventoryDidStop(_ result: InventoryStopReason)
    /// `inventoryFilter`: return true to ignore the tag entirely. Called on the reader's
    /// thread, so it must be fast and must not block.
    func inventoryFilter(_ epc: UgiEpc) -> Bool
    /// `inventoryFilterLowLevel`: return true to ignore the tag entirely, asked first, with
    /// the EPC as the reader sent it, before any tag object or history exists. Called on the
    /// reader's thread: it must be fast and must not block.
    func inventoryFilterLowLevel(_ epc: UgiEpc) -> Bool
    /// `inventoryTagFound:withDetailedPerReadData:`.
    func inventoryTagFound(_ tag: UgiTag, withDetailedPerReadData data: [UgiDetailedPerReadData]?)
    /// `inventoryTagSubsequentFinds:numFinds:withDetailedPerReadData:`.
    func inventoryTagSubsequentFinds(_ tag: UgiTag, numFinds: Int, withDetailedPerReadData data: [UgiDetailedPerReadData]?)
    /// `inventoryTagChanged:isFirstFind:`.
    func inventoryTagChanged(_ tag: UgiTag, isFirstFind: Bool)
    /// `inventoryHistoryInterval`: a history interval ended with at least one tag visible.
    func inventoryHistoryInterval()
}

extension UgiInventoryDelegate {
    public func inventoryDidStart() {}
    public func inventoryDidStop(_ result: InventoryStopReason) {}
    public func inventoryFilter(_ epc: UgiEpc) -> Bool { false }
    public func inventoryFilterLowLevel(_ epc: UgiEpc) -> Bool { false }
    public func inventoryTagFound(_ tag: UgiTag, withDetailedPerReadData data: [UgiDetailedPerReadData]?) {}
    public func inventoryTagSubsequentFinds(_ tag: UgiTag, numFinds: Int, withDetailedPerReadData data: [UgiDetailedPerReadData]?) {}
    public func inventoryTagChanged(_ tag: UgiTag, isFirstFind: Bool) {}
    public func inventoryHistoryInterval() {}
}

struct RegionNamesResult: Sendable {
    let names: [String]
    let selected: Int?
}

/// Carries a reference that is only ever used on one queue at a time across the
/// concurrency checker (the delegate: called on the callback queue only).
struct QueueConfined<T>: @unchecked Sendable {
    let value: T
}

/// An inventory a ``Reader`` runs (vendor `UgiInventory`): its tags, its state, and how to
/// stop, pause and resume it. Safe to use from any thread.
public final class UgiInventory: Sendable {
    public let configuration: UgiRfidConfiguration
    public let startTime: Date
    let delegate: QueueConfined<any UgiInventoryDelegate>

    struct Shared {
        var tags: [UgiTag] = []
        var byEpc: [UgiEpc: Int] = [:]
        var isScanning = true
        var isPaused = false
        var completed: InventoryStopReason?
        var rounds = 0
        /// Rounds of the earlier stretches, before a pause.
        var roundsBeforePause = 0
    }
    let shared = Mutex(Shared())
    let reader: Reader

    /// The tags it is about (EPC lists): sent to the reader as the vendor's host sends them,
    /// and applied by the host to what arrives.
    let selection: UgiTagSelection

    init(configuration: UgiRfidConfiguration, delegate: any UgiInventoryDelegate, reader: Reader,
         selection: UgiTagSelection) {
        self.configuration = configuration
        self.selection = selection
        self.delegate = QueueConfined(value: delegate)
        self.reader = reader
        startTime = Date()
    }

    /// Every tag found so far, in the order first found (vendor `tags`).
    public var tags: [UgiTag] { shared.withLock { $0.tags } }
    /// Vendor `getTagByEpc`.
    public func getTagByEpc(_ epc: UgiEpc) -> UgiTag? { shared.withLock { s in s.byEpc[epc].map { s.tags[$0] } } }
    /// Vendor `isScanning`: started and not stopped.
    public var isScanning: Bool { shared.withLock { $0.isScanning } }
    /// Vendor `isPaused`.
    public var isPaused: Bool { shared.withLock { $0.isPaused } }
    /// Query rounds the reader has run for this inventory, pauses and reconnections
    /// included (vendor `numInventoryRounds`), from the round counter in the reader's
    /// packets.
    public var numInventoryRounds: Int { shared.withLock { $0.rounds } }
    /// How it ended, once it has (vendor `completedReturnValue`).
    public var completedReturnValue: InventoryStopReason? { shared.withLock { $0.completed } }

    /// Stops the inventory; `completion` runs on the reader's callback queue once it has
    /// (vendor `stopInventoryWithCompletion`).
    public func stopInventory(completion: @escaping @Sendable () -> Void = {}) {
        reader.post(.stop(self, completion))
    }

    /// Vendor `pauseInventory`: the reader stops scanning; tags are kept.
    public func pauseInventory() { reader.post(.pause(self)) }
    /// Vendor `resumeInventory` (and with a new configuration).
    public func resumeInventory(configuration: UgiRfidConfiguration? = nil) { reader.post(.resume(self, configuration)) }

    // MARK: Tag access (vendor: on the active inventory, completion called later)

    /// Runs `operation` on the reader's thread while this inventory is the active one, and
    /// hands its result to `completion` on the callback queue. A stopped inventory answers
    /// INVENTORY_STOPPED.
    private func access<T: Sendable>(_ operation: @escaping @Sendable (ReaderSession) throws(ReaderError) -> T,
                                     stopped: T, completion: @escaping @Sendable (Result<T, ReaderError>) -> Void) {
        let queue = reader.callbackQueue
        guard isScanning else {
            queue.async { completion(.success(stopped)) }
            return
        }
        reader.post(.access(self) { session in
            let result: Result<T, ReaderError>
            do throws(ReaderError) { result = .success(try operation(session)) } catch { result = .failure(error) }
            queue.async { completion(result) }
        })
    }

    /// Vendor `programTag:toEpc:withPassword:whenCompleted:`.
    public func programTag(_ epc: UgiEpc, toEpc newEpc: UgiEpc, withPassword password: UInt32 = 0,
                           whenCompleted completion: @escaping @Sendable (Result<TagAccessStatus, ReaderError>) -> Void) {
        access({ (session) throws(ReaderError) in try session.programTag(epc, to: newEpc, password: password) },
               stopped: .inventoryStopped, completion: completion)
    }

    /// Vendor `writeTag:memoryBank:offset:data:previousData:withPassword:whenCompleted:`.
    /// `previousData` ("previous value for this data, nil if unknown", the header says) must
    /// be as long as `data`; the vendor's write request has no field for it (only the new
    /// bytes go to the reader, docs/vendor-protocol.md "Pending requests"), and what the
    /// vendor's library does with it beyond that is not known, so it is checked, not sent.
    public func writeTag(_ epc: UgiEpc, bank: UgiMemoryBank, offset: Int, data: [UInt8], previousData: [UInt8]? = nil,
                         password: UInt32 = 0,
                         whenCompleted completion: @escaping @Sendable (Result<TagAccessStatus, ReaderError>) -> Void) {
        access({ (session) throws(ReaderError) in
            if let previousData, previousData.count != data.count {
                throw .invalidArgument(field: "previousData", value: "\(previousData.count) bytes",
                                       allowed: "as many bytes as data (\(data.count)), or nil")
            }
            return try session.writeTag(epc, bank: bank, offset: offset, data: data, password: password)
        }, stopped: .inventoryStopped, completion: completion)
    }

    /// Vendor `readTag:memoryBank:offset:minNumBytes:maxNumBytes:whenCompleted:`: at least
    /// `minNumBytes` and at most `maxNumBytes` (both even), sent as the vendor sends them.
    public func readTag(_ epc: UgiEpc, bank: UgiMemoryBank, offset: Int, minNumBytes: Int, maxNumBytes: Int,
                        whenCompleted completion: @escaping @Sendable (Result<(status: TagAccessStatus, data: [UInt8]), ReaderError>) -> Void) {
        access({ (session) throws(ReaderError) in
            for (field, value) in [("minNumBytes", minNumBytes), ("maxNumBytes", maxNumBytes)] {
                guard (0...254).contains(value) else { throw .invalidArgument(field: field, value: String(value), allowed: "0 to 254") }
                guard value % 2 == 0 else { throw .oddTagMemoryBytes(field: field, value: value) }
            }
            guard minNumBytes <= maxNumBytes else {
                throw .invalidArgument(field: "minNumBytes", value: String(minNumBytes), allowed: "at most maxNumBytes (\(maxNumBytes))")
            }
            return try session.readTag(epc, bank: bank, offset: offset, minBytes: minNumBytes, maxBytes: maxNumBytes)
        }, stopped: (status: TagAccessStatus.inventoryStopped, data: [UInt8]()), completion: completion)
    }

    /// ``readTag(_:bank:offset:minNumBytes:maxNumBytes:whenCompleted:)`` asking for exactly
    /// `maxNumBytes`.
    public func readTag(_ epc: UgiEpc, bank: UgiMemoryBank, offset: Int, maxNumBytes: Int, password: UInt32 = 0,
                        whenCompleted completion: @escaping @Sendable (Result<(status: TagAccessStatus, data: [UInt8]), ReaderError>) -> Void) {
        access({ (session) throws(ReaderError) in
            try session.readTag(epc, bank: bank, offset: offset, maxBytes: maxNumBytes, password: password)
        }, stopped: (status: TagAccessStatus.inventoryStopped, data: [UInt8]()), completion: completion)
    }

    /// Vendor `setTagAccessPassword:password:newPassword:whenCompleted:`.
    public func setTagAccessPassword(_ epc: UgiEpc, password: UInt32, newPassword: UInt32,
                                     whenCompleted completion: @escaping @Sendable (Result<TagAccessStatus, ReaderError>) -> Void) {
        access({ (session) throws(ReaderError) in try session.setTagAccessPassword(epc, to: newPassword, password: password) },
               stopped: .inventoryStopped, completion: completion)
    }

    /// Vendor `setTagKillPassword:password:newPassword:whenCompleted:`.
    public func setTagKillPassword(_ epc: UgiEpc, password: UInt32, newPassword: UInt32,
                                   whenCompleted completion: @escaping @Sendable (Result<TagAccessStatus, ReaderError>) -> Void) {
        access({ (session) throws(ReaderError) in try session.setTagKillPassword(epc, to: newPassword, password: password) },
               stopped: .inventoryStopped, completion: completion)
    }

    /// Vendor `lockUnlockTag:maskAndAction:password:whenCompleted:` (the 20-bit Gen2 payload).
    public func lockUnlockTag(_ epc: UgiEpc, maskAndAction: UInt32, password: UInt32 = 0,
                              whenCompleted completion: @escaping @Sendable (Result<TagAccessStatus, ReaderError>) -> Void) {
        access({ (session) throws(ReaderError) in try session.lockUnlockTag(epc, maskAndAction: maskAndAction, password: password) },
               stopped: .inventoryStopped, completion: completion)
    }

    /// Killing a tag: the vendor protocol has no kill request; completes with
    /// ``ReaderError/notSupported(port:feature:)``.
    public func killTag(_ epc: UgiEpc, password killPassword: UInt32,
                        whenCompleted completion: @escaping @Sendable (Result<TagAccessStatus, ReaderError>) -> Void) {
        access({ (session) throws(ReaderError) in try session.killTag(epc, killPassword: killPassword) },
               stopped: .inventoryStopped, completion: completion)
    }

    /// Vendor `customCommandToTag:command:commandBits:responseBitLengthNoHeaderBit:responseBitLengthWithHeaderBit:receiveTimeoutUsec:whenCompleted:`.
    public func customCommandToTag(_ epc: UgiEpc, command: [UInt8], commandBits: Int, responseBitLengthNoHeaderBit: Int,
                                   responseBitLengthWithHeaderBit: Int, receiveTimeoutUsec: Int,
                                   whenCompleted completion: @escaping @Sendable (Result<UgiCustomCommandResult, ReaderError>) -> Void) {
        access({ (session) throws(ReaderError) in
            try session.customCommandToTag(epc, command: command, commandBits: commandBits,
                                           responseBitLengthNoHeaderBit: responseBitLengthNoHeaderBit,
                                           responseBitLengthWithHeaderBit: responseBitLengthWithHeaderBit,
                                           receiveTimeoutUsec: receiveTimeoutUsec)
        }, stopped: UgiCustomCommandResult(status: .inventoryStopped, data: [], bits: 0), completion: completion)
    }

    /// Vendor `changePowerInitial:min:max:whenCompleted:` (dBm).
    public func changePower(initial: Double, min: Double, max: Double,
                            whenCompleted completion: @escaping @Sendable (Result<TagAccessStatus, ReaderError>) -> Void) {
        access({ (session) throws(ReaderError) in try session.changePower(initial: initial, min: min, max: max) },
               stopped: .inventoryStopped, completion: completion)
    }

    func publish(_ tracker: InventoryTracker) {
        let tags = tracker.tags
        shared.withLock { s in
            s.tags = tags
            s.byEpc = Dictionary(uniqueKeysWithValues: tags.enumerated().map { ($0.element.epc, $0.offset) })
        }
    }
}

/// One Grokker on one audio port, driven by a thread of its own (vendor: the `Ugi`
/// singleton's connection, one per jack): ``openConnection()`` returns at once, the thread
/// handshakes, keeps the link up, runs inventories and calls delegates and listeners on
/// the callback queue.
public final class Reader: Sendable {
    public let name: String
    let options: ReaderOptions
    let callbackQueue: DispatchQueue
    let makePort: @Sendable () throws -> any AudioPort

    enum Request: Sendable {
        case start(UgiInventory)
        case stop(UgiInventory, @Sendable () -> Void)
        case pause(UgiInventory)
        case resume(UgiInventory, UgiRfidConfiguration?)
        /// Runs on the reader's thread with its session (tag access during an inventory).
        case access(UgiInventory, @Sendable (ReaderSession) -> Void)
        /// Runs on the reader's thread with its session, connected or not; `refuse` answers
        /// it instead when the thread ends without a session (the port would not open).
        case perform(@Sendable (ReaderSession) -> Void, refuse: @Sendable (ReaderError) -> Void)
    }

    struct Shared {
        var state = ConnectionState.notConnected
        var info: ReaderInfo?
        var running = false
        var closing = false
        var requests: [Request] = []
        var listeners: [Int: @Sendable (ConnectionState) -> Void] = [:]
        var nextToken = 0
        var active: UgiInventory?
        var failure: ReaderError?
        var connectionAttempts = 0
        var audioSamples: Int64 = 0
        var jackPlugged: Bool?
        var inventoryListeners: [Int: @Sendable (VendorInventoryState) -> Void] = [:]
        /// The logger the reader's session uses from its next step (vendor logging set at run time).
        var logger: UgiLogger
        var loggerChanged = false
        /// The sounds set through this reader, sent again after every reconnection as the
        /// vendor host does (a unit that reset has forgotten them).
        var sounds = ReaderSounds()
        /// Operations asked of the reader's thread and not yet completed (``ongoingOperation``).
        var operationsInFlight = 0
    }
    let shared: Mutex<Shared>

    /// - Parameters:
    ///   - name: how the port is known (`sim:0`, `alsa:hw:1,0`).
    ///   - callbackQueue: where delegates, listeners and completions run.
    ///   - makePort: opens the audio port, on the reader's own thread.
    public init(name: String, options: ReaderOptions = ReaderOptions(), callbackQueue: DispatchQueue = DispatchQueue(label: "UGrokIt.callbacks"),
                makePort: @escaping @Sendable () throws -> any AudioPort) {
        self.name = name
        self.options = options
        self.callbackQueue = callbackQueue
        self.makePort = makePort
        self.shared = Mutex(Shared(logger: options.logger))
    }

    /// Vendor `connectionState`.
    public var connectionState: ConnectionState { shared.withLock { $0.state } }
    /// What the reader said it is, once connected.
    public var readerInfo: ReaderInfo? { shared.withLock { $0.info } }
    /// The inventory running now (vendor `activeInventory`).
    public var activeInventory: UgiInventory? { shared.withLock { $0.active } }
    /// Why the port could not be used, if it could not.
    public var lastError: ReaderError? { shared.withLock { $0.failure } }
    /// Connection attempts (handshakes started) since ``openConnection()``.
    public var connectionAttempts: Int { shared.withLock { $0.connectionAttempts } }
    /// Samples of audio the reader's thread has pumped since ``openConnection()``.
    public var audioSamples: Int64 { shared.withLock { $0.audioSamples } }
    /// Vendor `isAnythingPluggedIntoAudioJack`: false only when the port has said the jack
    /// is empty (true before the port is open).
    public var isAnythingPluggedIntoAudioJack: Bool { shared.withLock { $0.jackPlugged != false } }

    /// The inventory-state listener (vendor `UgiInventoryDelegate` state changes, in the
    /// vendor protocol's terms: starting, running, stopping, completed, refused,
    /// interrupted): `listener` runs on the callback queue at every change. Returns a token
    /// for ``removeInventoryStateListener(_:)``.
    @discardableResult
    public func addInventoryStateListener(_ listener: @escaping @Sendable (VendorInventoryState) -> Void) -> Int {
        shared.withLock { s in
            s.nextToken += 1
            s.inventoryListeners[s.nextToken] = listener
            return s.nextToken
        }
    }

    public func removeInventoryStateListener(_ token: Int) {
        shared.withLock { _ = $0.inventoryListeners.removeValue(forKey: token) }
    }

    /// Vendor `addConnectionStateListener`: `listener` runs on the callback queue at every
    /// change. Returns a token for ``removeConnectionStateListener(_:)``.
    @discardableResult
    public func addConnectionStateListener(_ listener: @escaping @Sendable (ConnectionState) -> Void) -> Int {
        shared.withLock { s in
            s.nextToken += 1
            s.listeners[s.nextToken] = listener
            return s.nextToken
        }
    }

    public func removeConnectionStateListener(_ token: Int) {
        _ = shared.withLock { $0.listeners.removeValue(forKey: token) }
    }

    /// Vendor `openConnection`: returns at once; the connection follows.
    public func openConnection() {
        let start = shared.withLock { s -> Bool in
            s.closing = false
            if s.running { return false }
            s.running = true
            return true
        }
        guard start else { return }
        let thread = Thread { [self] in run() }
        thread.name = "UGrokIt \(name)"
        thread.start()
    }

    /// Vendor `closeConnection`: returns at once; the thread stops an inventory, goes quiet
    /// and releases the port.
    public func closeConnection() {
        shared.withLock { $0.closing = true }
    }

    /// Vendor `startInventory:withConfiguration:`: every tag. An invalid configuration is
    /// refused before anything is sent.
    @discardableResult
    public func startInventory(_ delegate: any UgiInventoryDelegate,
                               withConfiguration configuration: UgiRfidConfiguration) throws(ConfigurationError) -> UgiInventory {
        try start(delegate, configuration, tags: .all)
    }

    /// Vendor `startInventory:withConfiguration:withEpc:`: only this tag, selected on the
    /// reader (a SELECT on the EPC bank), so the reader spends its air time on it.
    @discardableResult
    public func startInventory(_ delegate: any UgiInventoryDelegate, withConfiguration configuration: UgiRfidConfiguration,
                               withEpc epc: UgiEpc) throws(ConfigurationError) -> UgiInventory {
        var selected = configuration
        selected.selectBank = .epc
        selected.selectOffset = 32
        selected.selectMask = epc.bytes
        selected.selectMaskBitLength = epc.bytes.count * 8
        return try start(delegate, selected, tags: .all)
    }

    /// Vendor `startInventory:withConfiguration:withEpcs:`: only these tags. As the vendor's
    /// host does, the list goes to the reader, which reports and sounds only for them, when
    /// the configuration has no select mask and the list fits (226 bytes: seventeen 96-bit
    /// EPCs); otherwise the host filters (``UgiTagSelection``). The delegate hears of
    /// nothing else either way.
    @discardableResult
    public func startInventory(_ delegate: any UgiInventoryDelegate, withConfiguration configuration: UgiRfidConfiguration,
                               withEpcs epcs: [UgiEpc]) throws(ConfigurationError) -> UgiInventory {
        try start(delegate, configuration, tags: .only(epcs))
    }

    /// Vendor `startInventoryIgnoringEpcs`: every tag but these (filtered on the host, as
    /// the vendor's does).
    @discardableResult
    public func startInventory(_ delegate: any UgiInventoryDelegate, withConfiguration configuration: UgiRfidConfiguration,
                               ignoringEpcs epcs: [UgiEpc]) throws(ConfigurationError) -> UgiInventory {
        try start(delegate, configuration, tags: .ignoring(epcs))
    }

    private func start(_ delegate: any UgiInventoryDelegate, _ configuration: UgiRfidConfiguration,
                       tags: UgiTagSelection) throws(ConfigurationError) -> UgiInventory {
        try configuration.validate()
        let inventory = UgiInventory(configuration: configuration, delegate: delegate, reader: self, selection: tags)
        post(.start(inventory))
        return inventory
    }

    // MARK: Housekeeping on the reader's thread

    /// Runs `operation` with the session on the reader's thread; the result goes to
    /// `completion` on the callback queue. A reader that is not open (no
    /// ``openConnection()``, or closed) answers ``ReaderError/notOpen(port:)`` at once.
    private func perform<T: Sendable>(_ operation: @escaping @Sendable (ReaderSession) throws(ReaderError) -> T,
                                      completion: @escaping @Sendable (Result<T, ReaderError>) -> Void) {
        let queue = callbackQueue
        let request = Request.perform({ [self] session in
            let result: Result<T, ReaderError>
            do throws(ReaderError) { result = .success(try operation(session)) } catch { result = .failure(error) }
            shared.withLock { $0.operationsInFlight -= 1 }
            queue.async { completion(result) }
        }, refuse: { [self] error in
            shared.withLock { $0.operationsInFlight -= 1 }
            queue.async { completion(.failure(error)) }
        })
        // Checked and queued under one lock: the thread takes its last requests and stops
        // running under the same lock, so a request is either taken or refused here.
        let accepted = shared.withLock { s -> Bool in
            guard s.running, !s.closing else { return false }
            s.operationsInFlight += 1
            s.requests.append(request)
            return true
        }
        if !accepted {
            let name = self.name
            queue.async { completion(.failure(.notOpen(port: name))) }
        }
    }

    func perform<T: Sendable>(_ operation: @escaping @Sendable (ReaderSession) throws(ReaderError) -> T)
        async throws(ReaderError) -> T {
        let result = await withCheckedContinuation { continuation in
            perform(operation) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    /// Vendor `setRegion`: by vendor name, code or number. Returns the reader information
    /// with the new region.
    public func setRegion(_ name: String, catalogue: RegionCatalogue? = nil) async throws(ReaderError) -> ReaderInfo {
        try await perform { (session) throws(ReaderError) in try session.setRegion(name, catalogue: catalogue) }
    }

    /// Vendor `getRegionNames`: the names, and the index of the region set (once connected).
    /// With a verified region `catalogue`, the names are those this reader may choose.
    public func regionNames(catalogue: RegionCatalogue? = nil) async throws(ReaderError) -> (names: [String], selected: Int?) {
        let both: RegionNamesResult = try await perform { session in
            let names = session.regionNames(catalogue: catalogue)
            return RegionNamesResult(names: names.names, selected: names.selected)
        }
        return (both.names, both.selected)
    }

    /// Vendor battery info (not while an inventory runs).
    public func batteryInfo() async throws(ReaderError) -> BatteryInfo {
        try await perform { (session) throws(ReaderError) in try session.batteryInfo() }
    }

    /// Vendor `testConnection` on the reader's thread: the link is closed, connected again
    /// and `rounds` echoes of 100 random bytes are run; returns how many came back equal.
    /// The reader's thread connects again afterwards.
    public func testConnection(rounds: Int = 10) async throws(ReaderError) -> Int {
        try await perform { (session) throws(ReaderError) in try session.testConnection(rounds: rounds) }
    }

    /// Vendor diagnostics, reset afterwards when asked.
    public func diagnostics(reset: Bool = false) async throws(ReaderError) -> UgiDiagnostics {
        try await perform { (session) throws(ReaderError) in try session.diagnostics(reset: reset) }
    }

    func post(_ request: Request) {
        shared.withLock { $0.requests.append(request) }
    }

    // MARK: The reader's thread

    private func setState(_ state: ConnectionState, info: ReaderInfo? = nil) {
        let listeners: [@Sendable (ConnectionState) -> Void] = shared.withLock { s in
            guard s.state != state || info != nil else { return [] }
            s.state = state
            if let info { s.info = info }
            return Array(s.listeners.values)
        }
        for listener in listeners { callbackQueue.async { listener(state) } }
    }

    private func deliver(_ inventory: UgiInventory, _ body: @escaping @Sendable (any UgiInventoryDelegate) -> Void) {
        let delegate = inventory.delegate
        callbackQueue.async { body(delegate.value) }
    }

    private func run() {
        let session: ReaderSession
        do {
            session = try ReaderSession(port: try makePort(), options: options)
        } catch {
            let failure = (error as? ReaderError) ?? (error as? AudioError).map(ReaderError.audio)
            let left = shared.withLock { s in
                s.failure = failure
                s.running = false
                defer { s.requests.removeAll() }
                return s.requests
            }
            for case .perform(_, let refuse) in left { refuse(failure ?? .notOpen(port: name)) }
            return
        }
        session.log(.platformSpecific, "reader thread '\(Thread.current.name ?? "")' drives \(session.port.name)")
        let queue = callbackQueue
        session.inventoryStateListeners = [{ [self] state in
            for listener in shared.withLock({ Array($0.inventoryListeners.values) }) { queue.async { listener(state) } }
        }]
        // A link reset inside a request is the vendor's CONNECTING, then CONNECTED again.
        session.linkRecoveryListeners = [{ [self] event in
            switch event {
            case .started: setState(.connecting)
            case .reconnected: setState(.connected)
            case .failed: setState(session.connectionState)
            }
        }]
        var tracker: InventoryTracker?
        var current: UgiInventory?
        // The audio sample the current UgiInventory first started at: its reads are timed from
        // there, across pauses and reconnections (each starts the reader's inventory again).
        var origin: Int64 = 0
        var lost = false
        var connecting = false
        var pause = options.minimumRetryPause
        while !shared.withLock({ $0.closing }) {
            defer { shared.withLock { s in s.audioSamples = session.link.now; s.jackPlugged = session.port.jackPlugged } }
            if let logger = shared.withLock({ s in defer { s.loggerChanged = false }; return s.loggerChanged ? s.logger : nil }) {
                session.options.logger = logger
            }
            do throws(ReaderError) {
                if session.connectionState != .connected {
                    setState(.connecting)
                    shared.withLock { $0.connectionAttempts += 1 }
                    connecting = true
                    let info = try session.connect()
                    connecting = false
                    pause = options.minimumRetryPause
                    resendSounds(session)
                    setState(.connected, info: info)
                    // A Grokker that comes back starts a new session: the inventory that was
                    // running is started again, as the vendor's LOST_CONNECTION promised.
                    if let current, !current.isPaused {
                        try session.startInventory(current.configuration, tags: current.selection)
                        if lost { deliver(current) { $0.inventoryDidStart() } }
                    }
                    lost = false
                }
                for request in shared.withLock({ s in defer { s.requests.removeAll() }; return s.requests }) {
                    switch request {
                    case .start(let inventory):
                        if let old = current { try finish(old, session: session, reason: .ok) }
                        try session.startInventory(inventory.configuration, tags: inventory.selection)
                        // Reads of an earlier inventory that were still on their way belong to it.
                        _ = session.takeReports()
                        origin = session.inventoryStartSample ?? session.link.now
                        let fresh = InventoryTracker(start: inventory.startTime, configuration: inventory.configuration)
                        let box = inventory.delegate
                        let selection = inventory.selection
                        fresh.filter = { epc in
                            box.value.inventoryFilterLowLevel(epc) || !selection.includes(epc) || box.value.inventoryFilter(epc)
                        }
                        tracker = fresh
                        current = inventory
                        shared.withLock { $0.active = inventory }
                        deliver(inventory) { $0.inventoryDidStart() }
                    case .stop(let inventory, let completion):
                        if inventory === current {
                            try finish(inventory, session: session, reason: .ok)
                            current = nil
                            tracker = nil
                        }
                        callbackQueue.async { completion() }
                    case .pause(let inventory):
                        if inventory === current, !inventory.isPaused {
                            try session.stopInventory()
                            let rounds = session.inventoryRounds
                            inventory.shared.withLock { s in
                                s.isPaused = true
                                s.roundsBeforePause += rounds
                                s.rounds = s.roundsBeforePause
                            }
                        }
                    case .access(let inventory, let body):
                        if inventory === current { body(session) }
                    case .perform(let body, _):
                        body(session)
                    case .resume(let inventory, let configuration):
                        if inventory === current, inventory.isPaused {
                            try session.startInventory(configuration ?? inventory.configuration, tags: inventory.selection)
                            inventory.shared.withLock { $0.isPaused = false }
                        }
                    }
                }
                if let running = current, let tracker, !running.isPaused {
                    try session.collect(forAtMost: 0.05)
                    let restartedAfter = (session.inventoryStartSample ?? origin) - origin
                    let offset = Int(Double(restartedAfter) * 1000 / Double(session.link.sampleRate))
                    for var report in session.takeReports() {
                        report.milliseconds += UInt32(clamping: offset)
                        tracker.take(report)
                    }
                    let rounds = session.inventoryRounds
                    running.shared.withLock { $0.rounds = $0.roundsBeforePause + rounds }
                    let events = tracker.drainEvents()
                    running.publish(tracker)
                    for event in events { dispatch(event, to: running) }
                    if !session.inventoryRunning {
                        if case .completed(let reason)? = session.inventory?.state, session.connectionState == .connected {
                            // The reader ended it by itself (single find, a fault).
                            try finish(running, session: session, reason: reason)
                            current = nil
                        } else {
                            // Slave mode ended without a completion, or the link dropped: the
                            // vendor's LOST_CONNECTION; the inventory is started again once
                            // the reader answers a new connection.
                            if !lost {
                                lost = true
                                deliver(running) { $0.inventoryDidStop(.lostConnection) }
                            }
                            session.disconnect()
                        }
                    }
                } else {
                    try session.idle(forAtMost: 0.05)
                }
            } catch {
                if case .audio = error {
                    shared.withLock { $0.failure = error }
                    break
                }
                setState(session.connectionState)
                if connecting {
                    // Nothing answered (or nothing is plugged in): wait, quietly, in audio
                    // time, before the next attempt, rather than retrying at once.
                    connecting = false
                    session.log(.connectionErrors, "\(error.description) Retrying after \(pause) s of quiet.")
                    do throws(ReaderError) {
                        try session.rest(forAtMost: pause)
                    } catch {
                        shared.withLock { $0.failure = error }
                        break
                    }
                    pause = min(options.maximumRetryPause, pause * 2)
                }
            }
        }
        if let current { try? finish(current, session: session, reason: .ok) }
        session.close()
        setState(.notConnected)
        // Whatever was still asked of the reader gets its answer: the connection is closed.
        // The last requests are taken as the thread stops running (later ones are refused).
        for request in shared.withLock({ s in s.running = false; defer { s.requests.removeAll() }; return s.requests }) {
            switch request {
            case .perform(let body, _), .access(_, let body): body(session)
            case .stop(_, let completion): callbackQueue.async { completion() }
            case .start, .pause, .resume: break
            }
        }
    }

    private func finish(_ inventory: UgiInventory, session: ReaderSession, reason: InventoryStopReason) throws(ReaderError) {
        let paused = inventory.isPaused
        if session.inventoryRunning { try session.stopInventory() }
        _ = session.takeReports()
        let rounds = paused ? 0 : session.inventoryRounds
        inventory.shared.withLock { s in
            s.rounds = s.roundsBeforePause + rounds
            s.isScanning = false
            s.completed = reason
        }
        shared.withLock { s in if s.active === inventory { s.active = nil } }
        deliver(inventory) { $0.inventoryDidStop(reason) }
    }

    private func dispatch(_ event: InventoryTrackerEvent, to inventory: UgiInventory) {
        let detailed = inventory.configuration.detailedPerReadData
        switch event {
        case .found(let tag, let data):
            deliver(inventory) { $0.inventoryTagFound(tag, withDetailedPerReadData: detailed ? data : nil) }
        case .subsequentFinds(let tag, let count, let data):
            deliver(inventory) { $0.inventoryTagSubsequentFinds(tag, numFinds: count, withDetailedPerReadData: detailed ? data : nil) }
        case .changed(let tag, let first):
            deliver(inventory) { $0.inventoryTagChanged(tag, isFirstFind: first) }
        case .historyInterval:
            deliver(inventory) { $0.inventoryHistoryInterval() }
        }
    }
}
