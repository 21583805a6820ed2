import Foundation
import GrokAudio
import GrokBasics
import GrokLink
import GrokProtocol

/// An emulated Grokker: the vendor's own protocol from the device side (a ``VendorLink`` in
/// the device role: request tone, handshake, FSK, packets, slave mode) over the unit's
/// persistent state (``DeviceStateStore``, `state.json`), its flash (``VendorLoader`` on
/// `flash.bin`: the loader and the application) and its RF field (``InventoryRunner`` over
/// ``RFField``). It is reachable only through audio samples.
///
/// What it answers, and how (facts in docs/vendor-protocol.md):
/// - GetVersion (31 bytes: protocol 20, GR-1, revision, the running program's version and
///   software type from the flash, antenna, max power, sensitivity, volume levels, flags bit 7
///   "user has set region", max program bytes, provisioning status, ids, serial, init status,
///   max tones, region);
/// - in the application: battery (5-byte form), Get/SetConfiguration (kinds 0-3), echo, play
///   sound, pause connection, SetRegion (CRC checked by the codec, stored, obeyed by the next
///   inventory), provisioning 00-04, diagnostics, temperature, test flags, antenna tuning
///   averages (guesses where the layout is not known, see docs/vendor-protocol.md);
/// - inventory start: ACK_0 and slave mode, the reader then sends first reads (01),
///   subsequent reads (03), pings (05), tag-access results (06; none for a change power) and
///   00 completed once the host answered ACK_1;
/// - ProgramReader / ChangeSoftwareType (01/02) through ``loaderReply(_:)``: the flash takes
///   its time (the answer comes when the erase or write is done), ChangeSoftwareType resets
///   the unit, which comes back in the program the flash now says (the loader after a loader
///   image, software type 1; the application after an application image);
/// - ACK_7 to what this reader refuses: EchoMaster 0x05, TuneAntenna 0x0d, detailed tuning
///   0x0e, ContinuousTest 0x12, ScanAllFrequencies 0x14, ScanWide 0x16 (their reader-side
///   layouts are not known), anything that does not decode, and in the loader everything but
///   GetVersion, echo and the two firmware commands.
///
/// `state.json`'s `firmwareVersion` and `loaderVersion` follow the flash: they are set from
/// the flash's records at every power-on and reset (the flash wins). A power cut may fall on
/// any sample (``powerCutAt``); the unit is then dead until a new ``EmulatedGrokker`` opens
/// its directory, and the loader's invariants keep one good program in flash, so it answers
/// and can be updated again; a flash erased by hand starts the boot ROM's loader (0.0.0),
/// which an update fills.
///
/// Its output never holds an exact-zero sample while a tone plays: the vendor's receive path
/// loses bits on exact zeros (docs/vendor-protocol.md); see ``process(input:output:)``.
///
/// Its audio ends are a unit's (``EmulatedHardware``): the host's tones pass its input stage
/// (``AnalogueInput``: clipped at its clip level, not heard at all below its threshold)
/// before its receiver, and it answers at its output level.
///
/// Pure in time (the sample clock), not thread-safe: whoever drives the cable owns it.
public final class EmulatedGrokker: CablePeer {
    /// The reader protocol this emulation speaks (GetVersion bytes 0-1).
    public static let readerProtocol = 20
    /// The largest ProgramReader chunk announced in GetVersion byte 14.
    public static let maxProgramBytes: UInt8 = 64
    /// Longest quiet time between two reader packets in slave mode (the vendor host drops the
    /// link after about 3.3 s; the reader pings well before).
    public static let pingIntervalSeconds = 1.0
    /// How long the reader goes on looking for the tag of a tag access before it answers
    /// TAG_NOT_FOUND, seconds of its clock: it tries at once, then on each later round (other
    /// channels, other power) until then. A real reader's time is not known (the captures show
    /// a result about 70 ms after the request for a tag in the field); ours: 2 s, so a search
    /// spans at least five channels at FCC's 0.4 s dwell (the carrier now stays on a channel
    /// for its dwell; at 0.5 s a tag in a fade on two channels was "not found").
    public static let tagSearchSeconds = 2.0
    /// First-read records per packet: at most 7 (the host's acknowledgement mask drops the
    /// 8th record's bit when there are exactly 8, docs/vendor-protocol.md).
    public static let maxFirstReadRecords = 4
    /// Subsequent-read records per packet.
    public static let maxSubsequentRecords = 24
    /// How long a reset keeps the unit silent before its request tone, seconds.
    public static let resetSilenceSeconds = 0.5
    /// The magnitude given to a sample that would be exactly 0 while a tone plays, at an
    /// output level of 1 (it scales with ``EmulatedHardware/outputLevel``): the vendor's own
    /// modulator's samples nearest zero are ±402/32767.
    public static let zeroNudge: Float = 402.0 / 32767.0
    /// The flash file's name in the unit's directory.
    public static let flashFileName = "flash.bin"

    /// The unit's persistent state.
    public let store: DeviceStateStore
    /// The unit's fixed capabilities.
    public let hardware: EmulatedHardware
    public let sampleRate: Int
    /// The unit's flash and the program it runs.
    public let loader: VendorLoader
    /// The link, a new one after each reset.
    public private(set) var link: VendorLink
    private let modemConfiguration: VendorModem.Configuration
    private let timing: VendorPacketTiming
    let inventory: InventoryRunner
    private let sounds: SoundPlayer
    /// Samples since the power came on (survives resets).
    public private(set) var clock: Int64 = 0
    private var silentUntil: Int64 = 0
    private var lastSample: Float = 0
    /// ``zeroNudge`` at this unit's output level.
    private let nudge: Float
    /// The unit's input stage: what its receiver hears of the cable.
    public private(set) var input: AnalogueInput
    /// What the input stage passes on, one block at a time.
    private var heard: [Float] = []
    private var configurations: [VendorConfigurationKind: VendorConfiguration] = [:]
    private var testFlags: (UInt8, UInt8) = (0, 0)
    private var session: SlaveSession?
    private var pendingReset = false
    /// The power went off during a flash operation (inside the link's request callback; the
    /// unit stops once the link's pass is over).
    private var flashLostPower = false
    /// An answer the flash is still working on: sent at that sample of the clock.
    private var deferredAnswer: (at: Int64, reply: VendorReply)?
    /// Inventory rounds of every inventory since power-on (diagnostics).
    private var totalReportsSent = 0
    /// Resets since power-on (a reset restarts the modem).
    public private(set) var resets = 0

