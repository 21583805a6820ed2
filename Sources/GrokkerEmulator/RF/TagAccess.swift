import GrokProtocol

/// The outcome of a tag access, with the vendor's values (`UGI_TAG_ACCESS_*`): the same type
/// the command protocol carries, so the field's answer goes on the wire as it is. The field
/// itself answers OK, WRONG_PASSWORD, PASSWORD_REQUIRED, MEMORY_OVERRUN (a word range past
/// the bank), TAG_NOT_FOUND (no tag with that EPC awake and heard; for a write, at the write
/// power and above the write sensitivity) and GENERAL_ERROR (permalocked memory, a permalock
/// to undo, a tag that cannot be killed, too little power to write, a malformed request).
public typealias TagAccessResult = TagAccessStatus

/// The result of a read: the outcome and, when it is ``TagAccessResult/ok``, the words.
public struct TagReadResult: Sendable, Hashable {
    /// The outcome.
    public var result: TagAccessResult
    /// The words read (empty unless ``result`` is ``TagAccessResult/ok``).
    public var words: [UInt16]

    /// Creates a read result.
    public init(result: TagAccessResult, words: [UInt16] = []) {
        self.result = result
        self.words = words
    }
}

/// Tag access as a Gen2 reader does it (Select the EPC, singulate, Req_RN, Access with the
/// password, then the command), with the vendor's results.
///
/// Every operation addresses the tag by its current EPC at `time` with the field's current
/// carrier: a tag that is killed, asleep (too little power) or not heard gives
/// ``TagAccessResult/tagNotFound``; when several reachable tags share the EPC, the one with the
/// strongest reply answers. A non-zero `password` is checked first: if it is not the tag's
/// access password the result is ``TagAccessResult/wrongPassword``. With the right password,
/// or when the tag's access password is 0, the tag is in the secured state.
extension RFField {
    /// Reads `wordCount` words of `bank` from `wordPointer` (0 words: to the end of the bank).
    ///
    /// Password fields locked ``Gen2LockAction/writeRestricted`` are readable only in the
    /// secured state; ``Gen2LockAction/permanentlyNotWritable`` ones never.
    public mutating func read(
        epc: [UInt8], bank: Gen2Bank, wordPointer: Int, wordCount: Int, password: UInt32 = 0, at time: Double
    ) -> TagReadResult {
        let tagIndex: Int
        do { tagIndex = try open(epc: epc, password: password, at: time) } catch { return TagReadResult(result: error.result) }
        let memory = tags[tagIndex].memory
        let words = memory.words(of: bank)
        guard wordPointer >= 0, wordCount >= 0, wordPointer < words.count else {
            return TagReadResult(result: .memoryOverrun)
        }
        let end = wordCount == 0 ? words.count : wordPointer + wordCount
        guard end <= words.count else { return TagReadResult(result: .memoryOverrun) }
        if bank == .reserved {
            let secured = isSecured(memory, password: password)
            for field in passwordFields(wordPointer..<end) {
                let lock = memory.locks[field]
                if lock == .permanentlyNotWritable { return TagReadResult(result: .generalError) }
                if lock.needsSecuredState, !secured { return TagReadResult(result: .passwordRequired) }
            }
        }
        return TagReadResult(result: .ok, words: Array(words[wordPointer..<end]))
    }

    /// Writes `words` into `bank` from `wordPointer`.
    ///
    /// Writing the EPC bank's StoredCRC (word 0) is refused (the tag computes it); writing the
    /// PC with a length larger than the bank's room is a memory overrun. A bank locked
    /// ``Gen2LockAction/writeRestricted`` needs the secured state
    /// (``TagAccessResult/passwordRequired`` otherwise); a permanently locked one is never
    /// written (``TagAccessResult/generalError``).
    public mutating func write(
        epc: [UInt8], bank: Gen2Bank, wordPointer: Int, words: [UInt16], password: UInt32 = 0, at time: Double
    ) -> TagAccessResult {
        let tagIndex: Int
        do { tagIndex = try open(epc: epc, password: password, at: time, writing: true) } catch { return error.result }
        guard !words.isEmpty else { return .generalError }
        let memory = tags[tagIndex].memory
        let size = memory.words(of: bank).count
        guard wordPointer >= 0, wordPointer + words.count <= size else { return .memoryOverrun }
        if bank == .epc {
            if wordPointer == 0 { return .generalError }
            if wordPointer <= 1, Int(words[1 - wordPointer] >> 11) > memory.epcCapacityWords { return .memoryOverrun }
        }
        let fields: [Gen2LockField] =
            switch bank {
            case .reserved: passwordFields(wordPointer..<(wordPointer + words.count))
            case .epc: [.epc]
            case .tid: [.tid]
            case .user: [.user]
            }
        let secured = isSecured(memory, password: password)
        for field in fields {
            let lock = memory.locks[field]
            if lock == .permanentlyNotWritable { return .generalError }
            if lock.needsSecuredState, !secured { return .passwordRequired }
        }
        guard hasWritePower(tagIndex, at: time) else { return .generalError }
        tags[tagIndex].memory.store(words, in: bank, at: wordPointer)
        return .ok
    }

