/// A command the host sends to a Grokker. Each has an ``Opcode``; the payload layouts are
/// in docs/protocol.md.
public enum Command: Sendable, Hashable {
    /// Asks for the reader's identity and capabilities; answered by ``Response/identify(_:)``.
    case identify
    /// Asks the Grokker to send `payload` back unchanged (link tests and benchmarks);
    /// answered by ``Response/echo(_:)``. At most ``maxEchoBytes`` bytes.
    case echo([UInt8])
    /// Sets the region the reader operates in (vendor `setRegion`); answered by
    /// ``Response/setRegion(_:)`` with the reader information as it now stands. A region
    /// that is not one of ``RegionCatalog/all`` is refused with ``StatusCode/invalidArgument``,
    /// a unit whose user may not choose its region with ``StatusCode/notAllowed``.
    case setRegion(RegionSetting)
    /// Starts (or restarts with new parameters) an inventory; answered by
    /// ``Response/done(_:)``; reads then arrive as ``InventoryEvent``s. A reader whose
    /// region must be set first answers ``StatusCode/regionNotSet``.
    case startInventory(InventoryParameters)
    /// Stops the inventory; answered by ``Response/done(_:)`` once no more reads will come.
    case stopInventory
    /// One operation on the tag with this EPC, while an inventory runs; answered by
    /// ``Response/tagAccess(_:words:)`` with the vendor's result (and the words read).
    case tagAccess(epc: [UInt8], TagOperation)
    /// Asks for the battery's state; answered by ``Response/battery(_:)``, or refused with
    /// ``StatusCode/busy`` while an inventory runs.
    case getBattery
    /// Asks for the reader's counters, zeroing them afterwards when `reset`; answered by
    /// ``Response/diagnostics(_:)``.
    case getDiagnostics(reset: Bool)
    /// A firmware-update request (opcodes 0x04xx), answered by ``Response/firmware(_:)``
    /// or, for ``FirmwareRequest/activate``, ``Response/done(_:)``.
    case firmware(FirmwareRequest)
    /// A factory-provisioning request (opcodes 0x05xx), answered by
    /// ``Response/provisioning(_:for:)`` with the unit's record as it then stands.
    case provisioning(ProvisioningRequest)
    /// Sets the Geiger-counter sound (vendor `setGeigerCounterSound`); answered by
    /// ``Response/done(_:)``, or ``StatusCode/invalidArgument`` for values the piezo cannot
    /// play (``GeigerSound/problem``).
    case setGeigerSound(GeigerSound)
    /// Sets the found-item and found-last-item sounds; answered by ``Response/done(_:)``,
    /// or ``StatusCode/invalidArgument`` (too many tones, frequencies out of range).
    case setFoundSounds(FoundSounds)
    /// Plays a sound now (vendor `playSound`); answered by ``Response/done(_:)``.
    case playSound(SoundName)
    /// Sets the speaker's volume, 0 (silent) to 255 (loudest), which the Grokker maps to its
    /// `numVolumeLevels` steps; answered by ``Response/done(_:)``.
    case setVolume(UInt8)
    /// Changes the running inventory's power (vendor `changePower`); answered by
    /// ``Response/powerChanged(_:)`` with the vendor's tag-access result.
    case changePower(PowerRange)
    /// Sets, changes or (with an empty `new`) clears the Grokker's password; `old` must be
    /// the current one (empty when none is set). Answered by
    /// ``Response/grokkerPassword(_:for:)``.
    case setGrokkerPassword(old: String, new: String)
    /// Authenticates this link session with the Grokker's password; answered by
    /// ``Response/grokkerPassword(_:for:)``.
    case authenticateGrokker(String)
    /// Whether this link session may use the Grokker: SUCCESS (authenticated),
    /// NOT_AUTHENTICATED or NO_PASSWORD_SET; answered by ``Response/grokkerPassword(_:for:)``.
    case grokkerAuthenticationStatus
    /// Starts tuning the antenna on every channel of the region; answered by
    /// ``Response/done(_:)``, then ``AntennaTuningProgress`` events, one per channel.
    case startAntennaTuning
    /// Stops a tuning run; answered by ``Response/done(_:)`` once no more progress comes.
    case stopAntennaTuning
    /// Asks for the antenna's reflected power; answered by ``Response/antennaTuning(_:)``.
    case getAntennaTuning

