import GrokAudio
@testable import GrokProtocol

/// A deterministic generator so random cases are reproducible (the project's SplitMix64).
typealias SeededGenerator = SplitMix64

/// Bytes from a hex string; spaces are ignored.
func hex(_ text: String) -> [UInt8] {
    let digits = Array(text.filter { !$0.isWhitespace })
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
}

enum Samples {
    /// The reader used by the known byte vector.
    static let grokker = ReaderInfo(
        hardwareType: .grokker1, hardwareModel: "Grokker", hardwareRevision: 3,
        firmwareVersion: FirmwareVersion(major: 1, minor: 7, build: 3),
        loaderVersion: FirmwareVersion(major: 1, minor: 2, build: 0), serialNumber: 12_345_678,
        readerProtocolVersion: 20, region: RegionCatalog.all[0].setting,
        userMustSetRegion: false, userCanSetRegion: true, provisioned: true, enforceRegion: true,
        maxPowerTenthsDBm: 300, maxSensitivityTenthsDBm: -800, numVolumeLevels: 8, maxTonesInSound: 16,
        hasBattery: true, hasExternalPower: true, batteryCapacityMinutes: 240, batteryCapacityMAh: 1000,
        deviceInitializedSuccessfully: true)

    /// Every field at its smallest, region not set, all flags off.
    static let minimal = ReaderInfo(
        hardwareType: .unknown, hardwareModel: "", hardwareRevision: 0,
        firmwareVersion: FirmwareVersion(major: 0, minor: 0, build: 0),
        loaderVersion: FirmwareVersion(major: 0, minor: 0, build: 0), serialNumber: 0,
        readerProtocolVersion: 0, region: nil, userMustSetRegion: false, userCanSetRegion: false,
        provisioned: false, enforceRegion: false, maxPowerTenthsDBm: .min, maxSensitivityTenthsDBm: .min,
        numVolumeLevels: 0, maxTonesInSound: 0, hasBattery: false, hasExternalPower: false,
        batteryCapacityMinutes: 0, batteryCapacityMAh: 0, deviceInitializedSuccessfully: false)

    /// Every field at its largest; 255-byte multi-byte strings.
    static let maximal = ReaderInfo(
        hardwareType: .grokker1, hardwareModel: String(repeating: "é", count: 127) + "x", hardwareRevision: .max,
        firmwareVersion: FirmwareVersion(major: .max, minor: .max, build: .max),
        loaderVersion: FirmwareVersion(major: .max, minor: .max, build: .max), serialNumber: .max,
        readerProtocolVersion: .max, region: RegionSetting(name: String(repeating: "z", count: 255), number: .max),
        userMustSetRegion: true, userCanSetRegion: true, provisioned: true, enforceRegion: true,
        maxPowerTenthsDBm: .max, maxSensitivityTenthsDBm: .max, numVolumeLevels: .max, maxTonesInSound: .max,
        hasBattery: true, hasExternalPower: true, batteryCapacityMinutes: .max, batteryCapacityMAh: .max,
        deviceInitializedSuccessfully: true)

    /// Region not set but must be: an out-of-box unit.
    static let outOfBox: ReaderInfo = {
        var info = grokker
        info.region = nil
        info.userMustSetRegion = true
        info.serialNumber = 99_999_999
        return info
    }()

    static let allBytes = (0...255).map { UInt8($0) }
    static let maxEcho = (0..<Command.maxEchoBytes).map { UInt8(truncatingIfNeeded: $0 &* 31) }

    static let requests: [RequestMessage] = [
        RequestMessage(id: 0, command: .identify),
        RequestMessage(id: 1, command: .identify),
        RequestMessage(id: .max, command: .identify),
        RequestMessage(id: 2, command: .echo([])),
        RequestMessage(id: 3, command: .echo([0])),
        RequestMessage(id: 4, command: .echo(allBytes)),
        RequestMessage(id: .max, command: .echo(maxEcho)),
        RequestMessage(id: 8, command: .setGeigerSound(.standard)),
        RequestMessage(id: 9, command: .setFoundSounds(.standard)),
        RequestMessage(id: 10, command: .setFoundSounds(FoundSounds(foundItem: [], foundLast: []))),
        RequestMessage(id: 11, command: .playSound(.foundLast)),
        RequestMessage(id: 12, command: .setVolume(128)),
        RequestMessage(id: 13, command: .setGrokkerPassword(old: "", new: "s3cret")),
        RequestMessage(id: 14, command: .authenticateGrokker("pässwort")),
        RequestMessage(id: 15, command: .grokkerAuthenticationStatus),
        RequestMessage(id: 16, command: .startAntennaTuning),
        RequestMessage(id: 17, command: .stopAntennaTuning),
        RequestMessage(id: 18, command: .getAntennaTuning),
        RequestMessage(id: 19, command: .changePower(PowerRange(initialTenthsDBm: 200, minTenthsDBm: 100, maxTenthsDBm: 300))),
        RequestMessage(id: 20, command: .tagAccess(epc: [1, 2, 3, 4], .custom(CustomTagCommand(
            command: [0xE0, 0x02, 0x01, 0x02], commandBits: 32, responseBitsNoHeader: 0, responseBitsWithHeader: 65,
            receiveTimeoutMicroseconds: 5000)))),
        RequestMessage(id: 21, command: .tagAccess(epc: [1, 2], .custom(CustomTagCommand(
            command: [0xA0], commandBits: 3, responseBitsNoHeader: 48, responseBitsWithHeader: 0, receiveTimeoutMicroseconds: 0)))),
        RequestMessage(id: 23, command: .provisioning(.status)),
        RequestMessage(id: 24, command: .provisioning(.setMode(true))),
        RequestMessage(id: 25, command: .provisioning(.registerSerialNumber(.max))),
        RequestMessage(id: 26, command: .provisioning(.setAntennaType(2))),
        RequestMessage(id: 27, command: .provisioning(.setHardwareRevision(4))),
        RequestMessage(id: 28, command: .provisioning(.setStatus(.returned))),
        RequestMessage(id: 29, command: .provisioning(.setStatus(ProvisioningStatus(rawValue: 200)))),
        RequestMessage(id: 30, command: .provisioning(.setUserHasSetRegion(false))),
    ]