    /// Every inventory this unit ran, most recent last: the rounds it counted and every EPC
    /// it reported with the number of finds it reported (tests and `grokctl emulate`).
    public private(set) var inventoryLog: [InventoryLogEntry] = []

    /// The sample of the device clock at which the power goes off (any sample: mid-erase,
    /// mid-write, during the power-on checks). The flash keeps what was written up to it.
    public var powerCutAt: Int64? {
        didSet { loader.powerCutAt = powerCutAt }
    }
    /// The power went off: the unit is silent until a new ``EmulatedGrokker`` opens its
    /// directory (power restored).
    public private(set) var poweredOff = false

    /// The directory of the unit (state.json, flash.bin, scene.json, field-state.json).
    public var directory: String { store.deviceDirectory }
    /// Where tag memory changes are kept (docs/scene.md).
    public var fieldStatePath: String { Self.path(directory, "field-state.json") }
    /// The flash file.
    public var flashPath: String { Self.path(directory, Self.flashFileName) }
    /// The RF field the unit reads.
    public var field: RFField { inventory.field }
    /// What the speaker has played.
    public var soundLog: SoundLog { sounds.log }
    /// Whether an inventory runs (the link is in slave mode for it).
    public var inventoryRunning: Bool { session != nil }
    /// The program that runs (nil while the power is off).
    public var softwareType: VendorSoftwareType? { poweredOff ? nil : loader.softwareType }
    /// A firmware update is under way: the loader runs (software type 1).
    public var firmwareUpdateRunning: Bool { softwareType == .loader }
    /// What the unit is busy with.
    public var ongoingOperation: OngoingOperation {
        if firmwareUpdateRunning { return .firmwareUpdate }
        return session != nil ? .inventory : .inactive
    }

    /// How far this unit's sample clock is from nominal, in ppm: every crystal is a little
    /// off. Drawn from the serial number (-200...+200 ppm), so a unit keeps its error from
    /// run to run; the simulated cable applies it (``CableConfiguration/deviceClockPPM``).
    public var clockErrorPPM: Double {
        Double(Int(store.state.serialNumber % 401) - 200)
    }

    private static func path(_ directory: String, _ name: String) -> String {
        (directory.hasSuffix("/") ? directory : directory + "/") + name
    }

    /// Opens (or creates, out of the box) emulated Grokker `index` of the bench in `benchDirectory`.
    public convenience init(benchDirectory: String, index: Int, sampleRate: Int = 44_100) throws(EmulatorError) {
        try self.init(store: try DeviceStateStore.openOrCreate(directory: benchDirectory, index: index), sampleRate: sampleRate)
    }

    /// A unit from its state store, reading `scene.json` in its directory when there is one,
    /// else `bench` of its serial (the standard bench unless said; grokctl's `sim:N` use
    /// ``RFScene/defaultBench(seed:)``); tag memory changes of earlier runs are read back
    /// from `field-state.json`. The unit is switched on: it sends its request tone.
    public convenience init(store: DeviceStateStore, sampleRate: Int = 44_100,
                            bench: (UInt64) -> RFScene = RFScene.standardBench(seed:)) throws(EmulatorError) {
        let path = Self.path(store.deviceDirectory, "scene.json")
        var scene: RFScene?
        if FileManager.default.fileExists(atPath: path) {
            do {
                scene = try RFScene.load(path: path)
            } catch {
                throw .scene(path: path, detail: error.description)
            }
        }
        try self.init(store: store, sampleRate: sampleRate, scene: scene ?? bench(UInt64(store.state.serialNumber)))
        do {
            try inventory.loadState(from: fieldStatePath)
        } catch {
            throw .scene(path: fieldStatePath, detail: error.description)
        }
    }

    /// Opens the unit's flash (`flash.bin`; the first time, made as at the factory: the demo
    /// loader and an application of the version `state.json` holds, put in place atomically)
    /// and powers the unit on.
    /// - Parameters:
    ///   - scene: the tags around the unit (default: the standard bench seeded by its serial).
    ///   - hardware: the unit's model (GetVersion's figures, its audio ends).
    ///   - modem: the device modem's tunables (its amplitude is the hardware's output level).
    ///   - timing: the reader's packet timing in slave mode.
    public init(store: DeviceStateStore, sampleRate: Int = 44_100, scene: RFScene? = nil, hardware: EmulatedHardware = .grokker1,
                modem: VendorModem.Configuration = .init(), timing: VendorPacketTiming = .vendorHost) throws(EmulatorError) {
        self.store = store
        self.hardware = hardware
        self.sampleRate = sampleRate
        var modem = modem
        modem.amplitude = hardware.outputLevel
        modemConfiguration = modem
        nudge = Self.zeroNudge * hardware.outputLevel
        input = AnalogueInput(hardware: hardware, sampleRate: sampleRate)
        self.timing = timing
        let flashPath = Self.path(store.deviceDirectory, Self.flashFileName)
        try Self.manufactureFlashIfNew(at: flashPath, firmware: store.state.firmwareVersion)
        loader = try VendorLoader(flashPath: flashPath, configuration: .init(
            maxProgramBytes: Self.maxProgramBytes, sampleRate: sampleRate, catalogue: FactoryFirmware.catalogue))
        do {
            link = try VendorLink(role: .device, sampleRate: sampleRate, modem: modem, timing: timing)
        } catch {
            throw .scene(path: "", detail: "vendor modem: \(error)")
        }
        let serial = UInt64(store.state.serialNumber)
        inventory = InventoryRunner(field: RFField(scene: scene ?? RFScene.standardBench(seed: serial)))
        sounds = SoundPlayer(volumeLevels: Int(hardware.numVolumeLevels), maxTones: Int(hardware.maxTonesInSound))
        let player = sounds
        inventory.onRound = { reads, firstFinds, foundAll, time in
            player.inventoryRound(reads: reads, firstFinds: firstFinds, foundAll: foundAll, at: time)
        }
        // A unit is already on when it is plugged in: its power-on checks cost the host nothing.
        loader.clock = 0
        try reconcileState()
        attach()
        try? link.start()
    }