    /// Gives the tag a new EPC: the PC's length bits (15-11) become the new length (its other
    /// bits are kept), the EPC words are written and the StoredCRC recomputed. An EPC longer
    /// than the bank's room is a memory overrun; one that is not whole words a general error.
    public mutating func programEPC(epc: [UInt8], newEPC: [UInt8], password: UInt32 = 0, at time: Double) -> TagAccessResult {
        guard newEPC.count % 2 == 0, !newEPC.isEmpty else {
            // Still report a missing tag or a wrong password first, as a reader would.
            do { _ = try open(epc: epc, password: password, at: time, writing: true) } catch { return error.result }
            return .generalError
        }
        let tagIndex: Int
        do { tagIndex = try open(epc: epc, password: password, at: time, writing: true) } catch { return error.result }
        let memory = tags[tagIndex].memory
        let newWords = TagMemory.words(fromBytes: newEPC)
        guard newWords.count <= min(memory.epcCapacityWords, TagMemory.maxEPCWords) else { return .memoryOverrun }
        let pc = UInt16(newWords.count) << 11 | (memory.pc & 0x07FF)
        return write(epc: epc, bank: .epc, wordPointer: 1, words: [pc] + newWords, password: password, at: time)
    }

    /// Sets the access password (RESERVED words 2-3).
    public mutating func setAccessPassword(
        epc: [UInt8], newPassword: UInt32, password: UInt32 = 0, at time: Double
    ) -> TagAccessResult {
        write(
            epc: epc, bank: .reserved, wordPointer: 2, words: [UInt16(newPassword >> 16), UInt16(newPassword & 0xFFFF)],
            password: password, at: time)
    }

    /// Sets the kill password (RESERVED words 0-1).
    public mutating func setKillPassword(
        epc: [UInt8], newPassword: UInt32, password: UInt32 = 0, at time: Double
    ) -> TagAccessResult {
        write(
            epc: epc, bank: .reserved, wordPointer: 0, words: [UInt16(newPassword >> 16), UInt16(newPassword & 0xFFFF)],
            password: password, at: time)
    }

    /// Applies a Gen2 Lock payload. Lock needs the secured state; a payload that would change a
    /// permalocked field is refused as a whole (``TagAccessResult/generalError``).
    public mutating func lock(epc: [UInt8], payload: Gen2LockPayload, password: UInt32 = 0, at time: Double) -> TagAccessResult {
        let tagIndex: Int
        do { tagIndex = try open(epc: epc, password: password, at: time, writing: true) } catch { return error.result }
        let memory = tags[tagIndex].memory
        guard isSecured(memory, password: password) else { return .passwordRequired }
        guard let locks = memory.locks.applying(payload) else { return .generalError }
        guard hasWritePower(tagIndex, at: time) else { return .generalError }
        tags[tagIndex].memory.locks = locks
        return .ok
    }

    /// Kills the tag for ever. The kill password must be presented (0:
    /// ``TagAccessResult/passwordRequired``) and must be the tag's; a tag whose kill password
    /// is 0 cannot be killed (any password is wrong for it).
    public mutating func kill(epc: [UInt8], killPassword: UInt32, at time: Double) -> TagAccessResult {
        let tagIndex: Int
        do { tagIndex = try open(epc: epc, password: 0, at: time, writing: true) } catch { return error.result }
        guard killPassword != 0 else { return .passwordRequired }
        guard killPassword == tags[tagIndex].memory.killPassword else { return .wrongPassword }
        guard hasWritePower(tagIndex, at: time) else { return .generalError }
        tags[tagIndex].isKilled = true
        tags[tagIndex].isPowered = false
        return .ok
    }