    /// The largest echo payload: what fits in a maximum-size response
    /// (header, status byte, 2-byte length).
    public static let maxEchoBytes = WireLimits.maxMessageBytes - MessageHeader.size - 1 - 2

    /// The command's number.
    public var opcode: Opcode {
        switch self {
        case .identify: .identify
        case .echo: .echo
        case .setRegion: .setRegion
        case .startInventory: .startInventory
        case .stopInventory: .stopInventory
        case .tagAccess: .tagAccess
        case .getBattery: .getBattery
        case .getDiagnostics: .getDiagnostics
        case .firmware(let request): request.opcode
        case .provisioning(let request): request.opcode
        case .setGeigerSound: .setGeigerSound
        case .setFoundSounds: .setFoundSounds
        case .playSound: .playSound
        case .setVolume: .setVolume
        case .changePower: .changePower
        case .setGrokkerPassword: .setGrokkerPassword
        case .authenticateGrokker: .authenticateGrokker
        case .grokkerAuthenticationStatus: .grokkerAuthenticationStatus
        case .startAntennaTuning: .startAntennaTuning
        case .stopAntennaTuning: .stopAntennaTuning
        case .getAntennaTuning: .getAntennaTuning
        }
    }

    func writePayload(to writer: inout ByteWriter) {
        switch self {
        case .identify, .stopInventory, .getBattery, .grokkerAuthenticationStatus, .startAntennaTuning,
             .stopAntennaTuning, .getAntennaTuning:
            break
        case .changePower(let range):
            writer.i16(range.initialTenthsDBm); writer.i16(range.minTenthsDBm); writer.i16(range.maxTenthsDBm)
        case .setGrokkerPassword(let old, let new):
            writer.string(old)
            writer.string(new)
        case .authenticateGrokker(let password):
            writer.string(password)
        case .getDiagnostics(let reset):
            writer.u8(reset ? 1 : 0)
        case .firmware(let request):
            request.write(to: &writer)
        case .provisioning(let request):
            request.write(to: &writer)
        case .setGeigerSound(let sound):
            sound.write(to: &writer)
        case .setFoundSounds(let sounds):
            sounds.write(to: &writer)
        case .playSound(let name):
            writer.u8(name.rawValue)
        case .setVolume(let volume):
            writer.u8(volume)
        case .startInventory(let parameters):
            parameters.write(to: &writer)
        case .tagAccess(let epc, let operation):
            writer.u8(UInt8(epc.count))
            writer.raw(epc)
            operation.write(to: &writer)
        case .setRegion(let region):
            writer.u16(region.number)
            writer.string(region.name)
        case .echo(let payload):
            precondition(payload.count <= Self.maxEchoBytes, "echo payload exceeds Command.maxEchoBytes")
            writer.u16(UInt16(payload.count))
            writer.raw(payload)
        }
    }