    /// Writes a new unit's flash file as the factory does, atomically (of two openers racing
    /// on a new unit, one file wins and both use it); a stale temporary of a killed maker is
    /// removed first.
    static func manufactureFlashIfNew(at path: String, firmware: FirmwareVersion) throws(EmulatorError) {
        AtomicFile.removeStaleTemporaries(of: path)
        guard !FileManager.default.fileExists(atPath: path) else { return }
        let version = VendorLoader.Version(firmware.major, firmware.minor, UInt8(clamping: firmware.build))
        let bytes = VendorLoader.factoryFlash(
            loader: (FactoryFirmware.loaderAddress, FactoryFirmware.loader),
            application: (FactoryFirmware.applicationAddress, FactoryFirmware.application(version: version)),
            catalogue: FactoryFirmware.catalogue)
        do {
            _ = try UnitFile.createExclusively(path, with: bytes)
        } catch {
            throw .flash(path: path, detail: error.errorDetail)
        }
    }

    /// Makes `state.json` say what the flash holds: the application's and the loader's
    /// versions from their records; 0.0.0 for a program the flash does not hold whole
    /// (erased, or cut off mid-update), never a version that is gone.
    private func reconcileState() throws(EmulatorError) {
        func firmware(_ v: VendorLoader.Version?) -> FirmwareVersion {
            FirmwareVersion(major: v?.major ?? 0, minor: v?.minor ?? 0, build: UInt16(v?.build ?? 0))
        }
        let application = firmware(loader.applicationRecord?.version)
        let loaderVersion = firmware(loader.loaderRecord?.version)
        try store.update { state in
            state.firmwareVersion = application
            state.loaderVersion = loaderVersion
        }
    }

    private func attach() {
        link.packets.onRequest = { [weak self] request in
            guard let self else { return .nack }
            return self.answer(request)
        }
    }

    private func samples(seconds: Double) -> Int64 { Int64((seconds * Double(sampleRate)).rounded()) }
    private var now: Double { Double(clock) / Double(sampleRate) }

    // MARK: Audio

    public func process(input cable: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>) {
        // Grown, never shrunk: a simulated cable's blocks differ by a sample or so.
        if heard.count < cable.count { heard = [Float](repeating: 0, count: cable.count) }
        let n = cable.count
        heard.withUnsafeMutableBufferPointer { self.input.process(cable, into: UnsafeMutableBufferPointer(rebasing: $0[..<n])) }
        heard.withUnsafeBufferPointer { process(heard: UnsafeBufferPointer(rebasing: $0[..<n]), output: output) }
    }

    /// One block of what the receiver heard (after the input stage).
    private func process(heard input: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>) {
        defer { clock += Int64(input.count) }
        if !poweredOff, let cut = powerCutAt, cut <= clock { cutPower() }
        if poweredOff || clock < silentUntil {
            output.update(repeating: 0)
            lastSample = 0
            if !poweredOff, clock + Int64(input.count) >= silentUntil {
                try? link.start()
            }
            return
        }
        link.process(input: input, output: output)
        if flashLostPower || (powerCutAt.map { $0 < clock + Int64(input.count) } ?? false) {
            // The power went off inside this block (during a flash operation, or at the
            // scheduled sample): nothing is played from that sample on.
            let cut = flashLostPower ? loader.clock : powerCutAt!
            let from = max(0, min(output.count, Int(cut - clock)))
            for i in from..<output.count { output[i] = 0 }
            flashLostPower = false
            cutPower()
            lastSample = 0
            return
        }
        for event in link.drainEvents() { handle(event) }
        if let deferred = deferredAnswer, clock + Int64(input.count) >= deferred.at {
            deferredAnswer = nil
            try? link.packets.answer(deferred.reply)
        }
        if session != nil, !link.isConnected { endInventory() }
        if session != nil { pumpSlaveMode() }
        if pendingReset, deferredAnswer == nil, !link.packets.isSending, !link.modem.isSending,
           link.packets.requestAwaitingAnswer == nil {
            reset()
        }
        // No exact zeros while a tone plays: a zero following a non-zero sample becomes a
        // small value of the sign the sine moves to (the sign-change count is unchanged).
        var previous = lastSample
        for i in output.indices {
            let s = output[i]
            if s == 0, previous != 0 {
                output[i] = previous > 0 ? -nudge : nudge
                previous = 0
            } else {
                previous = s
            }
        }
        lastSample = output.last ?? lastSample
        if lastSample == nudge || lastSample == -nudge { lastSample = 0 }
    }

    /// The power goes off now: radio, modem and MCU stop; the flash keeps what it holds.
    private func cutPower() {
        poweredOff = true
        loader.powerOff()
        inventory.stop()
        session = nil
        deferredAnswer = nil
        pendingReset = false
        link.stop()
        _ = link.drainEvents()
    }

    /// A reset as the reader does it: radio off, modem silent, the MCU starts again (the
    /// flash's checks pick the program), then the request tone.
    public func reset() {
        guard !poweredOff else { return }
        pendingReset = false
        deferredAnswer = nil
        endInventory()
        link.stop()
        _ = link.drainEvents()
        loader.clock = clock
        loader.reset()
        if loader.isPoweredOff {
            // The power went off during the checks.
            cutPower()
            return
        }
        try? reconcileState()
        do {
            link = try VendorLink(role: .device, sampleRate: sampleRate, modem: modemConfiguration, timing: timing)
        } catch {
            return
        }
        attach()
        resets += 1
        silentUntil = max(clock + samples(seconds: Self.resetSilenceSeconds), loader.clock)
    }

    private func handle(_ event: VendorLinkEvent) {
        switch event {
        case .packet(.completed(let request, let response)):
            slaveAnswer(to: request, response)
        case .packet(.failed):
            // The host did not answer the reader's packet: the reader gives up the inventory.
            endInventory()
        case .packet(.exitedSlaveMode):
            endInventory()
        default:
            break
        }
    }

    // MARK: Requests from the host