    /// A custom command (vendor `customCommandToTag`) to the tag with this EPC. An emulated
    /// tag understands two (docs/protocol.md, "Custom tag commands"); both answer with a
    /// header bit:
    ///
    /// - `E0 01` (16 bits), get temperature: 16 data bits, the tag's temperature in 0.1 °C
    ///   (two's complement): 23.0 °C plus an offset of −2.0...+2.0 °C fixed by its EPC.
    /// - `E0 02 pp nn` (32 bits), read USER words: `nn` (1...8) words of USER memory from
    ///   word `pp`. Past the end of the bank the tag sends an error reply with Gen2 error
    ///   code 0x03 (MEMORY_OVERRUN); `nn` out of range, code 0x00 (GENERAL_ERROR).
    ///
    /// Any other command (or length) is ignored by the tag, so nothing is heard within the
    /// receive timeout: TAG_NOT_FOUND. So is a reply that would end after the timeout (the tag
    /// replies T1 after the command, at the link's backscatter rate). A reply whose length
    /// is not the one the host expected fails its CRC: GENERAL_ERROR.
    public mutating func customCommand(
        epc: [UInt8], _ command: CustomTagCommand, timing: Gen2LinkTiming = .denseReaderM4, at time: Double
    ) -> TagReadResult {
        let tagIndex: Int
        do { tagIndex = try open(epc: epc, password: 0, at: time) } catch { return TagReadResult(result: error.result) }
        guard let reply = customReply(to: command, tag: tags[tagIndex]) else { return TagReadResult(result: .tagNotFound) }
        // Header bit, data or error code, RN16 handle, CRC-16.
        let bits = 1 + reply.bits + CustomTagCommand.trailerBits
        let heard = timing.t1 + timing.reply(bits: bits)
        guard heard * 1e6 <= Double(command.receiveTimeoutMicroseconds) else { return TagReadResult(result: .tagNotFound) }
        if let error = reply.errorCode { return TagReadResult(result: error == 0x03 ? .memoryOverrun : .generalError) }
        guard command.responseBitsWithHeader == UInt16(bits) else { return TagReadResult(result: .generalError) }
        return TagReadResult(result: .ok, words: reply.words)
    }

    /// The emulated tag's reply to a custom command: data words and their bit count, or a
    /// Gen2 error code (8 bits); `nil` when the tag ignores the command.
    private func customReply(to command: CustomTagCommand, tag: SimulatedTag) -> (bits: Int, words: [UInt16], errorCode: UInt8?)? {
        let c = command.command
        switch (command.commandBits, c.first, c.count > 1 ? c[1] : nil) {
        case (16, 0xE0, 0x01):
            let offset = Int(tag.epc.reduce(0) { ($0 &+ Int($1)) % 41 }) - 20
            return (16, [UInt16(bitPattern: Int16(230 + offset))], nil)
        case (32, 0xE0, 0x02):
            let pointer = Int(c[2])
            let count = Int(c[3])
            guard (1...8).contains(count) else { return (8, [], 0x00) }
            let user = tag.memory.words(of: .user)
            guard pointer + count <= user.count else { return (8, [], 0x03) }
            return (16 * count, Array(user[pointer..<(pointer + count)]), nil)
        default:
            return nil
        }
    }

    // MARK: Helpers

    /// The carrier of a write: the configured write power on the current channel.
    private func writeCarrier(_ carrier: RFCarrier) -> RFCarrier {
        RFCarrier(powerDBm: reader.writePowerDBm ?? carrier.powerDBm, frequencyMHz: carrier.frequencyMHz)
    }

    /// Whether tag `i` gets the power to write its memory at the write power (a tag that
    /// answers but lacks it replies with Gen2's "insufficient power" error code, which the
    /// vendor's results carry as GENERAL_ERROR).
    private func hasWritePower(_ i: Int, at time: Double) -> Bool {
        guard let carrier else { return false }
        return powerAtTag(i, at: time, carrier: writeCarrier(carrier)) >= tags[i].writeThresholdDBm
    }

    /// The reachable tag with this EPC (strongest first) after checking a non-zero password.
    /// A write singulates the tag at the write power and hears it only above the write
    /// sensitivity.
    private mutating func open(epc: [UInt8], password: UInt32, at time: Double, writing: Bool = false) throws(AccessFailure) -> Int {
        refresh(at: time)
        guard let on = carrier else { throw AccessFailure(result: .tagNotFound) }
        let carrier = writing ? writeCarrier(on) : on
        let threshold = writing ? writeReceiveThresholdDBm : receiveThresholdDBm
        var best: (index: Int, rssi: Double)?
        for i in tags.indices where !tags[i].isKilled && tags[i].epc == epc {
            guard powerAtTag(i, at: time, carrier: carrier) >= tags[i].activationThresholdDBm else { continue }
            let rssi = rssi(ofTag: i, at: time, carrier: carrier)
            guard rssi >= threshold else { continue }
            if best == nil || rssi > best!.rssi { best = (i, rssi) }
        }
        guard let best else { throw AccessFailure(result: .tagNotFound) }
        if password != 0, password != tags[best.index].memory.accessPassword {
            throw AccessFailure(result: .wrongPassword)
        }
        return best.index
    }

    private func isSecured(_ memory: TagMemory, password: UInt32) -> Bool {
        memory.accessPassword == 0 || password == memory.accessPassword
    }

    private func passwordFields(_ words: Range<Int>) -> [Gen2LockField] {
        var fields: [Gen2LockField] = []
        if words.overlaps(0..<2) { fields.append(.killPassword) }
        if words.overlaps(2..<4) { fields.append(.accessPassword) }
        return fields
    }
}

/// A failed access, thrown by the tag lookup.
struct AccessFailure: Error {
    var result: TagAccessResult
}
