import Foundation
import GrokAudio
import GrokLink
import GrokProtocol

/// An emulated Grokker that speaks the vendor's own protocol from the device side: a
/// ``VendorLink`` in the device role (request tone, handshake, FSK, packets, slave mode) and
/// the vendor command codecs of GrokProtocol over the unit's persistent state
/// (``DeviceStateStore``) and its RF field (``InventoryRunner`` over ``RFField``).
///
/// What it answers, and how (facts in docs/vendor-protocol.md):
/// - GetVersion (31 bytes from the state: protocol 20, GR-1, revision, firmware, antenna,
///   max power, sensitivity, volume levels, flags bit 7 "user has set region", software type,
///   max program bytes, provisioning status, ids, serial, init status, max tones, region);
/// - battery (5-byte form), Get/SetConfiguration (kinds 0-3), echo, play sound, pause
///   connection, SetRegion (CRC checked by the codec, stored, obeyed by the next inventory),
///   provisioning 00-04, diagnostics, temperature, test flags, antenna tuning (guesses where
///   the layout is not known, see docs/vendor-protocol.md);
/// - inventory start: ACK_0 and slave mode, the reader then sends first reads (01),
///   subsequent reads (03), pings (05), tag-access results (06) and 00 completed once the
///   host answered ACK_1;
/// - ProgramReader / ChangeSoftwareType (01/02): one seam, ``loaderReply(_:)`` (ACK_7 until
///   the vendor loader lands in Flash/).
///
/// Its output never holds an exact-zero sample while a tone plays: the vendor's receive path
/// loses bits on exact zeros (docs/vendor-protocol.md); see ``process(input:output:)``.
///
/// Pure in time (the sample clock), not thread-safe: whoever drives the cable owns it.
public final class VendorGrokker: CablePeer {
    /// The reader protocol this emulation speaks (GetVersion bytes 0-1).
    public static let readerProtocol = 20
    /// The largest ProgramReader chunk announced in GetVersion byte 14.
    public static let maxProgramBytes: UInt8 = 64
    /// Longest quiet time between two reader packets in slave mode (the vendor host drops the
    /// link after about 3.3 s; the reader pings well before).
    public static let pingIntervalSeconds = 1.0
    /// First-read records per packet: at most 7 (the host's acknowledgement mask drops the
    /// 8th record's bit when there are exactly 8, docs/vendor-protocol.md).
    public static let maxFirstReadRecords = 4
    /// Subsequent-read records per packet.
    public static let maxSubsequentRecords = 24
    /// How long a reset keeps the unit silent before its request tone, seconds.
    public static let resetSilenceSeconds = 0.5
    /// The magnitude given to a sample that would be exactly 0 while a tone plays (full scale
    /// 1): the vendor's own modulator's samples nearest zero are ±402/32767.
    public static let zeroNudge: Float = 402.0 / 32767.0

    public let handler: GrokkerCommandHandler
    public let sampleRate: Int
    /// The link, a new one after each reset.
    public private(set) var link: VendorLink
    private let modemConfiguration: VendorModem.Configuration
    private let timing: VendorPacketTiming
    private let inventory: InventoryRunner
    private let sounds: SoundPlayer
    /// Samples since the power came on (survives resets).
    public private(set) var clock: Int64 = 0
    private var silentUntil: Int64 = 0
    private var lastSample: Float = 0
    private var configurations: [VendorConfigurationKind: VendorConfiguration] = [:]
    private var testFlags: (UInt8, UInt8) = (0, 0)
    private var session: SlaveSession?
    private var pendingReset = false
    /// Inventory rounds of every inventory since power-on (diagnostics).
    private var totalReportsSent = 0
    /// Resets since power-on (a reset restarts the modem).
    public private(set) var resets = 0

    /// Every inventory this unit ran, most recent last: the rounds it counted and every EPC
    /// it reported with the number of finds it reported (tests and `grokctl emulate`).
    public private(set) var inventoryLog: [VendorInventoryLogEntry] = []

