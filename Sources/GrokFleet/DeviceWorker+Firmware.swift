import GrokBasics
import Foundation
import GrokAudio
import GrokFirmware
import GrokLedger
import GrokLink
import GrokProtocol
import UGrokIt

// The firmware update: the channel's target, the policy's and the person's answers,
// the upload and its retries.
extension DeviceWorker {
    func firmware() throws(Stop) -> Result {
        guard let policy = profile.firmware else { return .skipped("step_not_configured") }
        guard let session, let info else { throw Stop() }
        var known = facts(info)
        if mode != .verify, !inLoader { known.automaticFirmwareUpdate = delegate.doAutomaticFirmwareUpdate(context) }
        delegate.startBackgroundAction(context, cause: .loadingFirmwareUpdate)
        var decision = decider.firmware(known)
        // An update is judged on the battery (a loader answers no battery request: the
        // update, the repair, goes ahead): read it, then decide again.
        if decision.action == .run || decision.action == .ask, !inLoader, battery == nil {
            do {
                battery = try session.batteryInfo()
            } catch {
                delegate.finishBackgroundAction(context, cause: .loadingFirmwareUpdate)
                return readerFailure(.firmware, error)
            }
            known.batteryPercent = battery.map { Int($0.percentRemaining) }
            known.externalPower = battery?.externalPowerIsConnected ?? false
            decision = decider.firmware(known)
        }
        if let ended = Self.result(of: decision) {
            delegate.finishBackgroundAction(context, cause: .loadingFirmwareUpdate)
            if let error = decision.error {
                if decision.code == "fleet_firmware_cache" { delegate.notifyFirmwareUpdateErrorLoadingUpdate(context, error: error) }
                else if decision.action == .refuse { delegate.notifyFirmwareUpdateErrorStartingUpdate(context, error: error) }
            }
            if decision.action == .postpone { delegate.afterFirmwareUpdate(context, updated: false) }
            return ended
        }
        if mode == .verify {
            delegate.finishBackgroundAction(context, cause: .loadingFirmwareUpdate)
            return .done("step_verified", decision.detail)
        }
        guard let firmware = runner.firmware,
              case .install(let listing, let compatibility) = FirmwareTargeting.resolve(policy, listings: firmware.listings, info: info,
                                                                                        inLoader: inLoader, device: device.name)
        else { throw Stop() }
        let target = listing.metadata.version
        firmwareTarget = target
        let release: FirmwareRelease
        do {
            release = try firmware.releaseBlocking(listing)
        } catch {
            delegate.finishBackgroundAction(context, cause: .loadingFirmwareUpdate)
            delegate.notifyFirmwareUpdateErrorLoadingUpdate(context, error: error)
            return .failing(.failed, error)
        }
        delegate.finishBackgroundAction(context, cause: .loadingFirmwareUpdate)

        let offer = FirmwareOffer(name: listing.name, channel: policy.channel, version: target,
                                  running: info.firmwareVersion, compatibility: compatibility,
                                  readerProtocol: listing.metadata.readerProtocol, notes: listing.metadata.notes,
                                  buildDate: listing.metadata.buildDate, batteryPercent: battery.map { Int($0.percentRemaining) },
                                  externalPower: battery?.externalPowerIsConnected ?? false)
        // The policy allowed it: the delegate is offered it (a person asked, the policy answers as decided).
        let answer = delegate.promptForFirmwareUpdate(context, offer: offer)
        if let stopped = stoppedAtQuestion() {
            delegate.afterFirmwareUpdate(context, updated: false)
            return stopped
        }
        switch answer {
        case .update:
            break
        case .postpone(let reason, let arguments):
            delegate.afterFirmwareUpdate(context, updated: false)
            return Result(result: .postponed, code: reason, arguments: arguments, detail: "update to \(offer.version) postponed")
        case .cancel(let reason, let arguments):
            delegate.afterFirmwareUpdate(context, updated: false)
            // Declined by whoever was asked: its own result, not a postponement by policy (the
            // device is not as the profile wants: the run is incomplete).
            return Result(result: .declined, code: reason, arguments: arguments, detail: "update to \(offer.version) declined")
        }

        if let failure = intend(.firmware, target: "\(target)") {
            delegate.afterFirmwareUpdate(context, updated: false)
            return failure
        }
        var options = FirmwareUpdateOptions()
        options.allowDowngrade = policy.allowDowngrade
        options.allowSameVersion = policy.allowSameVersion
        options.minimumBatteryPercent = profile.minimumBatteryPercent
        options.batteryPercent = battery.map { Int($0.percentRemaining) }
        options.reconnectTimeoutSeconds = profile.timeouts.reconnect
        let before = info.firmwareVersion
        var attempt = 0
        while true {
            attempt += 1
            let cancel = CancelSwitch()
            delegate.displayFirmwareUpdateProgress(context, cancel: cancel)
            let run = runner.options.cancellation
            let context = self.context
            let delegate = self.delegate
            let report = FirmwareUpdater(session: session, options: options, journal: runner.options.uploadJournal).update(
                to: release.ugif, progress: { delegate.updateFirmwareUpdateProgress(context, progress: $0) },
                shouldCancel: { cancel.isCancelled || run.isCancelled })
            if let fresh = session.info { self.context.info = fresh }
            // Only a connected session knows what the unit runs now (after a reconnect that did
            // not finish, its last GetVersion is the one from before).
            if session.isConnected { inLoader = session.version?.software == .loader }
            if report.result == .success {
                delegate.notifyFirmwareUpdateSuccess(self.context, report: report)
                delegate.afterFirmwareUpdate(self.context, updated: true)
                return .done("step_firmware_updated", "\(before) -> \(target) in \(FleetError.number(report.audioSeconds)) s of audio")
            }
            let failure = FleetError.firmwareUpdateFailed(device: device.name, code: Self.code(of: report.result), detail: report.detail)
            switch report.result {
            case .batteryTooLow:
                let low = FleetError.batteryLow(device: device.name, percent: options.batteryPercent ?? 0, minimum: profile.minimumBatteryPercent)
                delegate.notifyFirmwareUpdateErrorStartingUpdate(self.context, error: low)
                delegate.afterFirmwareUpdate(self.context, updated: false)
                return .failing(.postponed, low)
            case .incompatibleHardware, .incompatibleVersion, .badFile, .noFile:
                delegate.notifyFirmwareUpdateErrorStartingUpdate(self.context, error: failure)
                delegate.afterFirmwareUpdate(self.context, updated: false)
                return .failing(.refused, failure)
            case .cancelled:
                delegate.afterFirmwareUpdate(self.context, updated: false)
                if run.isCancelled {
                    interrupted = true
                    // Stopped mid-upload: a unit left in its loader has no application; say so.
                    return .failing(.interrupted, inLoader ? .updateUnfinished(device: device.name) : .interrupted(device: device.name))
                }
                return .failing(.postponed, .updateDeclined(device: device.name, decision: "cancelled"))
            case .cantReconnect:
                delegate.abortFirmwareUpdateInteraction(self.context)
            default:
                break
            }
            if delegate.notifyFirmwareUpdateFailure(self.context, error: failure, mustRetry: false, attempt: attempt) == .giveUp {
                delegate.afterFirmwareUpdate(self.context, updated: false)
                return .failing(.failed, failure)
            }
            if !session.isConnected, let fresh = try? connectWithRetries() { self.context.info = fresh }
        }
    }

    /// When the run was stopped while a question was open (Ctrl-C at the prompt): the step
    /// ends interrupted, whatever the answer, and nothing more is changed.
    func stoppedAtQuestion() -> Result? {
        guard runner.options.cancellation.isCancelled else { return nil }
        interrupted = true
        return .failing(.interrupted, .interrupted(device: device.name))
    }

    /// The stable code of a vendor update result (`firmware_update_battery_too_low` ...).
    static func code(of result: FirmwareUpdateResult) -> String { "firmware_update_" + result.vendorName.lowercased() }
}
