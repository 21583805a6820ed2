import Foundation
import GrokAudio
import GrokLink
import GrokProtocol

/// An emulated Grokker: its own modem and packet stack on the device side of the cable, its
/// command handler and persistent state. It is reachable only through audio samples: the
/// cable (or a pipe, or ALSA) hands it what reached its microphone input and takes what it
/// plays back.
///
/// On connect it announces itself (its reader information rides in the handshake answer), so
/// a host knows what it talks to without a round trip.
///
/// Not thread-safe: whoever drives the cable owns it.
public final class EmulatedGrokker: CablePeer {
    /// The device's modem and packet stack; a new one after each restart.
    public private(set) var engine: LinkEngine
    public let handler: GrokkerCommandHandler
    /// The device's own directory (state, flash, logs).
    public var directory: String { handler.store.deviceDirectory }

    /// How far this unit's sample clock is from nominal, in ppm: every crystal is a little
    /// off. Drawn from the serial number (-200...+200 ppm), so a unit keeps its error from
    /// run to run; the simulated cable applies it (``CableConfiguration/deviceClockPPM``).
    public var clockErrorPPM: Double {
        Double(Int(handler.store.state.serialNumber % 401) - 200)
    }

    /// Opens (or creates, out of the box) emulated Grokker `index` of the bench in `benchDirectory`.
    public convenience init(benchDirectory: String, index: Int, sampleRate: Int = 44_100,
                            link: LinkConfiguration = LinkConfiguration()) throws(EmulatorError) {
        let store = try DeviceStateStore.openOrCreate(directory: benchDirectory, index: index)
        try self.init(store: store, sampleRate: sampleRate, link: link)
    }

    /// A unit from its state store, reading `scene.json` in its directory when there is one
    /// (its own field of tags, docs/scene.md), else the standard bench seeded by its serial.
    public convenience init(store: DeviceStateStore, sampleRate: Int = 44_100,
                            link: LinkConfiguration = LinkConfiguration()) throws(EmulatorError) {
        let path = (store.deviceDirectory.hasSuffix("/") ? store.deviceDirectory : store.deviceDirectory + "/") + "scene.json"
        var scene: RFScene?
        if FileManager.default.fileExists(atPath: path) {
            do {
                scene = try RFScene.load(path: path)
            } catch {
                throw .scene(path: path, detail: error.description)
            }
        }
        try self.init(handler: GrokkerCommandHandler(store: store), sampleRate: sampleRate, link: link, scene: scene)
        try loadFieldState()
    }

    /// Where tag memory changes made over the link are kept: `field-state.json` in the
    /// unit's directory (docs/scene.md, "The state file").
    public var fieldStatePath: String {
        (directory.hasSuffix("/") ? directory : directory + "/") + "field-state.json"
    }

    /// Reads back the tag memory changes of earlier runs, if any.
    public func loadFieldState() throws(EmulatorError) {
        do {
            try inventory.loadState(from: fieldStatePath)
        } catch {
            throw .scene(path: fieldStatePath, detail: error.description)
        }
    }

    /// - Parameter scene: the tags around this unit; by default ``RFScene/standardBench(seed:)``
    ///   seeded by its serial number, so a unit keeps its tags from run to run.
    public init(handler: GrokkerCommandHandler, sampleRate: Int = 44_100, link: LinkConfiguration = LinkConfiguration(),
                scene: RFScene? = nil) throws(EmulatorError) {
        self.handler = handler
        self.link = link
        engine = LinkEngine(role: .device, sampleRate: sampleRate, configuration: link)
        let serial = UInt64(handler.store.state.serialNumber)
        inventory = InventoryRunner(field: RFField(scene: scene ?? RFScene.standardBench(seed: serial)))
        sounds = SoundPlayer(volumeLevels: Int(handler.hardware.numVolumeLevels), maxTones: Int(handler.hardware.maxTonesInSound))
        let player = sounds
        inventory.onRound = { reads, firstFinds, foundAll, time in
            player.inventoryRound(reads: reads, firstFinds: firstFinds, foundAll: foundAll, at: time)
        }
        let flash = try FlashMemory(path: Self.path(handler.store.deviceDirectory, "flash.bin"),
                                    size: FlashLayout.totalSize, sampleRate: sampleRate)
        firmware = try FirmwareService(flash: flash, hardwareType: handler.hardware.hardwareType,
                                       factoryVersion: handler.store.state.firmwareVersion, serial: handler.store.state.serialNumber)
        // A unit is already on when it is plugged in: its first boot costs the host nothing.
        try powerOn()
        silentUntil = 0
        busyUntil = 0
        firmware.flash.clock = 0
    }