    /// The answer to one host request (nil: the flash is at work, the answer follows).
    func answer(_ packet: RequestPacket) -> VendorReply? {
        let request: VendorRequest
        do {
            request = try VendorRequest(opcode: packet.command, payload: packet.payload, readerProtocol: Self.readerProtocol)
        } catch {
            return .nack
        }
        let state = store.state
        if softwareType == .loader {
            // The loader answers who it is, echo and the firmware commands; nothing else.
            switch request {
            case .getVersion: return data(.version(version(state)))
            case .echo(let echo): return data(.echo(echo.data))
            case .programReader, .changeSoftwareType: return loaderReply(request)
            default: return .nack
            }
        }
        switch request {
        case .getVersion:
            return data(.version(version(state)))
        case .programReader, .changeSoftwareType:
            return loaderReply(request)
        case .getBatteryLevel:
            return data(.battery(battery(state)))
        case .provisioning(let provisioning):
            return provision(provisioning)
        case .getDiagnostics(let reset):
            return data(.diagnostics(diagnostics(reset: reset)))
        case .inventory(let start, _):
            return startInventory(start, state)
        case .pauseConnection:
            return .ack
        case .playSound(let sound):
            let name: SoundName = sound == 0 ? .foundLast : .foundItem
            PlayedSounds.append(name, sounds.playAsked(name), directory: directory)
            return .ack
        case .getConfiguration(let get):
            return data(.configuration(configuration(get.kind)))
        case .setConfiguration(let configuration):
            return setConfiguration(configuration)
        case .echo(let echo):
            return data(.echo(echo.data))
        case .getAntennaTuning:
            return data(.antennaTuning(antennaTuning(state)))
        case .setRegion(let region):
            return setRegion(region, state)
        case .setTestFlags(let a, let b):
            testFlags = (a, b)
            return .ack
        case .getTestFlags:
            return data(.testFlags(testFlags.0, testFlags.1))
        case .getTemperature:
            // 25 °C; the raw reading's scale is unknown (a guess: degrees x 100).
            return data(.temperature(VendorTemperature(raw: 2500, degreesC: 25)))
        case .speakerTest:
            PlayedSounds.append(.foundItem, sounds.playAsked(.foundItem), directory: directory)
            return .ack
        case .echoMaster, .tuneAntenna, .getDetailedAntennaTuning, .continuousTest, .scanAllFrequencies, .scanWide:
            return Self.refusal
        }
    }

    /// What the reader answers to the requests it refuses (0x05, 0x0d, 0x0e, 0x12, 0x14, 0x16):
    /// ACK_7, at once. The vendor host treats it as a failed try (it sends the request 8
    /// times, then resets the link) unless it sent the request without retries; these
    /// commands' reader-side sessions (echo master, tuning, continuous test) and answer
    /// layouts are only partly known (docs/vendor-protocol.md, section 5).
    public static let refusal = VendorReply.nack

    /// The seam to the loader: ProgramReader 0x01 and ChangeSoftwareType 0x02 on the flash,
    /// on the unit's clock. The answer goes out once the flash operation is done (nil here,
    /// the answer deferred); a power cut during it leaves no answer at all. An accepted
    /// ChangeSoftwareType resets the unit once its ACK is out.
    func loaderReply(_ request: VendorRequest) -> VendorReply? {
        loader.clock = clock
        let reply: VendorReply
        switch request {
        case .programReader(let program):
            guard let answer = loader.programReader(program) else {
                flashLostPower = true
                return nil
            }
            reply = answer
        case .changeSoftwareType(let change):
            guard let answer = loader.changeSoftwareType(change) else {
                flashLostPower = true
                return nil
            }
            reply = answer.reply
            if answer.reset { pendingReset = true }
        default:
            return .nack
        }
        if loader.clock <= clock { return reply }
        deferredAnswer = (loader.clock, reply)
        return nil
    }

    private func data(_ response: VendorResponse) -> VendorReply {
        guard let bytes = try? response.encodeData() else { return .nack }
        return VendorReply(ResponsePacket(id: 0, data: bytes))
    }

    /// GetVersion's 31 bytes from the unit's state and hardware, and from the flash: the
    /// running program's software type and version.
    public func version(_ state: DeviceState) -> VendorReaderVersion {
        let hw = hardware
        let maxPowerByte = UInt8(clamping: Int(hw.maxPowerTenthsDBm) - 50)
        let minusSensitivity = UInt8(clamping: -Int(hw.maxSensitivityTenthsDBm) / 10)
        let flags: UInt8 = state.provisioning.userHasSetRegion ? 0x80 : 0
        let regionIndex = UInt8(clamping: Int(state.region?.number ?? 1) - 1)
        let running = loader.runningVersion
        return VendorReaderVersion(
            protocolVersion: Self.readerProtocol, hardwareType: UInt16(hw.hardwareType.rawValue),
            hardwareRevision: state.hardwareRevision, firmwareMajor: running.major,
            firmwareMinor: running.minor, firmwareBuild: running.build,
            antennaType: state.antennaType, maxPowerByte: maxPowerByte, minusMaxSensitivity: minusSensitivity,
            volumeLevels: hw.numVolumeLevels, deviceFlags: flags, softwareType: (softwareType ?? .loader).rawValue,
            maxProgramBytes: Self.maxProgramBytes, provisioningStatus: state.provisioningStatus.rawValue,
            internalId: Self.internalId(serial: state.serialNumber), serialNumber: state.serialNumber,
            initStatus: state.provisioning.provisioned ? 1 : 0, maxTones: hw.maxTonesInSound, regionIndex: regionIndex)
    }

    /// The unit's internal id (GetVersion bytes 16-23): the state has none, so one is made
    /// from the serial number ("GROK" then the serial), stable from run to run.
    public static func internalId(serial: UInt32) -> UInt64 { 0x4752_4F4B_0000_0000 | UInt64(serial) }

