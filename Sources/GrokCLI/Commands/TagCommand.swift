import Foundation
import GrokCommandLine
import GrokFleet
import UGrokIt

/// `grokctl tag read|write|program|lock|kill`: one operation on one tag, by EPC, on one
/// Grokker. Each runs a short inventory around the operation (tag access needs the carrier
/// on), as the vendor's apps did.
struct TagCommand: Command {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "tag", abstract: .commandTagAbstract,
            subcommands: [TagReadCommand.self, TagWriteCommand.self, TagProgramCommand.self, TagLockCommand.self,
                          TagKillCommand.self])
    }

    init(_ values: ParsedValues) {}

    static let device = OptionDeclaration.option("device", value: .valueDevice, help: .optionDevice, required: true, type: .device)
    static let epc = OptionDeclaration.option("epc", value: .valueHex, help: .optionEpc, required: true, type: .epc)
    static let password = OptionDeclaration.option("password", value: .valueHex, help: .optionTagPassword, defaultValue: "0",
                                                   type: .hex(bits: 32))
    static let bank = OptionDeclaration.option(
        "bank", value: .valueBank, help: .optionBank, defaultValue: "user", choices: ["reserved", "epc", "tid", "user"])
    static let offset = OptionDeclaration.option("offset", value: .valueBytes, help: .optionOffset, defaultValue: "0",
                                                 type: .integer(0...65_534, step: 2))

    /// What every tag subcommand parses in common.
    struct Target {
        let device: DeviceSpec
        let epc: UgiEpc
        let password: UInt32

        init(_ values: ParsedValues) throws(CLIError) {
            let devices = try DeviceSpec.parseOption(values.values(TagCommand.device))
            guard devices.count == 1 else { throw .invalidValue(value: devices.map(\.description).joined(separator: ","), option: "--device") }
            device = devices[0]
            guard let epcText = values.value(TagCommand.epc) else { throw .missingOption(option: TagCommand.epc.spelling) }
            epc = try TagCommand.epcValue(epcText, option: TagCommand.epc.spelling)
            guard let password = try values.hex(TagCommand.password) else { throw .missingOption(option: TagCommand.password.spelling) }
            self.password = UInt32(password)
        }
    }

    static func epcValue(_ text: String, option: String) throws(CLIError) -> UgiEpc {
        do { return try UgiEpc(hex: text) } catch {
            throw .badValue(value: text, option: option, rule: ValueCheck.epc.rule)
        }
    }

    static func bytes(_ text: String, option: String) throws(CLIError) -> [UInt8] {
        let digits = Array(text.hasPrefix("0x") ? String(text.dropFirst(2)) : text)
        guard digits.count % 2 == 0, !digits.isEmpty else { throw .invalidValue(value: text, option: option) }
        var out: [UInt8] = []
        for i in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(digits[i..<(i + 2)]), radix: 16) else { throw .invalidValue(value: text, option: option) }
            out.append(byte)
        }
        return out
    }

    static func bankValue(_ values: ParsedValues) -> UgiMemoryBank {
        switch values.value(bank) {
        case "reserved": .reserved
        case "epc": .epc
        case "tid": .tid
        default: .user
        }
    }

    static func offsetValue(_ values: ParsedValues) throws(CLIError) -> Int {
        guard let value = try values.integer(offset) else { throw .missingOption(option: offset.spelling) }
        return value
    }

    /// The `--json` line of a tag operation.
    struct Outcome: Encodable {
        let device: String
        let epc: String
        let operation: String
        let result: String
        let data: String?
        /// The EPC the tag answers with after a `program` that succeeded.
        var newEpc: String?
        /// Its EPC tag URI (`urn:epc:raw:...` for an EPC of no Tag Data Standard scheme).
        var newEpcURI: String?

        enum CodingKeys: String, CodingKey {
            case device, epc, operation, result, data
            case newEpc = "new_epc"
            case newEpcURI = "new_epc_uri"
        }
    }

    /// The sentence that says what a result means and what to do next.
    static func sentence(_ status: TagAccessStatus) -> MessageKey {
        switch status {
        case .ok: .tagStatusOk
        case .wrongPassword: .tagStatusWrongPassword
        case .passwordRequired: .tagStatusPasswordRequired
        case .memoryOverrun: .tagStatusMemoryOverrun
        case .tagNotFound: .tagStatusTagNotFound
        case .generalError: .tagStatusGeneralError
        case .inventoryStopped: .tagStatusInventoryStopped
        case .requiresAuthentication: .tagStatusRequiresAuthentication
        }
    }

    /// Runs `operation` on the tag (``TagJob``), prints the vendor's result; exit 1 unless it is OK.
    static func perform(_ target: Target, _ operation: TagJob.Operation, name: String, _ context: CommandContext) throws -> ExitCode {
        let job = TagJob(access: context.deviceAccess, epc: target.epc, password: target.password)
        let outcome = try job.run(operation, on: target.device)
        let status = outcome.status
        let hex = outcome.data.map { $0.map { String(format: "%02X", $0) }.joined() }
        let console = context.console
        var programmed: UgiEpc?
        if status == .ok, case .program(let newEpc) = operation { programmed = newEpc }
        if console.isJSON {
            console.json(Outcome(device: target.device.description, epc: target.epc.description, operation: name,
                                 result: status.description, data: hex, newEpc: programmed?.description,
                                 newEpcURI: programmed?.toTagURI()))
        } else {
            console.print(context.localizer.text(.tagResult, target.device.description, target.epc.description,
                                                 status.description))
            if status == .ok {
                if let hex { console.print(hex.isEmpty ? "-" : hex) }
                if let programmed {
                    console.print(context.localizer.text(.tagProgrammed, target.device.description, target.epc.description,
                                                         programmed.description, programmed.toTagURI()))
                }
            } else {
                // What the vendor's code means, and what to do next.
                console.print(context.localizer.text(Self.sentence(status), target.device.description))
            }
        }
        return status == .ok ? .success : .failure
    }
}

