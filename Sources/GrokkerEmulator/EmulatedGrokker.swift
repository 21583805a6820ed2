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
        let flash = try FirmwareService.openFlash(
            path: Self.path(handler.store.deviceDirectory, "flash.bin"), sampleRate: sampleRate,
            hardwareType: handler.hardware.hardwareType, factoryVersion: handler.store.state.firmwareVersion,
            serial: handler.store.state.serialNumber)
        firmware = FirmwareService(flash: flash, hardwareType: handler.hardware.hardwareType)
        let reflection = dynamicReflection
        let store = handler.store
        inventory.onCarrier = { frequencyMHz, powerDBm in
            let kHz = UInt32((frequencyMHz * 1000).rounded())
            let state = store.state
            reflection.add(AntennaModel.reflectedDBm(powerDBm: powerDBm, code: AntennaModel.code(in: state, kHz: kHz),
                                                     serial: state.serialNumber, kHz: kHz))
        }
        // A unit is already on when it is plugged in: its first boot costs the host nothing.
        try powerOn()
        silentUntil = 0
        busyUntil = 0
        firmware.flash.clock = 0
    }

    private let inventory: InventoryRunner
    private let sounds: SoundPlayer
    private let passwords = PasswordGuard()
    /// The link session (the engine's handshake count) that authenticated, if any.
    private var authenticatedSession: Int?
    /// The reflected power the reader measured on the carrier during the last inventory.
    private let dynamicReflection = ReflectionAverage()
    /// A tuning run: the channels (kHz), how many are done, and when the next one is.
    private var tuning: (channels: [UInt32], done: Int, nextAt: Int64)?
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
        tuning = nil
        authenticatedSession = nil
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
        if tuning != nil { return .other }
        return inventory.isRunning ? .inventory : .inactive
    }

    /// Whether the host on this link may use the unit: no password is set, or this link
    /// session authenticated (a new handshake, a drop or a restart ends that).
    public var hostAuthenticated: Bool {
        handler.store.state.password == nil
            || (engine.state == .connected && authenticatedSession == engine.statistics.handshakes)
    }

    /// Antenna tuning is under way.
    public var antennaTuningRunning: Bool { tuning != nil }

    /// What a unit with a password answers before the host authenticates: who it is, echo,
    /// the password commands and the firmware status.
    private static func openWithoutAuthentication(_ command: Command) -> Bool {
        switch command {
        case .identify, .echo, .authenticateGrokker, .grokkerAuthenticationStatus, .setGrokkerPassword, .firmware(.status):
            true
        default:
            false
        }
    }

    /// The Grokker-password commands.
    private func passwordAnswer(_ command: Command) -> Response? {
        let store = handler.store
        switch command {
        case .grokkerAuthenticationStatus:
            let result: GrokkerPasswordResult =
                store.state.password == nil ? .noPasswordSet : hostAuthenticated ? .success : .notAuthenticated
            return .grokkerPassword(result, for: .grokkerAuthenticationStatus)
        case .authenticateGrokker(let password):
            guard let stored = store.state.password else { return .grokkerPassword(.noPasswordSet, for: .authenticateGrokker) }
            guard passwords.attempt(password, stored: stored, now: clock, sampleRate: engine.sampleRate) else {
                return .grokkerPassword(.wrongPassword, for: .authenticateGrokker)
            }
            authenticatedSession = engine.statistics.handshakes
            return .grokkerPassword(.success, for: .authenticateGrokker)
        case .setGrokkerPassword(let old, let new):
            guard new.utf8.count <= GrokkerPasswordLimits.maxBytes else {
                return .failure(opcode: .setGrokkerPassword, status: .invalidArgument,
                                message: "a password has at most \(GrokkerPasswordLimits.maxBytes) UTF-8 bytes")
            }
            if let stored = store.state.password {
                guard passwords.attempt(old, stored: stored, now: clock, sampleRate: engine.sampleRate) else {
                    return .grokkerPassword(.wrongPassword, for: .setGrokkerPassword)
                }
            } else if !old.isEmpty {
                return .grokkerPassword(.noPasswordSet, for: .setGrokkerPassword)
            }
            do {
                try store.update { $0.password = new.isEmpty ? nil : PasswordGuard.hash(new) }
            } catch {
                return .grokkerPassword(.otherError, for: .setGrokkerPassword)
            }
            // Whoever just proved the old password (or set the first) may go on using the unit.
            authenticatedSession = new.isEmpty ? nil : engine.statistics.handshakes
            return .grokkerPassword(.success, for: .setGrokkerPassword)
        default:
            return nil
        }
    }

    /// Antenna tuning and the running inventory's power.
    private func radioAnswer(_ command: Command) -> Response? {
        let state = handler.store.state
        switch command {
        case .changePower(let range):
            guard inventory.isRunning else { return .powerChanged(.inventoryStopped) }
            guard range.isValid(readerMaxTenthsDBm: handler.hardware.maxPowerTenthsDBm) else { return .powerChanged(.generalError) }
            _ = inventory.changePower(range)
            return .powerChanged(.ok)
        case .startInventory where tuning != nil:
            return .failure(opcode: .startInventory, status: .busy, message: "the antenna is being tuned; stop the tuning first")
        case .startAntennaTuning:
            guard let region = state.region else {
                return .failure(opcode: .startAntennaTuning, status: .regionNotSet, message: "set the region before tuning the antenna")
            }
            guard !inventory.isRunning else {
                return .failure(opcode: .startAntennaTuning, status: .busy, message: "an inventory is running; stop it first")
            }
            tuning = (AntennaModel.channelsKHz(for: region), 0, clock + engine.samples(AntennaModel.sweepSeconds))
            return .done(.startAntennaTuning)
        case .stopAntennaTuning:
            tuning = nil
            return .done(.stopAntennaTuning)
        case .getAntennaTuning:
            guard let region = state.region else {
                return .failure(opcode: .getAntennaTuning, status: .regionNotSet, message: "set the region first: tuning is per channel of the region")
            }
            let power = Double(handler.hardware.maxPowerTenthsDBm) / 10
            let channels = AntennaModel.channelsKHz(for: region).map { kHz in
                ChannelReflection(frequencyKHz: kHz, reflectedTenthsDBm: Self.tenths(AntennaModel.reflectedDBm(
                    powerDBm: power, code: AntennaModel.code(in: state, kHz: kHz), serial: state.serialNumber, kHz: kHz)))
            }
            let average = channels.isEmpty ? 0 : channels.reduce(0) { $0 + Int($1.reflectedTenthsDBm) } / channels.count
            return .antennaTuning(AntennaTuningInfo(
                staticAverageTenthsDBm: Int16(clamping: average),
                dynamicAverageTenthsDBm: dynamicReflection.average.map(Self.tenths), channels: channels))
        default:
            return nil
        }
    }

    private static func tenths(_ dBm: Double) -> Int16 { Int16(clamping: Int((dBm * 10).rounded())) }

    /// Tunes every channel whose sweep has ended by now, saving each and reporting it.
    private func advanceTuning() {
        while let run = tuning, clock >= run.nextAt {
            let kHz = run.channels[run.done]
            let state = handler.store.state
            let code = AntennaModel.tune(serial: state.serialNumber, kHz: kHz)
            do {
                try handler.store.update { $0.antennaTuning[String(kHz)] = code }
            } catch {
                // The tuner keeps the setting until power-off; only saving it failed.
            }
            let reflected = AntennaModel.reflectedDBm(powerDBm: Double(handler.hardware.maxPowerTenthsDBm) / 10, code: code,
                                                      serial: state.serialNumber, kHz: kHz)
            send(AntennaTuningProgress(frequencyKHz: kHz, reflectedTenthsDBm: Self.tenths(reflected),
                                       tuned: UInt16(run.done + 1), total: UInt16(run.channels.count)).encode(), reports: 0)
            let done = run.done + 1
            tuning = done < run.channels.count ? (run.channels, done, run.nextAt + engine.samples(AntennaModel.sweepSeconds)) : nil
        }
    }

    /// The answer to a command the device's loop (not the stateless handler) answers, or
    /// `nil` for the handler's. (While the loader runs, these never get here: it refuses
    /// them as busy.)
    private func deviceAnswer(_ command: Command, at now: Double) -> Response? {
        switch command {
        case .setGeigerSound, .setFoundSounds, .playSound, .setVolume:
            return sounds.execute(command)
        default:
            return passwordAnswer(command) ?? radioAnswer(command)
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
        if engine.state != .connected {
            authenticatedSession = nil
            // The host is gone: a real reader stops scanning (and tuning) when its phone goes away.
            if inventory.isRunning { inventory.stop() }
            tuning = nil
        }
        advanceTuning()
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
        if !hostAuthenticated, !Self.openWithoutAuthentication(message.command) {
            let refusal: Response =
                if case .tagAccess = message.command {
                    .tagAccess(.requiresAuthentication, words: [])
                } else {
                    .failure(opcode: message.command.opcode, status: .authenticationRequired,
                             message: "this Grokker has a password; authenticate first")
                }
            outbox.append((clock, ResponseMessage(id: message.id, response: refusal).encode()))
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
            dynamicReflection.reset()
            inventory.start(parameters, region: handler.store.state.region, at: now,
                            seed: UInt64(handler.store.state.serialNumber) ^ UInt64(engine.now),
                            busySeed: UInt64(handler.store.state.serialNumber))
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
            let stillAuthenticated = authenticatedSession == engine.statistics.handshakes
            engine.resetStatistics()
            if stillAuthenticated { authenticatedSession = engine.statistics.handshakes }
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

/// A running average of reflected power (dBm), shared with the inventory's round hook.
final class ReflectionAverage {
    private var sum = 0.0
    private var count = 0
    func add(_ dBm: Double) { sum += dBm; count += 1 }
    func reset() { sum = 0; count = 0 }
    var average: Double? { count == 0 ? nil : sum / Double(count) }
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