    /// The 5-byte battery answer: the state's percent, a voltage on a Li-ion line from 3.3 V
    /// (empty) to 4.2 V (full), "can scan" while above 0 %.
    public func battery(_ state: DeviceState) -> VendorBatteryLevel {
        let percent = min(100, Int(state.batteryPercent))
        let millivolts = 3300 + 900 * percent / 100
        var flags: VendorBatteryFlags = []
        if percent > 0 { flags.insert(.canScan) }
        return VendorBatteryLevel(raw: UInt16(Self.rawBatteryReading(percent: percent, hardwareRevision: state.hardwareRevision)),
                                  voltageCode: UInt8(clamping: (millivolts - 2000) / 10), flags: flags, percent: UInt8(percent))
    }

    /// The raw battery reading a unit of `hardwareRevision` gives at `percent`: the lowest
    /// reading the vendor host's curve for that revision turns into `percent` (or the nearest
    /// it can give), so a host that reads the curve (revision 3 and lower) and one that reads
    /// the percent byte see the same charge.
    static func rawBatteryReading(percent: Int, hardwareRevision: UInt8) -> Int {
        let points = VendorBatteryCurves.curve(hardwareRevision: hardwareRevision).discharging
        var best = points[0]
        var bestDistance = Int.max
        for raw in points[0]...points[25] {
            let distance = abs(VendorBatteryCurves.percent(raw: raw, charging: false, hardwareRevision: hardwareRevision).percent - percent)
            if distance < bestDistance { best = raw; bestDistance = distance }
            if distance == 0 { break }
        }
        return best
    }

    private func provision(_ request: VendorProvisioning) -> VendorReply {
        do {
            try store.update { state in
                switch request {
                case .register(let revision, _, _, let serial, _, let antenna):
                    state.hardwareRevision = revision
                    state.serialNumber = serial
                    state.antennaType = antenna
                    state.provisioning.provisioned = true
                case .setStatus(let status):
                    state.provisioningStatus = ProvisioningStatus(rawValue: status)
                case .setAntennaType(let antenna):
                    state.antennaType = antenna
                case .setUserHasSetRegion(let value):
                    state.provisioning.userHasSetRegion = value
                case .setHardwareRevision(let revision):
                    state.hardwareRevision = revision
                }
            }
        } catch {
            return .nack
        }
        return .ack
    }

    private func setRegion(_ request: VendorSetRegion, _ state: DeviceState) -> VendorReply {
        guard let entry = try? VendorRegionEntry(bytes: request.entry + [0]),
              let named = RegionCatalog.named(number: UInt16(entry.index) + 1) else { return .nack }
        guard state.provisioning.userCanSetRegion else { return .nack }
        // The reader refuses a region its radio cannot tune (the other band's hardware).
        if let band = state.hardwareBand, entry.frequencyBand != band.rawValue { return .nack }
        do {
            try store.update {
                $0.region = RegionSetting(name: named.name, number: UInt16(entry.index) + 1)
                $0.regionTable = entry
                $0.provisioning.userHasSetRegion = true
            }
        } catch {
            return .nack
        }
        return .ack
    }

    private func configuration(_ kind: VendorConfigurationKind) -> VendorConfiguration {
        if let stored = configurations[kind] { return stored }
        switch kind {
        case .radioDefaults:
            let preset = VendorRadioSettings(initialQ: 4, initialPower: 220, minusSensitivity: 85, session: 0, writePower: 190,
                                             minusWriteSensitivity: 60, minQ: 2, maxQ: 7, roundsToToggleAB: 0,
                                             minPower: 180, maxPower: 250)
            return .radioDefaults(preset)
        case .geigerCounterSound:
            let g = sounds.geiger
            return .geigerCounterSound(VendorGeigerSound(
                frequencyHz: g.frequencyHz, clickDurationMs: g.clickDurationMs,
                clickRate256: UInt16(clamping: Int(g.clickRateThousandths) * 256 / 1000),
                maxClicksPerSecond: UInt8(clamping: g.maxClicksPerSecond), history8Ms: UInt8(clamping: Int(g.historyDepthMs) >> 3)))
        case .foundItemSound:
            return .tones(kind, sounds.found.foundItem.map { VendorTone(frequencyHz: $0.frequencyHz, durationMs: $0.durationMs) })
        case .foundLastItemSound:
            return .tones(kind, sounds.found.foundLast.map { VendorTone(frequencyHz: $0.frequencyHz, durationMs: $0.durationMs) })
        }
    }

    private func setConfiguration(_ configuration: VendorConfiguration) -> VendorReply {
        let taken: Bool
        switch configuration {
        case .radioDefaults:
            taken = true
        case .geigerCounterSound(let g):
            // Any value the wire carries (GeigerSound.isAudible); a rate above 65.5 clicks a
            // read is clamped there, where the clicks-per-second limit decides anyway.
            sounds.setGeiger(GeigerSound(
                frequencyHz: g.frequencyHz, clickDurationMs: g.clickDurationMs,
                clickRateThousandths: UInt16(clamping: Int(g.clickRate256) * 1000 / 256),
                maxClicksPerSecond: UInt16(g.maxClicksPerSecond), historyDepthMs: UInt16(clamping: g.historyMs)))
            taken = true
        case .tones(let kind, let tones):
            let list = tones.map { SoundTone(frequencyHz: $0.frequencyHz, durationMs: $0.durationMs) }
            let found = sounds.found
            taken = sounds.setFound(kind == .foundLastItemSound
                ? FoundSounds(foundItem: found.foundItem, foundLast: list)
                : FoundSounds(foundItem: list, foundLast: found.foundLast))
        }
        guard taken else { return .nack }
        configurations[configuration.kind] = configuration
        return .ack
    }

    private func antennaTuning(_ state: DeviceState) -> VendorAntennaTuning {
        // Guess: reflected power in tenths of a dB below the carrier, as the average of the
        // region's channels (the vendor's units are not known).
        let region = state.region.flatMap(RegionCatalog.entry(for:)) ?? RegionCatalog.entries[0]
        let power = Double(hardware.maxPowerTenthsDBm) / 10
        let values = region.channelsKHz.map { kHz in
            power - AntennaModel.reflectedDBm(powerDBm: power, code: AntennaModel.code(in: state, kHz: UInt32(kHz)),
                                              serial: state.serialNumber, kHz: UInt32(kHz))
        }
        let average = values.isEmpty ? 0 : values.reduce(0, +) / Double(values.count)
        let tenths = UInt16(clamping: Int((average * 10).rounded()))
        return VendorAntennaTuning(staticAverage: tenths, dynamicAverage: tenths)
    }