    /// The directory of the unit (state, field-state.json).
    public var directory: String { handler.store.deviceDirectory }
    /// Where tag memory changes are kept (as the old emulator: docs/scene.md).
    public var fieldStatePath: String {
        (directory.hasSuffix("/") ? directory : directory + "/") + "field-state.json"
    }
    /// The RF field the unit reads.
    public var field: RFField { inventory.field }
    /// What the speaker has played.
    public var soundLog: SoundLog { sounds.log }
    /// Whether an inventory runs (the link is in slave mode for it).
    public var inventoryRunning: Bool { session != nil }

    /// A unit from its state store, reading `scene.json` in its directory when there is one,
    /// else the standard bench seeded by its serial; tag memory changes of earlier runs are
    /// read back from `field-state.json`. The unit is switched on: it sends its request tone.
    public convenience init(store: DeviceStateStore, sampleRate: Int = 44_100) throws(EmulatorError) {
        let path = (store.deviceDirectory.hasSuffix("/") ? store.deviceDirectory : store.deviceDirectory + "/") + "scene.json"
        var scene: RFScene?
        if FileManager.default.fileExists(atPath: path) {
            do {
                scene = try RFScene.load(path: path)
            } catch {
                throw .scene(path: path, detail: error.description)
            }
        }
        try self.init(handler: GrokkerCommandHandler(store: store), sampleRate: sampleRate, scene: scene)
        do {
            try inventory.loadState(from: fieldStatePath)
        } catch {
            throw .scene(path: fieldStatePath, detail: error.description)
        }
    }

    /// - Parameters:
    ///   - scene: the tags around the unit (default: the standard bench seeded by its serial).
    ///   - modem: the device modem's tunables.
    ///   - timing: the reader's packet timing in slave mode.
    public init(handler: GrokkerCommandHandler, sampleRate: Int = 44_100, scene: RFScene? = nil,
                modem: VendorModem.Configuration = .init(), timing: VendorPacketTiming = .vendorHost) throws(EmulatorError) {
        self.handler = handler
        self.sampleRate = sampleRate
        modemConfiguration = modem
        self.timing = timing
        do {
            link = try VendorLink(role: .device, sampleRate: sampleRate, modem: modem, timing: timing)
        } catch {
            throw .scene(path: "", detail: "vendor modem: \(error)")
        }
        let serial = UInt64(handler.store.state.serialNumber)
        inventory = InventoryRunner(field: RFField(scene: scene ?? RFScene.standardBench(seed: serial)))
        sounds = SoundPlayer(volumeLevels: Int(handler.hardware.numVolumeLevels), maxTones: Int(handler.hardware.maxTonesInSound))
        let player = sounds
        inventory.onRound = { reads, firstFinds, foundAll, time in
            player.inventoryRound(reads: reads, firstFinds: firstFinds, foundAll: foundAll, at: time)
        }
        attach()
        try? link.start()
    }

    private func attach() {
        link.packets.onRequest = { [weak self] request in self?.answer(request) ?? .nack }
    }

    private func samples(seconds: Double) -> Int64 { Int64((seconds * Double(sampleRate)).rounded()) }
    private var now: Double { Double(clock) / Double(sampleRate) }

    // MARK: Audio

    public func process(input: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>) {
        defer { clock += Int64(input.count) }
        if clock < silentUntil {
            output.update(repeating: 0)
            lastSample = 0
            if clock + Int64(input.count) >= silentUntil {
                try? link.start()
            }
            return
        }
        link.process(input: input, output: output)
        for event in link.drainEvents() { handle(event) }
        if session != nil, !link.isConnected { endInventory() }
        if session != nil { pumpSlaveMode() }
        if pendingReset, !link.packets.isSending, !link.modem.isSending { reset() }
        // No exact zeros while a tone plays: a zero following a non-zero sample becomes a
        // small value of the sign the sine moves to (the sign-change count is unchanged).
        var previous = lastSample
        for i in output.indices {
            let s = output[i]
            if s == 0, previous != 0 {
                output[i] = previous > 0 ? -Self.zeroNudge : Self.zeroNudge
                previous = 0
            } else {
                previous = s
            }
        }
        lastSample = output.last ?? lastSample
        if lastSample == Self.zeroNudge || lastSample == -Self.zeroNudge { lastSample = 0 }
    }