struct TagReadCommand: Command {
    static let length = OptionDeclaration.option("length", value: .valueBytes, help: .optionLength, defaultValue: "0",
                                                 type: .integer(0...254, step: 2))
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "read", abstract: .commandTagReadAbstract,
                             options: [TagCommand.device, TagCommand.epc, TagCommand.bank, TagCommand.offset, length, TagCommand.password])
    }
    let target: TagCommand.Target
    let bank: UgiMemoryBank
    let offset: Int
    let length: Int
    init(_ values: ParsedValues) throws(CLIError) {
        target = try TagCommand.Target(values)
        bank = TagCommand.bankValue(values)
        offset = try TagCommand.offsetValue(values)
        guard let length = try values.integer(Self.length) else { throw .missingOption(option: Self.length.spelling) }
        self.length = length
    }
    func run(_ context: CommandContext) throws -> ExitCode {
        try TagCommand.perform(target, .read(bank: bank, offset: offset, length: length), name: "read", context)
    }
}

struct TagWriteCommand: Command {
    static let data = OptionDeclaration.option("data", value: .valueHex, help: .optionData, required: true, type: .hexBytes)
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "write", abstract: .commandTagWriteAbstract,
                             options: [TagCommand.device, TagCommand.epc, TagCommand.bank, TagCommand.offset, data, TagCommand.password])
    }
    let target: TagCommand.Target
    let bank: UgiMemoryBank
    let offset: Int
    let data: [UInt8]
    init(_ values: ParsedValues) throws(CLIError) {
        target = try TagCommand.Target(values)
        bank = TagCommand.bankValue(values)
        offset = try TagCommand.offsetValue(values)
        guard let text = values.value(Self.data) else { throw .missingOption(option: Self.data.spelling) }
        data = try TagCommand.bytes(text, option: Self.data.spelling)
    }
    func run(_ context: CommandContext) throws -> ExitCode {
        try TagCommand.perform(target, .write(bank: bank, offset: offset, data: data), name: "write", context)
    }
}