    private func diagnostics(reset: Bool) -> VendorDiagnostics {
        let modem = link.modem.statistics
        let p = link.packets.statistics
        let d = VendorDiagnostics(
            bytesSent: UInt32(clamping: modem.bytesSent), bytesReceived: UInt32(clamping: modem.bytesReceived),
            packetsSent: UInt32(clamping: p.packetsSent), packetsReceived: UInt32(clamping: p.packetsReceived),
            sendFailures: UInt16(clamping: p.sendFailures), sendRetries: UInt16(clamping: p.sendRetries),
            sendTimeouts: UInt16(clamping: p.sendTimeouts), invalidPackets: UInt16(clamping: p.invalidPackets),
            internalCrcMismatches: UInt16(clamping: p.internalCRCMismatches), crcMismatches: UInt16(clamping: p.crcMismatches),
            rawInventoryRounds: UInt32(clamping: inventory.totalRounds), rawTagFinds: UInt32(clamping: inventory.totalReads),
            uniqueTags: UInt16(clamping: inventory.uniqueEPCs.count), forgottenTags: UInt16(clamping: inventory.merged),
            forgottenNotSentTags: UInt16(clamping: inventory.droppedUnsent))
        if reset { inventory.resetTotals() }
        return d
    }

    // MARK: Inventory (slave mode)

    private func startInventory(_ start: VendorInventoryStart, _ state: DeviceState) -> VendorReply {
        if !state.provisioning.provisioned {
            return VendorReply(ResponsePacket(id: 2))
        }
        let requiresRegion = state.hardwareRevision > 5 || state.provisioning.enforceRegion
        if requiresRegion, state.region == nil {
            return VendorReply(ResponsePacket(id: 3))
        }
        if session != nil { endInventory() }
        var p = InventoryParameters()
        let radio = start.radio
        func tenths(_ byte: UInt8) -> Int16 { Int16(byte) + 50 }
        p.initialPowerTenthsDBm = tenths(radio.initialPower)
        p.minPowerTenthsDBm = tenths(radio.minPower)
        p.maxPowerTenthsDBm = tenths(radio.maxPower)
        p.initialQ = radio.initialQ
        p.minQ = radio.minQ
        p.maxQ = radio.maxQ
        p.session = radio.session
        p.roundsWithNoFindsToToggleAB = radio.roundsToToggleAB
        p.sensitivityTenthsDBm = -Int16(radio.minusSensitivity) * 10
        p.writePowerTenthsDBm = tenths(radio.writePower)
        p.writeSensitivityTenthsDBm = -Int16(radio.minusWriteSensitivity) * 10
        p.maxRoundsPerSecond = UInt16(start.maxRoundsPerSecond)
        p.tidBytes = start.maxTidBytes
        p.userBytes = start.maxUserBytes
        p.reservedBytes = start.maxReservedBytes
        p.reportSubsequentFinds = start.reportSubsequentFinds
        p.soundType = start.soundType
        let levels = max(1, Int(hardware.numVolumeLevels))
        p.volume = UInt8(clamping: Int(start.volumeLevel) * 255 / levels)
        if start.setListenBeforeTalk { p.listenBeforeTalk = start.listenBeforeTalk }
        if let words = start.perReadWords {
            // Read with every find, as the tag holds them then (see ``perReadRecord(_:_:)``).
            p.detailWords = [words.first, words.second].map {
                WordAddress(bank: MemoryBank(rawValue: $0.bank.rawValue) ?? .user, wordOffset: UInt16($0.wordOffset))
            }
        }
        p.epcs = start.epcs
        if let select = start.select {
            p.selectBank = select.bank.rawValue
            p.selectBitOffset = select.bitOffset
            p.selectBitLength = select.bitLength
            p.selectMask = select.mask
        }
        inventory.start(p, region: state.region, table: state.regionTable, band: state.hardwareBand, at: now,
                        seed: UInt64(state.serialNumber) ^ UInt64(clock))
        sounds.startInventory(soundType: p.soundType, volume: p.volume)
        session = SlaveSession(start: start, context: VendorSlaveContext(start), lastSent: clock, startedAt: now,
                               channelsKHz: InventoryRunner.hopTable(region: state.region, table: state.regionTable,
                                                                     band: state.hardwareBand))
        inventoryLog.append(InventoryLogEntry())
        return VendorReply(.ack, entersSlaveMode: true)
    }

    /// The per-read record of `report`: how long ago it was read (the reader's clock, ms),
    /// its channel as an index into the region's hop table (what the host maps back to a
    /// frequency), its RSSI byte and, when asked for, the two words read with it. A word
    /// past the end of its bank (and any after it) is sent as 0: the record has room for
    /// both words always, and what the real reader puts there is not known.
    private func perReadRecord(_ report: TagReport, _ s: SlaveSession, rssi: UInt8) -> VendorPerRead {
        let elapsed = Int(((now - s.startedAt) * 1000).rounded(.down))
        let msAgo = UInt16(clamping: max(0, elapsed - Int(report.milliseconds)))
        let channel = s.channelIndex[Int(report.frequencyKHz)] ?? 0
        var words: (UInt16, UInt16)?
        if s.context.perReadWords {
            words = (report.readData.count > 0 ? report.readData[0] : 0, report.readData.count > 1 ? report.readData[1] : 0)
        }
        return VendorPerRead(msAgo: msAgo, channelIndex: channel, rssi: rssi, words: words)
    }

    private func endInventory() {
        guard let s = session else { return }
        inventory.stop()
        session = nil
        if link.packets.isInSlaveMode { link.packets.exitSlaveMode() }
        if !inventoryLog.isEmpty { inventoryLog[inventoryLog.count - 1].finished = s.completed }
    }

