import GrokBasics
import GrokAudio
import GrokLink
import GrokProtocol

// Inventory and tag access on the vendor protocol: the inventory start (0x07) carries the
// vendor's configuration struct; the reader answers ACK_0 and drives the link (slave mode):
// it sends first reads, subsequent reads, pings, tag-access results and finally "completed";
// the host answers each, and a stop or a tag access rides in the answer to its next packet.

extension ReaderSession {
    /// Starts an inventory (vendor `startInventory`): the configuration's every field goes
    /// into the vendor's struct or is refused (``UgiRfidConfiguration/vendorConfiguration()``).
    /// Reads then arrive while audio is pumped (``collect(forAtMost:until:)``).
    /// The volume set with ``setVolume(_:)`` replaces the configuration's: the vendor
    /// carries the volume in the inventory start only. `tags` goes to the reader when the
    /// vendor's host would send it (``UgiTagSelection``); the session reports what the
    /// reader sends either way.
    public func startInventory(_ configuration: UgiRfidConfiguration, tags: UgiTagSelection = .all) throws(ReaderError) {
        let levels = version?.volumeLevels ?? 4
        var configuration = configuration
        if let volume { configuration.volume = volume }
        if configuration.setListenBeforeTalk { try checkListenBeforeTalk(on: configuration.listenBeforeTalk) }
        let start = try configuration.vendorInventoryStart(volumeLevels: levels, tags: tags)
        switch tags {
        case .all: break
        case .only(let epcs) where !start.epcs.isEmpty || epcs.isEmpty:
            log(.inventory, "sending tags to the reader: \(start.epcs.count) EPCs, \(VendorInventoryStart.listBytes(start.epcs)) bytes")
        case .only(let epcs), .ignoring(let epcs):
            log(.inventory, "determining tag inclusion on the host: \(epcs.count) EPCs")
        }
        let single = configuration.singleFindMode && !configuration.singleFindContinueInventory
        try startInventory(start, stopAfterFirstTag: single)
    }

    /// Refuses a listen-before-talk request (vendor `setListenBeforeTalk`) that the region in
    /// force does not let a configuration make: listening `on` where the entry sent (or, when
    /// this session sent none, our allocation of the region the reader reports) neither
    /// listens by default nor allows an override, or off where it listens and allows none.
    /// The error names the rule: the regulation our entry cites, or the vendor's table.
    func checkListenBeforeTalk(on: Bool) throws(ReaderError) {
        guard let region = info?.region else { return }
        let allocations = RegionCatalog.allocations(number: region.number)
        let byDefault: Bool
        let overrideAllowed: Bool
        let rule: String
        if let sent = sentRegionEntry, UInt16(sent.index) + 1 == region.number {
            byDefault = sent.listenBeforeTalkByDefault
            overrideAllowed = sent.listenBeforeTalkOverrideAllowed
            rule = sent == VendorRegionTable.entry(number: region.number) ? "vendor region table (libugrokitapi 1.7.16)"
                : allocations.first { $0.hardwareBand.rawValue == sent.frequencyBand }?.source ?? allocations.first?.source ?? ""
        } else if let entry = allocations.first(where: { $0.hardwareBand == knownHardwareBand }) ?? allocations.first {
            byDefault = entry.listenBeforeTalk.enabledByDefault
            overrideAllowed = entry.listenBeforeTalk.overrideAllowed
            rule = entry.source
        } else {
            return
        }
        guard overrideAllowed || on == byDefault else {
            throw .listenBeforeTalkNotAllowed(port: port.name, region: region.name, on: on, rule: rule)
        }
    }

