import GrokLedger
import Foundation
import GrokBasics

/// The JSON report a run leaves (`--report`, else `<state dir>/reports/<run id>.json`).
public struct FleetReportFile: Encodable, Sendable {
    struct Step: Encodable {
        let step: String
        let result: String
        let code: String
        let arguments: [String]
        let detail: String
        let firmwareBefore: String?
        let firmwareAfter: String?
        let regionBefore: String?
        let regionAfter: String?
        let started: String
        let durationS: Double

        enum CodingKeys: String, CodingKey {
            case step, result, code, arguments, detail, started
            case firmwareBefore = "firmware_before", firmwareAfter = "firmware_after"
            case regionBefore = "region_before", regionAfter = "region_after", durationS = "duration_s"
        }
    }

    struct SmokeTest: Encodable {
        let step: String
        let passed: Bool
        let reasons: [String]
        let readsPerSecond: Double
        let uniqueTags: Int
        let missingTags: [String]
        let durationS: Double

        enum CodingKeys: String, CodingKey {
            case step, passed, reasons
            case readsPerSecond = "reads_per_second", uniqueTags = "unique_tags", missingTags = "missing_tags"
            case durationS = "duration_s"
        }
    }

    struct Device: Encodable {
        let device: String
        /// The USB port of the device's sound card (`usb:1-1.4`); absent when not on USB.
        let usbPath: String?
        let serial: String?
        let outcome: String
        let code: String?
        let arguments: [String]
        let message: String?
        let firmwareBefore: String?
        let firmwareAfter: String?
        let regionBefore: String?
        let regionAfter: String?
        let steps: [Step]
        let smokeTests: [SmokeTest]

        enum CodingKeys: String, CodingKey {
            case device, serial, outcome, code, arguments, message, steps
            case usbPath = "usb_path"
            case firmwareBefore = "firmware_before", firmwareAfter = "firmware_after"
            case regionBefore = "region_before", regionAfter = "region_after", smokeTests = "smoke_tests"
        }
    }

    let format = "grokctl-fleet-report"
    let runID: String
    let mode: String
    let outcome: String
    let profile: String
    let profileFile: String
    let station: String
    let operatorName: String
    let started: String
    let ended: String
    let ledger: String
    let devices: [Device]

    enum CodingKeys: String, CodingKey {
        case format, mode, outcome, profile, station, started, ended, ledger, devices
        case runID = "run_id", profileFile = "profile_file", operatorName = "operator"
    }

    public init(report: FleetReport, profile: Profile, options: FleetRunOptions, ledger: String) {
        runID = report.runID
        mode = report.mode.rawValue
        outcome = report.outcome.rawValue
        self.profile = profile.name
        profileFile = profile.file
        station = options.station
        operatorName = options.operatorName
        started = Timestamp.iso8601(report.started)
        ended = Timestamp.iso8601(report.ended)
        self.ledger = ledger
        devices = report.devices.map { device in
            Device(device: device.device, usbPath: device.usbPath.map { "usb:" + $0 }, serial: device.serial, outcome: device.outcome.rawValue, code: device.code,
                   arguments: device.arguments,
                   message: device.code.map { MessageCatalog.english.fleetMessage(code: $0, arguments: device.arguments) },
                   firmwareBefore: device.firmwareBefore, firmwareAfter: device.firmwareAfter,
                   regionBefore: device.regionBefore, regionAfter: device.regionAfter,
                   steps: device.steps.map { step in
                       Step(step: step.step.rawValue, result: step.result.rawValue, code: step.code, arguments: step.arguments,
                            detail: step.detail, firmwareBefore: step.firmwareBefore, firmwareAfter: step.firmwareAfter,
                            regionBefore: step.regionBefore, regionAfter: step.regionAfter,
                            started: Timestamp.iso8601(step.started), durationS: (step.duration * 1000).rounded() / 1000)
                   },
                   smokeTests: device.smokeTests.map { test in
                       SmokeTest(step: test.step.rawValue, passed: test.passed, reasons: test.reasons,
                                 readsPerSecond: (test.readsPerSecond * 10).rounded() / 10, uniqueTags: test.uniqueTags,
                                 missingTags: test.missingTags, durationS: (test.duration * 1000).rounded() / 1000)
                   })
        }
    }


    /// Writes the report (pretty, keys sorted), creating the directory; every system call is
    /// checked (``CheckedFile``), so a report that is not on disk is
    /// ``FleetError/reportNotWritten(path:detail:)`` naming `path`.
    public func write(to path: String) throws(FleetError) {
        // Only a non-finite number cannot be encoded.
        guard let data = encoded() else { throw .reportNotWritten(path: path, detail: systemErrorName(EINVAL)) }
        do throws(CheckedFile.Failure) {
            try CheckedFile.write(Array(data) + [0x0A], to: path)
        } catch {
            throw .reportNotWritten(path: error.path, detail: systemErrorName(error.errno))
        }
    }

    /// The report as its file holds it (for `--report -`), with its final newline.
    public func text() -> String? { encoded().map { String(decoding: $0, as: UTF8.self) + "\n" } }

    private func encoded() -> Data? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try? encoder.encode(self)
    }
}

extension MessageCatalog {
    /// The message of a step or fleet code: `error.<code>` when its placeholders are all
    /// filled, else `fleet.code.<code>` (the `step_*` codes), else a generic line naming the code.
    public func fleetMessage(code: String, arguments: [String]) -> String {
        let given = Set(0..<arguments.count)
        func needed(_ key: String) -> Set<Int> { MessageCatalog.placeholders(in: MessageCatalog.english.text(key, [])) }
        let errorKey = "error." + code
        if MessageCatalog.english.has(errorKey), needed(errorKey).isSubset(of: given) { return text(errorKey, arguments) }
        let codeKey = "fleet.code." + code
        if MessageCatalog.english.has(codeKey) { return needed(codeKey).isSubset(of: given) ? text(codeKey, arguments) : text(codeKey, []) }
        return text("fleet.code_other", [code])
    }
}