    static func read(opcode: Opcode, from reader: inout ByteReader) throws(ProtocolError) -> Command {
        switch opcode {
        case .identify:
            return .identify
        case .echo:
            return .echo(try readEcho(from: &reader))
        case .setRegion:
            let number = try reader.u16("setRegion.number")
            let name = try reader.string("setRegion.name")
            return .setRegion(RegionSetting(name: name, number: number))
        case .startInventory:
            return .startInventory(try InventoryParameters.read(from: &reader))
        case .stopInventory:
            return .stopInventory
        case .tagAccess:
            let count = try reader.u8("tagAccess.epc.length")
            guard (2...62).contains(count) else { throw .invalidValue(field: "tagAccess.epc.length", value: Int(count)) }
            let epc = try reader.raw(count: Int(count), "tagAccess.epc")
            return .tagAccess(epc: epc, try TagOperation.read(from: &reader))
        case .getBattery:
            return .getBattery
        case .getDiagnostics:
            return .getDiagnostics(reset: try reader.u8("diagnostics.reset") != 0)
        case .setGeigerSound:
            return .setGeigerSound(try GeigerSound.read(from: &reader))
        case .setFoundSounds:
            return .setFoundSounds(try FoundSounds.read(from: &reader))
        case .playSound:
            let raw = try reader.u8("playSound.sound")
            guard let name = SoundName(rawValue: raw) else { throw .invalidValue(field: "playSound.sound", value: Int(raw)) }
            return .playSound(name)
        case .setVolume:
            return .setVolume(try reader.u8("setVolume.volume"))
        case .changePower:
            return .changePower(PowerRange(initialTenthsDBm: try reader.i16("changePower.initial"),
                                           minTenthsDBm: try reader.i16("changePower.min"),
                                           maxTenthsDBm: try reader.i16("changePower.max")))
        case .setGrokkerPassword:
            return .setGrokkerPassword(old: try reader.string("setGrokkerPassword.old"),
                                       new: try reader.string("setGrokkerPassword.new"))
        case .authenticateGrokker:
            return .authenticateGrokker(try reader.string("authenticateGrokker.password"))
        case .grokkerAuthenticationStatus:
            return .grokkerAuthenticationStatus
        case .startAntennaTuning:
            return .startAntennaTuning
        case .stopAntennaTuning:
            return .stopAntennaTuning
        case .getAntennaTuning:
            return .getAntennaTuning
        case _ where FirmwareRequest.handles(opcode):
            return .firmware(try FirmwareRequest.read(opcode: opcode, from: &reader))
        case _ where ProvisioningRequest.handles(opcode):
            return .provisioning(try ProvisioningRequest.read(opcode: opcode, from: &reader))
        default:
            throw .unknownOpcode(opcode.rawValue)
        }
    }

    static func readEcho(from reader: inout ByteReader) throws(ProtocolError) -> [UInt8] {
        let count = try reader.u16("echo.length")
        guard Int(count) <= maxEchoBytes else {
            throw .invalidValue(field: "echo.length", value: Int(count))
        }
        return try reader.raw(count: Int(count), "echo.payload")
    }
}

/// What a Grokker answers a ``Command`` with: the command's result, or a failure.
public enum Response: Sendable, Hashable {
    /// The answer to ``Command/identify``.
    case identify(ReaderInfo)
    /// The answer to ``Command/echo(_:)``: the same payload.
    case echo([UInt8])
    /// The answer to ``Command/setRegion(_:)``: the reader information with the new region.
    case setRegion(ReaderInfo)
    /// Success with no result (start and stop inventory), for the request with this opcode.
    case done(Opcode)
    /// The answer to ``Command/tagAccess(epc:_:)``: the vendor's result, and the words read.
    case tagAccess(TagAccessStatus, words: [UInt16])
    /// The answer to ``Command/getBattery``.
    case battery(BatteryInfo)
    /// The answer to ``Command/getDiagnostics(reset:)``: the counters before any reset.
    case diagnostics(ReaderCounters)
    /// The answer to a ``Command/firmware(_:)`` request, for the request with `opcode`.
    case firmware(FirmwareReply, for: Opcode)
    /// The answer to ``Command/changePower(_:)``: the vendor's result (OK, GENERAL_ERROR for
    /// a range the reader cannot use, INVENTORY_STOPPED when none runs).
    case powerChanged(TagAccessStatus)
    /// The answer to a Grokker-password command with `opcode`.
    case grokkerPassword(GrokkerPasswordResult, for: Opcode)
    /// The answer to ``Command/getAntennaTuning``.
    case antennaTuning(AntennaTuningInfo)
    /// The answer to a ``Command/provisioning(_:)`` request with `opcode`: the unit's record.
    case provisioning(ProvisioningRecord, for: Opcode)
    /// The request with `opcode` failed or was refused. `message` is English detail for
    /// logs (at most ``WireLimits/maxStringBytes`` UTF-8 bytes); act on `status`.
    case failure(opcode: Opcode, status: StatusCode, message: String)