    /// Starts an inventory with this inventory-start struct.
    public func startInventory(_ start: VendorInventoryStart, stopAfterFirstTag: Bool = false) throws(ReaderError) {
        if let running = inventory, running.isActive { throw .inventoryRunning(port: port.name) }
        let host = VendorInventoryHost(start: start, stopAfterFirstTag: stopAfterFirstTag)
        host.onStateChange = { [unowned self] state in
            switch state {
            case .completed, .refused, .interrupted: if inventoryEndSample == nil { inventoryEndSample = link.now }
            case .starting, .running, .stopping: break
            }
            log(.inventoryEvents, "inventory \(state)")
            for listener in inventoryStateListeners { listener(state) }
        }
        inventory = host
        // The inventory's clock starts as its start goes out: no read can be older.
        inventoryStartSample = link.now
        inventoryEndSample = nil
        arrivedReads = []
        let form = VendorSelectForm(readerProtocol: version?.protocolVersion ?? 20)
        let request = VendorRequest.inventory(start, form)
        let response: VendorResponse
        do throws(ReaderError) {
            // The reader refuses a start with a short answer: ACK_2 not provisioned, ACK_3 no
            // region set (the vendor's completion codes 9 and 10).
            let packet = try exchange(request, slaveMode: .inventory)
            if !packet.isNack, packet.id == 2 || packet.id == 3 {
                let reason: InventoryStopReason = packet.id == 2 ? .notProvisioned : .regionNotSet
                host.set(.refused(reason.rawValue))
                if reason == .regionNotSet { throw .regionNotSet(port: port.name) }
                throw .rejected(port: port.name, command: "\(request.opcode)", status: "NOT_PROVISIONED (ACK_2)")
            }
            if packet.isNack || packet.id != 0 {
                throw .rejected(port: port.name, command: "\(request.opcode)", status: packet.isNack ? "ACK_7 (NACK)" : "ACK_\(packet.id)")
            }
            do {
                response = try request.decodeResponse(packet.data)
            } catch {
                throw .malformedResponse(port: port.name, detail: ErrorDetail("undecodable_answer", ["\(request.opcode)"]))
            }
        } catch {
            if host.isActive { host.set(.interrupted) }
            throw error
        }
        if case .inventoryError(let refusal) = response {
            host.set(.refused(refusal.code))
            if refusal.code == InventoryStopReason.regionNotSet.rawValue { throw .regionNotSet(port: port.name) }
            throw .rejected(port: port.name, command: "Inventory", status: "error \(refusal.code)")
        }
        log(.inventory, "inventory started: power byte \(start.radio.initialPower), session \(start.radio.session), volume level \(start.volumeLevel)")
    }

    /// Whether an inventory this session started is still running on the reader.
    public var inventoryRunning: Bool { inventory?.isActive ?? false }

    /// Pumps audio for up to `seconds` (or until `done`) while the reader reports.
    public func collect(forAtMost seconds: Double, until done: () -> Bool = { false }) throws(ReaderError) {
        _ = try pump(forAtMost: seconds) { done() || !(inventory?.isActive ?? false) }
    }

    /// The reads gathered so far, oldest first; the buffer is emptied.
    public func takeReads() -> [VendorTagRead] { takeArrivedReads().map(\.read) }

    private func takeArrivedReads() -> [(read: VendorTagRead, sample: Int64)] {
        defer { arrivedReads.removeAll(keepingCapacity: true) }
        return arrivedReads
    }

    /// Audio milliseconds from the running (or last) inventory's start to `sample`.
    func inventoryMilliseconds(at sample: Int64) -> Int {
        Int(Double(sample - (inventoryStartSample ?? sample)) * 1000 / Double(link.sampleRate))
    }

    /// Audio milliseconds since the running inventory started (to its end, once it ended;
    /// 0 before any): the clock ``takeReports()`` times reads on.
    public var inventoryElapsedMilliseconds: Int { inventoryMilliseconds(at: inventoryEndSample ?? link.now) }

    /// How long the last inventory ran, in seconds of audio, from its start going out to the
    /// reader's completion (`nil` while it runs or before any). Every read it reported is
    /// timed within it.
    public var inventorySeconds: Double? {
        guard let start = inventoryStartSample, let end = inventoryEndSample else { return nil }
        return Double(end - start) / Double(link.sampleRate)
    }

    /// The reads gathered so far as ``TagReport``s (what ``InventoryTracker`` and the fleet
    /// take), oldest first; the buffer is emptied. One report per reader packet record:
    /// the time is audio milliseconds from the inventory's start to the packet's arrival,
    /// less the reader's "ms ago" (never before the start), the frequency the channel of the
    /// hop table last sent (or the built-in one for the reader's region).
    public func takeReports() -> [TagReport] {
        let channels = regionChannelsKHz
        let reports = takeArrivedReads().map { read, sample in
            read.report(atMilliseconds: inventoryMilliseconds(at: sample), channelsKHz: channels)
        }
        if !reports.isEmpty { log(.inventoryEvents, "\(reports.count) reads") }
        if options.logger.isEnabled(.inventoryDetail) {
            for r in reports {
                log(.inventoryDetail, "read \(hexString(r.epc)) at \(r.milliseconds) ms, \(r.frequencyKHz) kHz, "
                    + "RSSI " + (r.rssiDBm.map { "\($0) dBm" } ?? "not sent"))
            }
        }
        return reports
    }

