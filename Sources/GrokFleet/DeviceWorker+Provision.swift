import GrokBasics
import Foundation
import GrokAudio
import GrokFirmware
import GrokLedger
import GrokLink
import GrokProtocol
import UGrokIt

// Factory provisioning: the fields the profile wants, set in provisioning mode.
extension DeviceWorker {
    func provision() throws(Stop) -> Result {
        guard let policy = profile.provisioning else { return .skipped("step_not_configured") }
        guard let session, let info else { throw Stop() }
        let record: ProvisioningRecord
        do {
            record = try session.provisioningRecord()
        } catch {
            return readerFailure(.provision, error)
        }
        provisioning = record
        let decision = decider.provision(facts(info))
        if let known = Self.result(of: decision) { return known }
        if mode == .verify { return .done("step_verified", decision.detail) }
        let needed = Self.provisioningChanges(policy, record: record)
        if let failure = intend(.provision, target: needed.map { "\($0.field) \($0.wanted)" }.joined(separator: ", ")) {
            return failure
        }
        do {
            try session.setProvisioningMode(true)
            defer { _ = try? session.setProvisioningMode(false) }
            for change in needed {
                switch change.field {
                case "serial_number": try session.registerSerialNumber(info.serialNumber)
                case "antenna_type": try session.setAntennaType(policy.antennaType ?? 0)
                case "hardware_revision": try session.setHardwareRevision(policy.hardwareRevision ?? info.hardwareRevision)
                case "provisioning_status": try session.setProvisioningStatus(policy.status ?? .none)
                default: break
                }
            }
            provisioning = try session.provisioningRecord()
            context.info = try session.identify()
        } catch {
            return readerFailure(.provision, error)
        }
        return .done("step_provisioned", ProvisioningChange.summary(needed))
    }

    static func provisioningChanges(_ policy: Profile.ProvisioningPolicy, record: ProvisioningRecord) -> [ProvisioningChange] {
        var changes: [ProvisioningChange] = []
        if policy.registerSerial, !record.provisioned {
            changes.append(ProvisioningChange(field: "serial_number", found: "not_registered", wanted: "registered"))
        }
        if let type = policy.antennaType, type != record.antennaType {
            changes.append(ProvisioningChange(field: "antenna_type", found: String(record.antennaType), wanted: String(type)))
        }
        if let revision = policy.hardwareRevision, revision != record.hardwareRevision {
            changes.append(ProvisioningChange(field: "hardware_revision", found: String(record.hardwareRevision), wanted: String(revision)))
        }
        if let status = policy.status, status != record.status {
            changes.append(ProvisioningChange(field: "provisioning_status", found: record.status.name, wanted: status.name))
        }
        return changes
    }
}
