import GrokBasics
import Foundation
import GrokAudio
import GrokFirmware
import GrokLedger
import GrokLink
import GrokProtocol
import UGrokIt

// The region: chosen by the profile or a person, among those the unit may choose.
extension DeviceWorker {
    func region() throws(Stop) -> Result {
        guard profile.region != nil else { return .skipped("step_not_configured") }
        guard let session, let info else { throw Stop() }
        let current = info.region
        // The signed region catalogue of the channel (read through TUF with the channel
        // before the run: FleetFirmware.load) says which regions this unit (its board
        // revision and serial number) may choose; without one, the vendor's 22.
        let catalogue = runner.firmware?.regionCatalogue
        let decision = decider.region(facts(info))
        if let known = Self.result(of: decision) {
            if decision.action == .refuse { delegate.setRegionCancelled(context) }
            return known
        }
        if mode == .verify { return .done("step_verified", decision.detail) }
        let name: String
        if decision.action == .ask {
            // Only the regions the profile allows (and the unit may choose) are offered.
            let choices = decision.choices
            delegate.startBackgroundAction(context, cause: .loadingRegions)
            delegate.finishBackgroundAction(context, cause: .loadingRegions)
            let index = delegate.chooseRegionFromRegions(context, names: choices, selected: nil)
            if let stopped = stoppedAtQuestion() { return stopped }
            guard let index, choices.indices.contains(index) else {
                if let stopped = stoppedAtQuestion() { return stopped }
                delegate.setRegionCancelled(context)
                return .failing(.refused, .regionNotChosen(device: device.name))
            }
            guard delegate.confirmRegion(context, name: choices[index]) else {
                if let stopped = stoppedAtQuestion() { return stopped }
                // The person said no to the region they were shown: declined, nothing set.
                delegate.setRegionCancelled(context)
                return .failing(.declined, .regionDeclined(device: device.name))
            }
            name = choices[index]
        } else {
            // The profile decided: nothing is asked.
            name = decision.target ?? ""
        }
        if let failure = intend(.region, target: name) { return failure }
        var attempt = 0
        while true {
            attempt += 1
            delegate.startBackgroundAction(context, cause: .settingRegion)
            do {
                let fresh = try session.setRegion(name, catalogue: catalogue, table: profile.region?.table ?? .ours)
                delegate.finishBackgroundAction(context, cause: .settingRegion)
                context.info = fresh
                delegate.notifySetRegionSuccess(context, name: name)
                delegate.afterSetRegionSuccess(context)
                return .done("step_region_set", "\(current?.name ?? "not set") -> \(name)")
            } catch {
                delegate.finishBackgroundAction(context, cause: .settingRegion)
                switch error {
                case .firmwareDoesNotSupportSetRegion:
                    delegate.notifyFirmwareDoesNotSupportSetRegion(context)
                    return .failing(.failed, .regionUnsupported(device: device.name, firmware: "\(info.firmwareVersion)"))
                case .regionNotApproved:
                    delegate.setRegionCancelled(context)
                    return .failing(.refused, .regionNotAllowed(device: device.name, region: name,
                                                                         allowed: session.regionNames(catalogue: catalogue).names))
                default:
                    break
                }
                let failure = FleetError.reader(device: device.name, step: FleetStep.region.rawValue, cause: ErrorCause(error))
                if delegate.notifySetRegionFailure(context, error: failure, attempt: attempt) == .giveUp {
                    return .failing(.failed, failure)
                }
                if session.connectionState != .connected, let info = try? connectWithRetries() { context.info = info }
            }
        }
    }

    /// Whether the reader's region is what `policy` wants: a unit counts as set only when its
    /// GetVersion says the user set it (flag 0x80, ``ReaderInfo/region``), so a unit out of
    /// the box is given the profile's region explicitly (readers that enforce it refuse an
    /// inventory otherwise).
    static func regionSatisfied(_ policy: Profile.RegionPolicy, info: ReaderInfo) -> Bool {
        guard let current = info.region else { return false }
        if let wanted = policy.set { return current.number == wanted.number }
        return policy.allows(current)
    }
}
