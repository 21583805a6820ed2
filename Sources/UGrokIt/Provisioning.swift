import GrokAudio
import GrokProtocol

/// Factory provisioning over the link (vendor provisioning mode, register, set antenna
/// type, set hardware revision, set provisioning status, set user-has-set-region). Reading
/// the record works at any time; every write needs ``setProvisioningMode(_:)`` first and is
/// refused (``ReaderError/rejected(port:command:status:)``, `not_allowed`) otherwise. After
/// a write that changes what the reader reports (serial number, board revision, region
/// flag) the session's ``ReaderSession/info`` is read again.
extension ReaderSession {
    /// The reader's provisioning record.
    public func provisioningRecord() throws(ReaderError) -> ProvisioningRecord {
        try provisioning(.status)
    }

    /// Enters or leaves provisioning mode (vendor provisioning mode). The mode ends by
    /// itself when the reader restarts.
    @discardableResult
    public func setProvisioningMode(_ on: Bool) throws(ReaderError) -> ProvisioningRecord {
        try provisioning(.setMode(on))
    }

    /// Registers `serial` as the reader's serial number (vendor register).
    @discardableResult
    public func registerSerialNumber(_ serial: UInt32) throws(ReaderError) -> ProvisioningRecord {
        let record = try provisioning(.registerSerialNumber(serial))
        _ = try identify()
        return record
    }

    /// Stores the antenna fitted (vendor set antenna type).
    @discardableResult
    public func setAntennaType(_ type: UInt8) throws(ReaderError) -> ProvisioningRecord {
        try provisioning(.setAntennaType(type))
    }

    /// Stores the board revision (vendor set hardware revision).
    @discardableResult
    public func setHardwareRevision(_ revision: UInt8) throws(ReaderError) -> ProvisioningRecord {
        let record = try provisioning(.setHardwareRevision(revision))
        _ = try identify()
        return record
    }

    /// Stores the provisioning status (vendor set provisioning status).
    @discardableResult
    public func setProvisioningStatus(_ status: ProvisioningStatus) throws(ReaderError) -> ProvisioningRecord {
        try provisioning(.setStatus(status))
    }

    /// Sets or clears the "user has set region" flag (vendor set user-has-set-region);
    /// clearing it returns the reader to "region not set", as out of the box (vendor
    /// `debug_unsetRegionConfiguredFlag`).
    @discardableResult
    public func setUserHasSetRegion(_ on: Bool) throws(ReaderError) -> ProvisioningRecord {
        let record = try provisioning(.setUserHasSetRegion(on))
        _ = try identify()
        return record
    }

    private func provisioning(_ request: ProvisioningRequest) throws(ReaderError) -> ProvisioningRecord {
        let response = try call(.provisioning(request))
        guard case .provisioning(let record, _) = response else {
            throw .malformedResponse(port: port.name, detail: "\(request.opcode) answered with \(response.opcode)")
        }
        return record
    }
}