    /// Runs the rounds due and sends the reader's next slave-mode packet when the line is free.
    private func pumpSlaveMode() {
        guard var s = session, link.packets.isInSlaveMode else { return }
        if !s.stopRequested { inventory.advance(to: now) }
        defer { if session != nil { session = s } }
        if !s.searches.isEmpty, !s.stopRequested { search(&s) }
        guard !link.packets.isSending, !link.modem.isSending else { return }
        if let until = s.pausedUntil, clock < until { return }
        s.pausedUntil = nil
        let rounds = UInt8(clamping: inventory.rounds - s.roundsReported)
        func send(_ packet: VendorReaderPacket, ends: Bool = false) -> Bool {
            guard let bytes = try? packet.encode(context: s.context) else { return false }
            do {
                try link.send(command: packet.opcode.rawValue, payload: bytes, endsSlaveMode: ends)
            } catch {
                return false
            }
            s.lastSent = clock
            s.outstanding = packet
            s.roundsReported = inventory.rounds
            return true
        }
        if s.stopRequested {
            if !inventoryLog.isEmpty { inventoryLog[inventoryLog.count - 1].rounds = inventory.rounds }
            s.completed = true
            _ = send(.completed(result: 0, value: 0), ends: true)
            inventory.stop()
            return
        }
        if let result = s.pendingResults.first {
            s.pendingResults.removeFirst()
            _ = send(result)
            return
        }
        // Reports that did not fit the last packet go first (the runner hands each out once).
        let reports = s.leftover + inventory.takeReports(limit: 64)
        s.leftover.removeAll()
        var fresh: [VendorTagRecord] = []
        var again: [VendorSubsequentRecord] = []
        var againReports: [TagReport] = []
        var leftover: [TagReport] = []
        for report in reports {
            let rssi = Self.rssiByte(report)
            let perReads = s.context.detailedPerReadData ? [perReadRecord(report, s, rssi: rssi)] : nil
            if let id = s.ids[report.epc] {
                guard s.context.reportSubsequentFinds else { continue }
                if again.count >= Self.maxSubsequentRecords { leftover.append(report); continue }
                // numFinds counts the finds since the tag's last record: the vendor host adds
                // it to the tag's total reads (harness: totals 1, 3, 6, 10 for finds 1, 2, 3, 4).
                again.append(VendorSubsequentRecord(id: id, numFinds: 1,
                                                    rssi: s.context.reportRssi ? rssi : nil, perReads: perReads))
                againReports.append(report)
            } else if report.epc.count >= 4, report.epc.count <= 27,
                      fresh.count < (s.readsMemory ? 1 : Self.maxFirstReadRecords) {
                let id = UInt8(truncatingIfNeeded: s.nextID)
                s.nextID += 1
                s.ids[report.epc] = id
                s.finds[report.epc] = 1
                fresh.append(VendorTagRecord(
                    id: s.context.reportSubsequentFinds ? id : nil, numFinds: s.context.reportSubsequentFinds ? 1 : nil,
                    rssi: s.context.reportRssi ? rssi : nil, perReads: perReads, epc: report.epc,
                    tid: s.context.readsTid ? Array(report.tid.prefix(Int(s.start.maxTidBytes))) : nil,
                    user: s.context.readsUser ? Array(report.user.prefix(Int(s.start.maxUserBytes))) : nil,
                    reserved: s.context.readsReserved ? Array(report.reserved.prefix(Int(s.start.maxReservedBytes))) : nil))
                record(report.epc)
            } else if report.epc.count >= 4, report.epc.count <= 27 {
                leftover.append(report)
            }
        }
        s.leftover.append(contentsOf: leftover)
        if !fresh.isEmpty {
            let packet = VendorReaderPacket.firstRead(flags: 0, rounds: s.context.reportSubsequentFinds ? rounds : nil,
                                                      records: fresh, fixed96: false)
            if send(packet) {
                // One packet at a time: the subsequent finds wait for the next one.
                s.leftover.append(contentsOf: againReports)
                return
            }
        }
        if !again.isEmpty {
            if send(.subsequentRead(rounds: rounds, records: again)) {
                for report in againReports {
                    s.finds[report.epc, default: 0] += 1
                    record(report.epc)
                }
                return
            }
        }
        if clock - s.lastSent >= samples(seconds: Self.pingIntervalSeconds) {
            _ = send(.ping(rounds: rounds))
        }
    }

    /// Tries each tag access still looking for its tag on the field as it is now; one that
    /// found it, or whose time ran out, has its result sent.
    private func search(_ s: inout SlaveSession) {
        var still: [(request: VendorTagAccessRequest, until: Int64)] = []
        for search in s.searches {
            guard let result = tagAccess(search.request) else { continue }
            if Self.notFound(result), clock < search.until {
                still.append(search)
            } else {
                s.pendingResults.append(result)
            }
        }
        s.searches = still
    }

    static func notFound(_ packet: VendorReaderPacket) -> Bool {
        if case .tagAccessResult(let result, _, _) = packet { return result == VendorTagAccessResult.tagNotFound.rawValue }
        return false
    }

    private func record(_ epc: [UInt8]) {
        guard !inventoryLog.isEmpty else { return }
        inventoryLog[inventoryLog.count - 1].finds[epc, default: 0] += 1
        totalReportsSent += 1
    }

    /// RSSI byte of a read: its I and Q channel powers on ``VendorRSSI``'s scale (level n
    /// covers [-90 + 4n, -86 + 4n) dBm; the vendor's own units are not known).
    static func rssiByte(_ report: TagReport) -> UInt8 {
        func dBm(_ tenths: Int16?) -> Double { tenths.map { Double($0) / 10 } ?? -.infinity }
        return VendorRSSI.byte(iDBm: dBm(report.rssiITenthsDBm), qDBm: dBm(report.rssiQTenthsDBm))
    }