    private let inventory: InventoryRunner
    private let sounds: SoundPlayer
    private let link: LinkConfiguration
    /// The loader and the flash it manages.
    let firmware: FirmwareService
    /// Samples since the power came on (the device's own clock; it survives restarts).
    public private(set) var clock: Int64 = 0
    /// Until this sample the unit is restarting: its modem is silent.
    private var silentUntil: Int64 = 0
    /// Until this sample the unit is busy with the last request (flash takes time).
    private var busyUntil: Int64 = 0
    /// Requests received and not yet carried out, oldest first.
    private var queue: [[UInt8]] = []
    /// Responses waiting for the moment their work is done.
    private var outbox: [(at: Int64, message: [UInt8])] = []
    /// When the unit restarts after answering an activate request.
    private var restartAt: Int64?

    /// The sample of the device's clock at which its power goes off, if scheduled (power-loss
    /// tests). The flash operation under way is left partly done.
    public var powerCutAt: Int64? {
        didSet { firmware.flash.powerCutAt = powerCutAt }
    }
    /// The power went off: the unit is dead until a new ``EmulatedGrokker`` opens its
    /// directory (power restored).
    public private(set) var poweredOff = false
    /// Images (by SHA-256) that crash when booted: they never reach the host, and the loader
    /// goes back to the previous image at the next restart (boot-failure tests).
    public var failingImages: Set<[UInt8]> {
        get { firmware.failingImages }
        set { firmware.failingImages = newValue }
    }
    /// What the device's flash and loader say (for tests and `grokctl emulate`).
    public var firmwareStatus: FirmwareStatus { firmware.status() }

    private static func path(_ directory: String, _ name: String) -> String {
        (directory.hasSuffix("/") ? directory : directory + "/") + name
    }

    /// Boots from the flash (the loader picks the slot) and reports the version that runs.
    private func powerOn() throws(EmulatorError) {
        firmware.flash.clock = clock
        do {
            try firmware.boot()
        } catch {
            switch error {
            case .powerCut:
                poweredOff = true
                return
            case .storage(let detail):
                throw .flash(path: firmware.flash.path, detail: detail)
            }
        }
        silentUntil = firmware.flash.clock
        busyUntil = silentUntil
        if let version = firmware.runningImage?.version, version != handler.store.state.firmwareVersion {
            try handler.store.update { $0.firmwareVersion = version }
        }
        refreshGreeting()
    }

    /// A reset: the link starts over, RAM is lost, the loader boots again.
    private func restart() {
        inventory.stop()
        queue.removeAll()
        outbox.removeAll()
        restartAt = nil
        engine = LinkEngine(role: .device, sampleRate: engine.sampleRate, configuration: link)
        handler.restarted()
        do {
            try powerOn()
        } catch {
            // The state file could not take the new version: the unit keeps running and
            // reports the old one; the host's verify step then sees a mismatch.
            refreshGreeting()
        }
    }


    /// What the speaker has played (the test hook for sounds).
    public var soundLog: SoundLog { sounds.log }

    /// A firmware update is under way: the loader runs. Sounds, battery and inventory are
    /// refused as busy until it leaves.
    public var firmwareUpdateRunning: Bool { firmware.mode == .loader }

    /// What the unit is busy with (vendor ongoing operation).
    public var ongoingOperation: OngoingOperation {
        if firmwareUpdateRunning { return .firmwareUpdate }
        return inventory.isRunning ? .inventory : .inactive
    }

    /// The answer to a command the device's loop (not the stateless handler) answers, or
    /// `nil` for the handler's. (While the loader runs, these never get here: it refuses
    /// them as busy.)
    private func deviceAnswer(_ command: Command, at now: Double) -> Response? {
        switch command {
        case .setGeigerSound, .setFoundSounds, .playSound, .setVolume:
            return sounds.execute(command)
        default:
            return nil
        }
    }