    /// A reset as the reader does it: radio off, modem silent, then the request tone again.
    public func reset() {
        pendingReset = false
        endInventory()
        link.stop()
        _ = link.drainEvents()
        do {
            link = try VendorLink(role: .device, sampleRate: sampleRate, modem: modemConfiguration, timing: timing)
        } catch {
            return
        }
        attach()
        resets += 1
        silentUntil = clock + samples(seconds: Self.resetSilenceSeconds)
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

    /// The answer to one host request.
    func answer(_ packet: RequestPacket) -> VendorReply {
        let request: VendorRequest
        do {
            request = try VendorRequest(opcode: packet.command, payload: packet.payload, readerProtocol: Self.readerProtocol)
        } catch {
            return .nack
        }
        let state = handler.store.state
        switch request {
        case .getVersion:
            return data(.version(version(state)))
        case .programReader, .changeSoftwareType:
            return loaderReply(request)
        case .getBatteryLevel:
            return data(.battery(battery(state)))
        case .provisioning(let provisioning):
            return provision(provisioning)
        case .echoMaster:
            // The reader-driven echo test (slave handler 0x12460) is not emulated.
            return .nack
        case .getDiagnostics(let reset):
            return data(.diagnostics(diagnostics(reset: reset)))
        case .inventory(let start, _):
            return startInventory(start, state)
        case .pauseConnection:
            return .ack
        case .playSound(let sound):
            sounds.play(sound == 0 ? .foundLast : .foundItem, volume: 255)
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
            sounds.play(.foundItem, volume: 255)
            return .ack
        case .tuneAntenna, .getDetailedAntennaTuning, .continuousTest, .scanAllFrequencies, .scanWide:
            // Layouts only partly known (docs/vendor-protocol.md); refused as the reader refuses
            // what it does not support.
            return .nack
        }
    }

    /// The seam for the vendor loader (ProgramReader 0x01, ChangeSoftwareType 0x02): the
    /// one call site the `VendorLoader` of Flash/ plugs into. Until it lands: ACK_7.
    func loaderReply(_ request: VendorRequest) -> VendorReply {
        .nack
    }

    private func data(_ response: VendorResponse) -> VendorReply {
        guard let bytes = try? response.encodeData() else { return .nack }
        return VendorReply(ResponsePacket(id: 0, data: bytes))
    }

    /// GetVersion's 31 bytes from the unit's state and hardware.
    public func version(_ state: DeviceState) -> VendorReaderVersion {
        let hw = handler.hardware
        let maxPowerByte = UInt8(clamping: Int(hw.maxPowerTenthsDBm) - 50)
        let minusSensitivity = UInt8(clamping: -Int(hw.maxSensitivityTenthsDBm) / 10)
        let flags: UInt8 = state.provisioning.userHasSetRegion ? 0x80 : 0
        let regionIndex = UInt8(clamping: Int(state.region?.number ?? 1) - 1)
        return VendorReaderVersion(
            protocolVersion: Self.readerProtocol, hardwareType: UInt16(hw.hardwareType.rawValue),
            hardwareRevision: state.hardwareRevision, firmwareMajor: state.firmwareVersion.major,
            firmwareMinor: state.firmwareVersion.minor, firmwareBuild: UInt8(clamping: state.firmwareVersion.build),
            antennaType: state.antennaType, maxPowerByte: maxPowerByte, minusMaxSensitivity: minusSensitivity,
            volumeLevels: hw.numVolumeLevels, deviceFlags: flags, softwareType: VendorSoftwareType.application.rawValue,
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
        return VendorBatteryLevel(raw: UInt16(millivolts), voltageCode: UInt8(clamping: (millivolts - 2000) / 10),
                                  flags: flags, percent: UInt8(percent))
    }

    private func provision(_ request: VendorProvisioning) -> VendorReply {
        do {
            try handler.store.update { state in
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
        // The reader refuses a region its radio cannot tune (the other band's hardware).
        guard state.provisioning.userCanSetRegion else { return .nack }
        do {
            try handler.store.update {
                $0.region = RegionSetting(name: named.name, number: UInt16(entry.index) + 1)
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
        let command: Command?
        switch configuration {
        case .radioDefaults:
            command = nil
        case .geigerCounterSound(let g):
            command = .setGeigerSound(GeigerSound(
                frequencyHz: g.frequencyHz, clickDurationMs: g.clickDurationMs,
                clickRateThousandths: UInt16(clamping: Int(g.clickRate256) * 1000 / 256),
                maxClicksPerSecond: UInt16(g.maxClicksPerSecond), historyDepthMs: UInt16(clamping: g.historyMs)))
        case .tones(let kind, let tones):
            let list = tones.map { SoundTone(frequencyHz: $0.frequencyHz, durationMs: $0.durationMs) }
            let found = sounds.found
            command = .setFoundSounds(kind == .foundLastItemSound
                ? FoundSounds(foundItem: found.foundItem, foundLast: list)
                : FoundSounds(foundItem: list, foundLast: found.foundLast))
        }
        if let command, case .failure = sounds.execute(command) { return .nack }
        configurations[configuration.kind] = configuration
        return .ack
    }

    private func antennaTuning(_ state: DeviceState) -> VendorAntennaTuning {
        // Guess: reflected power in tenths of a dB below the carrier, as the average of the
        // region's channels (the vendor's units are not known).
        let region = state.region.flatMap(RegionCatalog.entry(for:)) ?? RegionCatalog.entries[0]
        let power = Double(handler.hardware.maxPowerTenthsDBm) / 10
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
        p.maxRoundsPerSecond = UInt16(start.maxRoundsPerSecond)
        p.tidBytes = start.maxTidBytes
        p.userBytes = start.maxUserBytes
        p.reportSubsequentFinds = start.reportSubsequentFinds
        p.soundType = start.soundType
        let levels = max(1, Int(handler.hardware.numVolumeLevels))
        p.volume = UInt8(clamping: Int(start.volumeLevel) * 255 / levels)
        if start.setListenBeforeTalk { p.listenBeforeTalk = start.listenBeforeTalk }
        if let select = start.select {
            p.selectBank = select.bank.rawValue
            p.selectBitOffset = select.bitOffset
            p.selectBitLength = select.bitLength
            p.selectMask = select.mask
        }
        inventory.start(p, region: state.region, at: now, seed: UInt64(state.serialNumber) ^ UInt64(clock),
                        busySeed: UInt64(state.serialNumber))
        sounds.startInventory(soundType: p.soundType, volume: p.volume)
        session = SlaveSession(start: start, context: VendorSlaveContext(start), lastSent: clock)
        inventoryLog.append(VendorInventoryLogEntry())
        return VendorReply(.ack, entersSlaveMode: true)
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
            if !send(result) {
                // The change-power acknowledgement ([0][0]) is outside the codec's EPC rule.
                if case .tagAccessResult(let code, let epc, _) = result, epc.isEmpty {
                    if (try? link.send(command: 0x06, payload: [code, 0])) != nil {
                        s.lastSent = clock
                        s.outstanding = nil
                    }
                }
            }
            return
        }
        // Reports that did not fit the last packet go first (the runner hands each out once).
        let reports = s.leftover + inventory.takeReports(limit: 64)
        s.leftover.removeAll()
        var fresh: [VendorTagRecord] = []
        var again: [VendorSubsequentRecord] = []
        var leftover: [TagReport] = []
        for report in reports {
            let rssi = Self.rssiByte(report)
            let perReads = s.context.detailedPerReadData
                ? [VendorPerRead(msAgo: 0, channelIndex: 0, rssi: rssi, words: s.context.perReadWords ? (0, 0) : nil)] : nil
            if let id = s.ids[report.epc] {
                guard s.context.reportSubsequentFinds else { continue }
                if again.count >= Self.maxSubsequentRecords { leftover.append(report); continue }
                // numFinds counts the finds since the tag's last record: the vendor host adds
                // it to the tag's total reads (harness: totals 1, 3, 6, 10 for finds 1, 2, 3, 4).
                s.finds[report.epc, default: 0] += 1
                again.append(VendorSubsequentRecord(id: id, numFinds: 1,
                                                    rssi: s.context.reportRssi ? rssi : nil, perReads: perReads))
                record(report.epc)
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
                    reserved: s.context.readsReserved ? [] : nil))
                record(report.epc)
            } else if report.epc.count >= 4, report.epc.count <= 27 {
                leftover.append(report)
            }
        }
        s.leftover.append(contentsOf: leftover)
        if !fresh.isEmpty {
            let packet = VendorReaderPacket.firstRead(flags: 0, rounds: s.context.reportSubsequentFinds ? rounds : nil,
                                                      records: fresh, fixed96: false)
            if send(packet) { return }
        }
        if !again.isEmpty {
            if send(.subsequentRead(rounds: rounds, records: again)) { return }
        }
        if clock - s.lastSent >= samples(seconds: Self.pingIntervalSeconds) {
            _ = send(.ping(rounds: rounds))
        }
    }

    private func record(_ epc: [UInt8]) {
        guard !inventoryLog.isEmpty else { return }
        inventoryLog[inventoryLog.count - 1].finds[epc, default: 0] += 1
        totalReportsSent += 1
    }

    /// RSSI byte: I in the high nibble, Q in the low, each `(dBm + 90) / 4` clamped to 0-15
    /// (the vendor's units are not known; a guess that keeps the order of strengths).
    static func rssiByte(_ report: TagReport) -> UInt8 {
        func nibble(_ tenths: Int16) -> UInt8 { UInt8(clamping: max(0, min(15, (Int(tenths) / 10 + 90) / 4))) }
        return nibble(report.rssiITenthsDBm) << 4 | nibble(report.rssiQTenthsDBm)
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
        case .access(_, let access):
            s.pendingResults.append(tagAccess(access))
        case .ack, .nack:
            break
        }
    }

    /// Carries out a tag access the host asked for in its answer; the 06 result to send.
    func tagAccess(_ request: VendorTagAccessRequest) -> VendorReaderPacket {
        func code(_ response: Response) -> (UInt8, [UInt16]) {
            guard case .tagAccess(let status, let words) = response else { return (VendorTagAccessResult.generalError.rawValue, []) }
            return (status.rawValue <= 5 ? status.rawValue : VendorTagAccessResult.generalError.rawValue, words)
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
            let range = PowerRange(initialTenthsDBm: Int16(initial) + 50, minTenthsDBm: Int16(minimum) + 50,
                                   maxTenthsDBm: Int16(maximum) + 50)
            let ok = range.isValid(readerMaxTenthsDBm: handler.hardware.maxPowerTenthsDBm) && inventory.changePower(range)
            return .tagAccessResult(result: ok ? 0 : VendorTagAccessResult.generalError.rawValue, epc: [], data: [])
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
public struct VendorInventoryLogEntry: Sendable, Equatable {
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

    init(start: VendorInventoryStart, context: VendorSlaveContext, lastSent: Int64) {
        self.start = start
        self.context = context
        self.lastSent = lastSent
    }

    var readsMemory: Bool { context.readsTid || context.readsUser || context.readsReserved }
}