    /// The host's answer to a reader packet in slave mode.
    private func slaveAnswer(to request: RequestPacket, _ response: ResponsePacket) {
        guard var s = session else { return }
        defer { if session != nil { session = s } }
        var maskBytes = 0
        if case .firstRead(let flags, _, let records, _)? = s.outstanding, flags & 1 == 0 {
            maskBytes = VendorAckMask.byteCount(records: records.count)
        }
        s.outstanding = nil
        if request.command == 0x00 { return }
        guard let answer = try? VendorSlaveAnswer(code: response.id, data: response.data, maskBytes: maskBytes) else { return }
        switch answer {
        case .stop:
            s.stopRequested = true
        case .pause(let ms):
            s.pausedUntil = clock + samples(seconds: Double(ms) / 1000)
        case .access(_, .changePower(let initial, let minimum, let maximum)):
            // The reader sends no result for a change power: the vendor host reports success
            // as soon as its answer went out, and NACKs an EPC-less 06 (docs/vendor-protocol.md,
            // "change-power result").
            changePower(initial: initial, minimum: minimum, maximum: maximum)
        case .access(_, let access):
            guard let result = tagAccess(access) else { break }
            if Self.notFound(result) {
                // Not heard on this channel and power: looked for on the next rounds.
                s.searches.append((access, until: clock + samples(seconds: Self.tagSearchSeconds)))
            } else {
                s.pendingResults.append(result)
            }
        case .ack, .nack:
            break
        }
    }

    /// A change power the host asked for: the running inventory's power from the next round,
    /// when the range is one the radio can do (else nothing changes; no result either way).
    private func changePower(initial: UInt8, minimum: UInt8, maximum: UInt8) {
        let range = PowerRange(initialTenthsDBm: Int16(initial) + 50, minTenthsDBm: Int16(minimum) + 50,
                               maxTenthsDBm: Int16(maximum) + 50)
        if range.isValid(readerMaxTenthsDBm: hardware.maxPowerTenthsDBm) { _ = inventory.changePower(range) }
    }

    /// Carries out a tag access the host asked for in its answer; the 06 result to send (nil
    /// for a change power, which has none).
    func tagAccess(_ request: VendorTagAccessRequest) -> VendorReaderPacket? {
        // Results 0-5 are the vendor's (UgiTagAccessReturnValues); anything else is a general error.
        func code(_ outcome: (status: TagAccessStatus, words: [UInt16])) -> (UInt8, [UInt16]) {
            (outcome.status.rawValue <= 5 ? outcome.status.rawValue : VendorTagAccessResult.generalError.rawValue, outcome.words)
        }
        func bytes(_ words: [UInt16]) -> [UInt8] { words.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xff)] } }
        func bank(_ b: VendorMemoryBank) -> MemoryBank { MemoryBank(rawValue: b.rawValue) ?? .epc }
        let t = now
        switch request {
        case .read(let epc, let b, let offset, let maxCount, _):
            // The count is in bytes (UgiInventory.h: `maxNumBytes`, a multiple of 2).
            let wordCount = UInt16((Int(maxCount) + 1) / 2)
            let (result, words) = code(inventory.access(epc: epc, .read(bank: bank(b), wordPointer: offset,
                                                                          wordCount: wordCount, password: 0), at: t))
            return .tagAccessResult(result: result, epc: epc, data: result == 0 ? bytes(words) : [])
        case .write(let epc, let password, let b, let offset, let data):
            var words: [UInt16] = []
            var i = 0
            while i + 1 < data.count { words.append(UInt16(data[i]) << 8 | UInt16(data[i + 1])); i += 2 }
            let (result, _) = code(inventory.access(epc: epc, .write(bank: bank(b), wordPointer: offset, words: words,
                                                                      password: password), at: t))
            if result == 0 { persist() }
            return .tagAccessResult(result: result, epc: epc, data: [])
        case .programEpc(let epc, let password, let newEpc):
            let (result, _) = code(inventory.access(epc: epc, .programEPC(newEPC: newEpc, password: password), at: t))
            if result == 0 { persist() }
            return .tagAccessResult(result: result, epc: epc, data: [])
        case .lock(let epc, let password, let maskAndAction):
            // Assumed: the vendor's mask-and-action word is the Gen2 20-bit lock payload.
            let (result, _) = code(inventory.access(epc: epc, .lock(payload: maskAndAction & 0xF_FFFF, password: password), at: t))
            if result == 0 { persist() }
            return .tagAccessResult(result: result, epc: epc, data: [])
        case .changePower(let initial, let minimum, let maximum):
            changePower(initial: initial, minimum: minimum, maximum: maximum)
            return nil
        case .custom(let epc, _, _, _, _, _):
            // Custom commands: field order of the request only inferred; not carried out.
            return .tagAccessResult(result: VendorTagAccessResult.generalError.rawValue, epc: epc, data: [])
        }
    }

    private func persist() {
        try? inventory.saveState(to: fieldStatePath)
    }
}

/// One inventory as the emulated reader ran it.
public struct InventoryLogEntry: Sendable, Equatable {
    /// Rounds run up to the host's stop.
    public var rounds = 0
    /// Each EPC reported, with how many times it was reported (first read included).
    public var finds: [[UInt8]: Int] = [:]
    /// The inventory ended with 00 completed (the host stopped it).
    public var finished = false

    public init() {}
}

/// The reader's side of one slave-mode inventory.
private struct SlaveSession {
    var start: VendorInventoryStart
    var context: VendorSlaveContext
    var lastSent: Int64
    var ids: [[UInt8]: UInt8] = [:]
    var finds: [[UInt8]: Int] = [:]
    var nextID = 0
    var roundsReported = 0
    var stopRequested = false
    var completed = false
    var pausedUntil: Int64?
    var outstanding: VendorReaderPacket?
    var pendingResults: [VendorReaderPacket] = []
    var leftover: [TagReport] = []
    /// Tag accesses whose tag was not heard yet, and until when the reader looks for it.
    var searches: [(request: VendorTagAccessRequest, until: Int64)] = []
    /// When the inventory started, seconds on the unit's clock (reports count from it).
    var startedAt: Double
    /// The hop table of the region it runs in, channel (kHz) to its index: per-read records
    /// name a channel by its index.
    var channelIndex: [Int: UInt8]

    init(start: VendorInventoryStart, context: VendorSlaveContext, lastSent: Int64, startedAt: Double, channelsKHz: [Int]) {
        self.start = start
        self.context = context
        self.lastSent = lastSent
        self.startedAt = startedAt
        var index: [Int: UInt8] = [:]
        for (i, kHz) in channelsKHz.enumerated() where index[kHz] == nil { index[kHz] = UInt8(clamping: i) }
        channelIndex = index
    }

    var readsMemory: Bool { context.readsTid || context.readsUser || context.readsReserved }
}