    public func process(input: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>) {
        defer { clock += Int64(input.count) }
        if let cut = powerCutAt, clock >= cut { poweredOff = true }
        if let at = restartAt, clock >= at { restart() }
        guard !poweredOff, clock >= silentUntil else {
            for i in output.indices { output[i] = 0 }
            return
        }
        engine.process(input: input, output: output)
        let now = Double(engine.now) / Double(engine.sampleRate)
        while let request = engine.receive() { queue.append(request) }
        var handled = false
        while !queue.isEmpty, clock >= busyUntil, !poweredOff {
            carryOut(queue.removeFirst(), at: now)
            handled = true
        }
        while let first = outbox.first, first.at <= clock {
            outbox.removeFirst()
            send(first.message, reports: 0)
            if firmware.restartRequested, restartAt == nil {
                // The answer to activate is out: restart once it has been delivered (or
                // after a while if the host has gone).
                restartAt = clock + engine.samples(0.5)
            }
        }
        if firmware.restartRequested, let at = restartAt, engine.isIdle, outbox.isEmpty {
            restartAt = min(at, clock + 1)
        }
        if handled { refreshGreeting() }
        trackAcknowledgements()
        if engine.state != .connected, inventory.isRunning {
            // The host is gone: a real reader stops scanning when its phone goes away.
            inventory.stop()
        }
        guard inventory.isRunning else { return }
        inventory.advance(to: now)
        // Reports go out no faster than the link carries them (two events in flight at most).
        while engine.backlog < 2 * Self.reportEventBytes {
            let batch = inventory.takeReports(limit: InventoryEvent.maxReportsPerEvent)
            if batch.isEmpty { break }
            send(InventoryEvent.tagReports(batch).encode(), reports: batch.count)
            reportsSent += batch.count
        }
        if now >= nextStatus {
            send(InventoryEvent.status(rounds: UInt32(clamping: inventory.rounds)).encode(), reports: 0)
            nextStatus = now + InventoryEvent.statusInterval
        }
    }

    /// Carries out one request and queues its answer for when the work is done.
    private func carryOut(_ request: [UInt8], at now: Double) {
        guard let message = try? RequestMessage.decode(request) else {
            outbox.append((clock, handler.handle(request: request)))
            return
        }
        if case .firmware(let firmwareRequest) = message.command {
            firmware.flash.clock = clock
            let response: Response
            do {
                response = try firmware.handle(firmwareRequest)
            } catch {
                switch error {
                case .powerCut:
                    poweredOff = true
                    return
                case .storage(let detail):
                    response = .failure(opcode: firmwareRequest.opcode, status: .storageFailure, message: detail)
                }
            }
            busyUntil = firmware.flash.clock
            if case .enterLoader = firmwareRequest { inventory.stop() }
            outbox.append((busyUntil, ResponseMessage(id: message.id, response: response).encode()))
            return
        }
        let response: Response
        if firmware.mode == .loader, !Self.loaderAnswers(message.command) {
            response = .failure(opcode: message.command.opcode, status: .busy,
                                message: "a firmware update is under way (the loader runs); finish it or leave the loader first")
        } else if let answer = deviceAnswer(message.command, at: now) {
            response = answer
        } else if case .tagAccess(let epc, let operation) = message.command, inventory.isRunning {
            response = persistingTagChange(inventory.access(epc: epc, operation, at: now), operation)
        } else if case .getDiagnostics(let reset) = message.command {
            response = .diagnostics(counters(reset: reset))
        } else if case .getBattery = message.command, inventory.isRunning {
            // The battery is measured with the radio off, as the vendor's reader did.
            response = .failure(opcode: .getBattery, status: .busy, message: "battery not read while scanning")
        } else {
            response = handler.execute(message.command)
        }
        if case .stopInventory = message.command, inventory.isRunning {
            // The last word on the rounds run, before the answer: the host's count is exact.
            outbox.append((clock, InventoryEvent.status(rounds: UInt32(clamping: inventory.rounds)).encode()))
        }
        outbox.append((clock, ResponseMessage(id: message.id, response: response).encode()))
        switch (message.command, response) {
        case (.startInventory(let parameters), .done):
            inventory.start(parameters, region: handler.store.state.region, at: now,
                            seed: UInt64(handler.store.state.serialNumber) ^ UInt64(engine.now))
            sounds.startInventory(soundType: parameters.soundType, volume: parameters.volume)
            nextStatus = now + InventoryEvent.statusInterval
        case (.stopInventory, .done):
            inventory.stop()
        default:
            break
        }
    }

    /// What the loader answers besides firmware requests: who it is, echo and counters.
    private static func loaderAnswers(_ command: Command) -> Bool {
        switch command {
        case .identify, .echo, .getDiagnostics: true
        default: false
        }
    }

    private var nextStatus = 0.0

    // MARK: Which reports the host has acknowledged