    static let provisioningRecord = ProvisioningRecord(
        serialNumber: 12_345_678, hardwareRevision: 3, antennaType: 1, status: .complete, provisioned: true,
        userHasSetRegion: false, userCanSetRegion: true, enforceRegion: true, provisioningMode: false)

    static let statuses: [StatusCode] = [
        .unsupportedOpcode, .unsupportedVersion, .malformedRequest, .invalidArgument, .busy, .wrongMode,
        .notProvisioned, .regionNotSet, .notAllowed, .authenticationRequired, .setRegionNotSupported, .storageFailure, .internalError, .unrecognized(1 + 99),
    ]

    static let responses: [ResponseMessage] = [
        ResponseMessage(id: 1, response: .identify(grokker)),
        ResponseMessage(id: 0, response: .identify(minimal)),
        ResponseMessage(id: .max, response: .identify(maximal)),
        ResponseMessage(id: 9, response: .identify(outOfBox)),
        ResponseMessage(id: 2, response: .echo([])),
        ResponseMessage(id: 3, response: .echo(allBytes)),
        ResponseMessage(id: .max, response: .echo(maxEcho)),
        ResponseMessage(id: 8, response: .done(.setGeigerSound)),
        ResponseMessage(id: 11, response: .done(.playSound)),
        ResponseMessage(id: 12, response: .grokkerPassword(.wrongPassword, for: .authenticateGrokker)),
        ResponseMessage(id: 13, response: .grokkerPassword(.success, for: .setGrokkerPassword)),
        ResponseMessage(id: 14, response: .grokkerPassword(.notAuthenticated, for: .grokkerAuthenticationStatus)),
        ResponseMessage(id: 15, response: .done(.startAntennaTuning)),
        ResponseMessage(id: 16, response: .powerChanged(.inventoryStopped)),
        ResponseMessage(id: 17, response: .antennaTuning(AntennaTuningInfo(
            staticAverageTenthsDBm: 62, dynamicAverageTenthsDBm: -15,
            channels: [ChannelReflection(frequencyKHz: 865_700, reflectedTenthsDBm: 55),
                       ChannelReflection(frequencyKHz: 866_300, reflectedTenthsDBm: 69)]))),
        ResponseMessage(id: 18, response: .antennaTuning(AntennaTuningInfo(
            staticAverageTenthsDBm: -3, dynamicAverageTenthsDBm: nil, channels: []))),
        ResponseMessage(id: 22, response: .provisioning(provisioningRecord, for: .provisioningStatus)),
        ResponseMessage(id: 23, response: .provisioning(ProvisioningRecord(
            serialNumber: 0, hardwareRevision: 0, antennaType: 0, status: .none, provisioned: false, userHasSetRegion: false,
            userCanSetRegion: false, enforceRegion: false, provisioningMode: false), for: .setAntennaType)),
        ResponseMessage(id: 24, response: .provisioning(ProvisioningRecord(
            serialNumber: .max, hardwareRevision: .max, antennaType: .max, status: ProvisioningStatus(rawValue: .max), provisioned: true,
            userHasSetRegion: true, userCanSetRegion: true, enforceRegion: true, provisioningMode: true), for: .setUserHasSetRegion)),
        ResponseMessage(id: 0, response: .failure(opcode: .unspecified, status: .malformedRequest, message: "")),
        ResponseMessage(
            id: 5, response: .failure(opcode: Opcode(rawValue: .max), status: .unsupportedOpcode,
                message: String(repeating: "ü", count: 127))),
    ] + statuses.enumerated().map { index, status in
        ResponseMessage(id: UInt16(index), response: .failure(opcode: .echo, status: status, message: "status \(status)"))
    }
}
