import GrokAudio
import GrokProtocol

/// Factory provisioning on the vendor protocol (the `Provision*` family, command 0x04).
/// The record is what GetVersion reports (serial number, board revision, antenna type,
/// provisioning status, region flags); provisioning mode is GetVersion flag 01, so
/// ``setProvisioningMode(_:)`` asks GetVersion again with it. Every write asks GetVersion
/// afterwards, so ``ReaderSession/info`` and the record follow what the reader stored.
extension ReaderSession {
    /// The reader's provisioning record, from the last GetVersion.
    public func provisioningRecord() throws(ReaderError) -> ProvisioningRecord {
        guard let v = version else { throw .lostConnection(port: port.name) }
        return Self.provisioningRecord(v, provisioningMode: provisioningMode, enforceRegion: enforceRegion)
    }

    /// The record a GetVersion answer gives.
    public static func provisioningRecord(_ v: VendorReaderVersion, provisioningMode: Bool, enforceRegion: Bool) -> ProvisioningRecord {
        let rules = RegionSettingRules(readerProtocolVersion: v.protocolVersion, hardwareRevision: v.hardwareRevision,
                                       softwareType: v.softwareType, deviceFlags: v.deviceFlags, enforceRegion: enforceRegion)
        return ProvisioningRecord(serialNumber: v.serialNumber, hardwareRevision: v.hardwareRevision, antennaType: v.antennaType,
                                  status: ProvisioningStatus(rawValue: v.provisioningStatus), provisioned: v.provisioningStatus != 0,
                                  userHasSetRegion: v.userHasSetRegion, userCanSetRegion: rules.userCanSetRegion,
                                  enforceRegion: enforceRegion, provisioningMode: provisioningMode)
    }

    /// Enters or leaves provisioning mode: the vendor host sends GetVersion with flag 01
    /// (provisioning mode) instead of 02; the reader's answer is the record.
    @discardableResult
    public func setProvisioningMode(_ on: Bool) throws(ReaderError) -> ProvisioningRecord {
        provisioningMode = on
        try identify()
        return try provisioningRecord()
    }

    /// Registers `serial` as the reader's serial number (vendor `ProvisionRegister`, sub-op
    /// 00): with the reader's board revision, the vendor's battery constants for it, its
    /// internal id and antenna type as GetVersion reported them.
    @discardableResult
    public func registerSerialNumber(_ serial: UInt32) throws(ReaderError) -> ProvisioningRecord {
        guard let v = version else { throw .lostConnection(port: port.name) }
        let constants = VendorBatteryCurves.provisioningConstants(hardwareRevision: v.hardwareRevision)
        return try provisionAndIdentify(.register(hardwareRevision: v.hardwareRevision, batteryConstantA: constants.a,
                                                  batteryConstantB: constants.b, serialNumber: serial,
                                                  internalId: v.internalId, antennaType: v.antennaType))
    }

    /// Stores the antenna fitted (vendor `ProvisionSetAntennaType`, sub-op 02).
    @discardableResult
    public func setAntennaType(_ type: UInt8) throws(ReaderError) -> ProvisioningRecord {
        try provisionAndIdentify(.setAntennaType(type))
    }

    /// Stores the board revision (vendor `ProvisionSetReaderHardwareRevision`, sub-op 04;
    /// reader protocol 19 or later).
    @discardableResult
    public func setHardwareRevision(_ revision: UInt8) throws(ReaderError) -> ProvisioningRecord {
        try provisionAndIdentify(.setHardwareRevision(revision))
    }

    /// Stores the provisioning status (vendor `ProvisionSetProvisioningStatus`, sub-op 01).
    @discardableResult
    public func setProvisioningStatus(_ status: ProvisioningStatus) throws(ReaderError) -> ProvisioningRecord {
        try provisionAndIdentify(.setStatus(status.rawValue))
    }

    /// Sets or clears the "user has set region" flag (vendor sub-op 03, reader protocol 18
    /// or later); clearing it returns the reader to "region not set", as out of the box.
    @discardableResult
    public func setUserHasSetRegion(_ on: Bool) throws(ReaderError) -> ProvisioningRecord {
        try provisionAndIdentify(.setUserHasSetRegion(on))
    }

    private func provisionAndIdentify(_ request: VendorProvisioning) throws(ReaderError) -> ProvisioningRecord {
        try provision(request)
        try identify()
        return try provisioningRecord()
    }
}