struct TagProgramCommand: Command {
    static let newEpc = OptionDeclaration.option("new-epc", value: .valueHex, help: .optionNewEpc, type: .epc)
    static let sgtin = OptionDeclaration.option("sgtin", value: .valueSgtin, help: .optionSgtin)
    static let epcURI = OptionDeclaration.option("epc-uri", value: .valueUri, help: .optionEpcUri)
    static let filter = OptionDeclaration.option("filter", value: .valueNumber, help: .optionEpcFilter, type: .integer(0...63))
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "program", abstract: .commandTagProgramAbstract,
                             options: [TagCommand.device, TagCommand.epc, newEpc, sgtin, epcURI, filter, TagCommand.password])
    }
    let target: TagCommand.Target
    let newEpc: UgiEpc
    init(_ values: ParsedValues) throws(CLIError) {
        target = try TagCommand.Target(values)
        newEpc = try Self.newEpc(values)
    }

    /// The new EPC from exactly one of `--new-epc` (hex), `--sgtin` (GS1 parts) and
    /// `--epc-uri` (a tag or pure identity URI), encoded by ``EpcTag``.
    static func newEpc(_ values: ParsedValues) throws(CLIError) -> UgiEpc {
        let given = [newEpc, sgtin, epcURI].filter { values.value($0) != nil }
        guard let first = given.first else { throw .missingOneOf([newEpc.spelling, sgtin.spelling, epcURI.spelling]) }
        if given.count > 1 { throw .conflictingOptions(first.spelling, given[1].spelling) }
        let filterValue = try values.integer(filter)
        if first == newEpc {
            if filterValue != nil { throw .conflictingOptions(newEpc.spelling, filter.spelling) }
            return try TagCommand.epcValue(values.value(newEpc) ?? "", option: newEpc.spelling)
        }
        do {
            if first == sgtin { return try EpcTag(identity: "sgtin", fields: values.value(sgtin) ?? "", filter: filterValue ?? 0).epc }
            return try EpcTag(uri: values.value(epcURI) ?? "", filter: filterValue).epc
        } catch {
            throw .coded(code: error.code, arguments: error.arguments)
        }
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        try TagCommand.perform(target, .program(newEpc: newEpc), name: "program", context)
    }
}

struct TagLockCommand: Command {
    static let payload = OptionDeclaration.option("payload", value: .valueHex, help: .optionLockPayload, required: true,
                                                  type: .hex(bits: 20))
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "lock", abstract: .commandTagLockAbstract,
                             options: [TagCommand.device, TagCommand.epc, payload, TagCommand.password])
    }
    let target: TagCommand.Target
    let payload: UInt32
    init(_ values: ParsedValues) throws(CLIError) {
        target = try TagCommand.Target(values)
        guard let value = try values.hex(Self.payload) else { throw .missingOption(option: Self.payload.spelling) }
        payload = UInt32(value)
    }
    func run(_ context: CommandContext) throws -> ExitCode {
        try TagCommand.perform(target, .lock(payload: payload), name: "lock", context)
    }
}

struct TagKillCommand: Command {
    static let killPassword = OptionDeclaration.option("kill-password", value: .valueHex, help: .optionKillPassword, required: true,
                                                       type: .hex(bits: 32))
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "kill", abstract: .commandTagKillAbstract,
                             options: [TagCommand.device, TagCommand.epc, killPassword])
    }
    let target: TagCommand.Target
    let killPassword: UInt32
    init(_ values: ParsedValues) throws(CLIError) {
        target = try TagCommand.Target(values)
        guard let killPassword = try values.hex(Self.killPassword) else { throw .missingOption(option: Self.killPassword.spelling) }
        self.killPassword = UInt32(killPassword)
    }
    /// The vendor's tag-access set has no kill (the slave-mode accesses are read, write,
    /// program EPC, lock, custom command and change power), so this refuses before
    /// connecting: nothing is sent to the Grokker or the tag.
    func run(_ context: CommandContext) throws -> ExitCode {
        throw ReaderError.notSupported(port: target.device.description, feature: "kill")
    }
}

extension ValueCheck {
    /// An EPC in hex, as ``UgiEpc`` reads it (4 to 27 whole bytes).
    static let epc = ValueCheck(
        name: "epc", rule: .epc(minDigits: UgiEpc.minByteCount * 2, maxDigits: UgiEpc.maxByteCount * 2),
        accepts: { (try? UgiEpc(hex: $0)) != nil })
}

extension ValueType {
    /// An EPC in hex (4 to 27 whole bytes), checked by ``UgiEpc``.
    static let epc = ValueType.checked(.epc)
}