    /// The opcode of the request this answers.
    public var opcode: Opcode {
        switch self {
        case .identify: .identify
        case .echo: .echo
        case .setRegion: .setRegion
        case .done(let opcode): opcode
        case .tagAccess: .tagAccess
        case .battery: .getBattery
        case .diagnostics: .getDiagnostics
        case .firmware(_, let opcode): opcode
        case .powerChanged: .changePower
        case .grokkerPassword(_, let opcode): opcode
        case .antennaTuning: .getAntennaTuning
        case .provisioning(_, let opcode): opcode
        case .failure(let opcode, _, _): opcode
        }
    }

    func writePayload(to writer: inout ByteWriter) {
        switch self {
        case .identify(let info), .setRegion(let info):
            writer.u8(0)
            info.write(to: &writer)
        case .echo(let payload):
            precondition(payload.count <= Command.maxEchoBytes, "echo payload exceeds Command.maxEchoBytes")
            writer.u8(0)
            writer.u16(UInt16(payload.count))
            writer.raw(payload)
        case .done:
            writer.u8(0)
        case .battery(let info):
            writer.u8(0)
            info.write(to: &writer)
        case .diagnostics(let counters):
            writer.u8(0)
            counters.write(to: &writer)
        case .firmware(let reply, _):
            writer.u8(0)
            reply.write(to: &writer)
        case .provisioning(let record, _):
            writer.u8(0)
            record.write(to: &writer)
        case .tagAccess(let status, let words):
            writer.u8(0)
            writer.u8(status.rawValue)
            writer.u8(UInt8(words.count))
            for word in words { writer.u16(word) }
        case .powerChanged(let status):
            writer.u8(0)
            writer.u8(status.rawValue)
        case .grokkerPassword(let result, _):
            writer.u8(0)
            writer.u8(result.rawValue)
        case .antennaTuning(let info):
            writer.u8(0)
            info.write(to: &writer)
        case .failure(_, let status, let message):
            writer.u8(status.code)
            writer.string(message)
        }
    }

    static func read(opcode: Opcode, from reader: inout ByteReader) throws(ProtocolError) -> Response {
        let status = try reader.u8("response.status")
        if status != 0 {
            let message = try reader.string("response.message")
            return .failure(opcode: opcode, status: StatusCode(code: status), message: message)
        }
        switch opcode {
        case .identify:
            return .identify(try ReaderInfo.read(from: &reader))
        case .echo:
            return .echo(try Command.readEcho(from: &reader))
        case .setRegion:
            return .setRegion(try ReaderInfo.read(from: &reader))
        case .startInventory, .stopInventory, .activateImage, .setGeigerSound, .setFoundSounds, .playSound, .setVolume,
             .startAntennaTuning, .stopAntennaTuning:
            return .done(opcode)
        case .changePower:
            let code = try reader.u8("changePower.result")
            guard let status = TagAccessStatus(rawValue: code) else { throw .invalidValue(field: "changePower.result", value: Int(code)) }
            return .powerChanged(status)
        case .setGrokkerPassword, .authenticateGrokker, .grokkerAuthenticationStatus:
            let code = try reader.u8("grokkerPassword.result")
            guard let result = GrokkerPasswordResult(rawValue: code) else {
                throw .invalidValue(field: "grokkerPassword.result", value: Int(code))
            }
            return .grokkerPassword(result, for: opcode)
        case .getAntennaTuning:
            return .antennaTuning(try AntennaTuningInfo.read(from: &reader))
        case .tagAccess:
            let code = try reader.u8("tagAccess.result")
            guard let status = TagAccessStatus(rawValue: code) else {
                throw .invalidValue(field: "tagAccess.result", value: Int(code))
            }
            let count = try reader.u8("tagAccess.words.length")
            var words: [UInt16] = []
            for _ in 0..<count { words.append(try reader.u16("tagAccess.words")) }
            return .tagAccess(status, words: words)
        case .getBattery:
            return .battery(try BatteryInfo.read(from: &reader))
        case .getDiagnostics:
            return .diagnostics(try ReaderCounters.read(from: &reader))
        case _ where FirmwareRequest.handles(opcode):
            return .firmware(try FirmwareReply.read(opcode: opcode, from: &reader), for: opcode)
        case _ where ProvisioningRequest.handles(opcode):
            return .provisioning(try ProvisioningRecord.read(from: &reader), for: opcode)
        default:
            throw .unknownOpcode(opcode.rawValue)
        }
    }
}