    /// Query rounds the inventory has run, from the reader's counter.
    public var inventoryRounds: Int { inventory?.rounds ?? 0 }

    /// Stops the inventory (ACK_1 in the next answer) and waits for the reader's
    /// "completed" (vendor `stopInventory`). Returns how it ended.
    @discardableResult
    public func stopInventory() throws(ReaderError) -> VendorInventoryState {
        guard let host = inventory else { throw .noInventoryRunning(port: port.name) }
        host.requestStop()
        let limit = Double(VendorSlaveMode.inventory.timeoutMs + timing.audioLatencyMs) / 1000 * 3 + 2
        _ = try pump(forAtMost: limit) { !host.isActive }
        if host.isActive { throw .timeout(port: port.name, command: "stop inventory", seconds: limit, recovery: ErrorDetail("no_reset")) }
        // Let the answer to "completed" go out before anything else is sent.
        _ = try pump(forAtMost: 1) { !link.packets.isInSlaveMode && !link.modem.isSending }
        log(.inventory, "inventory stopped after \(host.rounds) rounds: \(host.state)")
        return host.state
    }

    // MARK: Tag access (while an inventory runs)

    /// Sends a tag access in the answer to the reader's next packet and waits for its 06
    /// result; returns the vendor's result code and the data (a power change returns 0 once
    /// it was sent: the reader answers nothing for it).
    public func tagAccess(_ access: VendorTagAccessRequest, timeout seconds: Double = 10) throws(ReaderError)
        -> VendorTagAccessOutcome {
        guard let host = inventory, host.isActive else { throw .noInventoryRunning(port: port.name) }
        guard host.queue(access) else { throw .rejected(port: port.name, command: "tag access", status: "another access is pending") }
        var outcome: VendorTagAccessOutcome?
        var others: [VendorTagAccessOutcome] = []
        _ = try pump(forAtMost: seconds) {
            for o in host.takeOutcomes() {
                if o.request == access { outcome = o } else { others.append(o) }
            }
            return outcome != nil || !host.isActive
        }
        guard let outcome else {
            if !host.isActive { throw .noInventoryRunning(port: port.name) }
            throw .timeout(port: port.name, command: "tag access", seconds: seconds, recovery: ErrorDetail("no_reset"))
        }
        return outcome
    }

    /// Vendor `readTag`: `bank` from byte `offset` (even; halved into a word offset as the
    /// vendor library does). `minBytes` and `maxBytes` go on the wire unchanged, max first,
    /// as the vendor library sends them (tag-access/03: `readTag(…, 2, 4)` sends `04 02`).
    public func readTag(_ epc: UgiEpc, bank: UgiMemoryBank, offset: Int, minBytes: Int, maxBytes: Int) throws(ReaderError)
        -> (status: TagAccessStatus, data: [UInt8]) {
        guard offset % 2 == 0, offset >= 0 else { throw .oddTagMemoryBytes(field: "offset", value: offset) }
        let o = try tagAccess(.read(epc: epc.bytes, bank: VendorMemoryBank(bank), wordOffset: UInt16(clamping: offset / 2),
                                    maxBytes: UInt8(clamping: maxBytes), minBytes: UInt8(clamping: minBytes)))
        return (Self.status(o.result), o.data)
    }

    /// ``readTag(_:bank:offset:minBytes:maxBytes:)`` asking for exactly `maxBytes` (even,
    /// at most 254). The vendor's read carries no access password: a non-zero `password` is
    /// ``ReaderError/notSupported(port:feature:)`` (nothing is sent).
    public func readTag(_ epc: UgiEpc, bank: UgiMemoryBank, offset: Int, maxBytes: Int,
                        password: UInt32 = 0) throws(ReaderError) -> (status: TagAccessStatus, data: [UInt8]) {
        guard password == 0 else { throw .notSupported(port: port.name, feature: "readTag with an access password") }
        guard maxBytes % 2 == 0, (2...254).contains(maxBytes) else { throw .oddTagMemoryBytes(field: "maxBytes", value: maxBytes) }
        return try readTag(epc, bank: bank, offset: offset, minBytes: maxBytes, maxBytes: maxBytes)
    }