    /// Message bytes handed to the link in this link session.
    private var bytesQueued = 0
    /// Report events not yet acknowledged: where each ends in ``bytesQueued``, and its reads.
    private var unacknowledged: [(end: Int, reports: Int)] = []
    private var linkSession = 0
    /// Reads sent in events the link dropped before the host acknowledged them.
    private var reportsNotAcknowledged = 0

    private func send(_ message: [UInt8], reports: Int) {
        do {
            try engine.send(message)
        } catch {
            return
        }
        bytesQueued += message.count
        if reports > 0 { unacknowledged.append((bytesQueued, reports)) }
    }

    /// The link's backlog is what it has not delivered yet: everything queued before that
    /// is acknowledged. A new link session (a drop, a fresh handshake) loses the rest.
    private func trackAcknowledgements() {
        let session = engine.statistics.handshakes
        if session != linkSession || engine.state != .connected {
            reportsNotAcknowledged += unacknowledged.reduce(0) { $0 + $1.reports }
            unacknowledged.removeAll()
            bytesQueued = engine.backlog
            linkSession = session
            return
        }
        let delivered = bytesQueued - engine.backlog
        while let first = unacknowledged.first, first.end <= delivered { unacknowledged.removeFirst() }
    }

    /// Saves the field after a tag access that changed it; a failed save answers
    /// `storageFailure`, as for the unit's own state.
    private func persistingTagChange(_ response: Response, _ operation: TagOperation) -> Response {
        if case .read = operation { return response }
        guard case .tagAccess(.ok, _) = response else { return response }
        do {
            try inventory.saveState(to: fieldStatePath)
            return response
        } catch {
            return .failure(opcode: .tagAccess, status: .storageFailure, message: error.description)
        }
    }

    /// The reader's counters, zeroed afterwards when `reset`.
    private func counters(reset: Bool) -> ReaderCounters {
        let link = engine.statistics
        var c = ReaderCounters()
        c.packetsSent = UInt32(clamping: link.packetsSent)
        c.packetsReceived = UInt32(clamping: link.packetsReceived)
        c.retries = UInt32(clamping: link.retries)
        c.crcMismatches = UInt32(clamping: link.crcMismatches)
        c.inventoryRounds = UInt32(clamping: inventory.totalRounds)
        c.tagFinds = UInt32(clamping: inventory.totalReads)
        c.reportsSent = UInt32(clamping: reportsSent)
        c.uniqueTags = UInt32(clamping: inventory.uniqueEPCs.count)
        c.forgottenNotSent = UInt32(clamping: inventory.droppedUnsent)
        c.forgottenNotAcknowledged = UInt32(clamping: reportsNotAcknowledged)
        c.forgotten = UInt32(clamping: inventory.merged + inventory.droppedUnsent + reportsNotAcknowledged)
        if reset {
            engine.resetStatistics()
            inventory.resetTotals()
            reportsSent = 0
            reportsNotAcknowledged = 0
            linkSession = engine.statistics.handshakes
        }
        return c
    }

    private var reportsSent = 0

    /// About the size of a full tag-report event (32 reads of 96-bit EPCs).
    static let reportEventBytes = 1_000

    /// The RF field this unit reads: its rounds, reads and tag memory.
    public var field: RFField { inventory.field }

    private func refreshGreeting() {
        engine.greeting = Announcement(info: handler.hardware.readerInfo(for: handler.store.state)).encode()
    }
}

/// Runs a device (any ``CablePeer``) on an audio port of its own: a pipe or an ALSA device,
/// when the emulated Grokker lives in its own process (`grokctl emulate`).
public enum DeviceRunner {
    /// Pumps blocks until the port closes or `shouldStop()` says so. Returns the samples processed.
    @discardableResult
    public static func run(_ device: any CablePeer, on port: any AudioPort, blockSize: Int = 256,
                           shouldStop: () -> Bool = { false }) throws(AudioError) -> Int64 {
        var captured = [Float](repeating: 0, count: blockSize)
        var playback = [Float](repeating: 0, count: blockSize)
        var total: Int64 = 0
        while !shouldStop() {
            captured.withUnsafeBufferPointer { i in playback.withUnsafeMutableBufferPointer { device.process(input: i, output: $0) } }
            do {
                try playback.withUnsafeBufferPointer { (o) throws(AudioError) in
                    try captured.withUnsafeMutableBufferPointer { (i) throws(AudioError) in try port.transfer(output: o, input: i) }
                }
            } catch .closed {
                break
            }
            total += Int64(blockSize)
        }
        return total
    }
}