    /// Vendor `writeTag`: `data` (even length) into `bank` at byte `offset` (even).
    public func writeTag(_ epc: UgiEpc, bank: UgiMemoryBank, offset: Int, data: [UInt8], password: UInt32 = 0)
        throws(ReaderError) -> TagAccessStatus {
        guard offset % 2 == 0, offset >= 0 else { throw .oddTagMemoryBytes(field: "offset", value: offset) }
        guard data.count % 2 == 0 else { throw .oddTagMemoryBytes(field: "data", value: data.count) }
        return Self.status(try tagAccess(.write(epc: epc.bytes, password: password, bank: VendorMemoryBank(bank),
                                                wordOffset: UInt16(clamping: offset / 2), data: data)).result)
    }

    /// Vendor `programTag`: gives the tag `epc` the EPC `newEpc`.
    public func programTag(_ epc: UgiEpc, to newEpc: UgiEpc, password: UInt32 = 0) throws(ReaderError) -> TagAccessStatus {
        Self.status(try tagAccess(.programEpc(epc: epc.bytes, password: password, newEpc: newEpc.bytes)).result)
    }

    /// Vendor `lockUnlockTag(epc, maskAndAction, password)`: `maskAndAction` is the Gen2
    /// 20-bit lock payload (`Gen2LockPayload`).
    public func lockUnlockTag(_ epc: UgiEpc, maskAndAction: UInt32, password: UInt32 = 0) throws(ReaderError) -> TagAccessStatus {
        Self.status(try tagAccess(.lock(epc: epc.bytes, password: password, maskAndAction: maskAndAction)).result)
    }

    /// ``lockUnlockTag(_:maskAndAction:password:)`` under the old session's argument label.
    public func lockUnlockTag(_ epc: UgiEpc, payload: UInt32, password: UInt32 = 0) throws(ReaderError) -> TagAccessStatus {
        try lockUnlockTag(epc, maskAndAction: payload, password: password)
    }

    /// Vendor `setTagKillPassword`: a write of the kill password (RESERVED words 0-1).
    public func setTagKillPassword(_ epc: UgiEpc, to new: UInt32, password: UInt32 = 0) throws(ReaderError) -> TagAccessStatus {
        try writeTag(epc, bank: .reserved, offset: 0, data: Self.bigEndian(new), password: password)
    }

    /// Vendor `setTagAccessPassword`: a write of the access password (RESERVED words 2-3).
    public func setTagAccessPassword(_ epc: UgiEpc, to new: UInt32, password: UInt32 = 0) throws(ReaderError) -> TagAccessStatus {
        try writeTag(epc, bank: .reserved, offset: 4, data: Self.bigEndian(new), password: password)
    }

    /// Killing a tag: the vendor protocol has no kill request (SDK 1.7.16 sends only read,
    /// write, program EPC, lock, custom command and change power during an inventory), so
    /// this is ``ReaderError/notSupported(port:feature:)`` and nothing is sent.
    public func killTag(_ epc: UgiEpc, killPassword: UInt32) throws(ReaderError) -> TagAccessStatus {
        throw .notSupported(port: port.name, feature: "killTag")
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
    }

    /// The vendor's tag-access result (0-5, the SDK's numbering) as a ``TagAccessStatus``;
    /// a code the vendor does not define is GENERAL_ERROR.
    static func status(_ result: UInt8) -> TagAccessStatus {
        result <= VendorTagAccessResult.generalError.rawValue ? TagAccessStatus(rawValue: result) ?? .generalError : .generalError
    }

    // MARK: Link tests

    /// Vendor `testConnection`: closes the link, connects again (handshake and GetVersion),
    /// runs `rounds` echoes of 100 random bytes, closes. Returns how many came back equal.
    @discardableResult
    public func testConnection(rounds: Int = 10) throws(ReaderError) -> Int {
        disconnect()
        try connect()
        var passed = 0
        for _ in 0..<rounds {
            if try echo(echoBytes(), retries: true) { passed += 1 }
        }
        disconnect()
        return passed
    }
}
