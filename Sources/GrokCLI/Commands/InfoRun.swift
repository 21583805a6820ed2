import Foundation
import GrokAudio
import GrokLink
import GrokProtocol
import Synchronization
import UGrokIt

/// What `grokctl info` learned about one Grokker; also its `--json` form.
struct InfoReport: Encodable, Sendable {
    struct Problem: Encodable, Sendable {
        let code: String
        let message: String
    }
    let device: String
    let status: String
    var serial: String?
    var hardwareType: String?
    var hardwareModel: String?
    var hardwareRevision: Int?
    var firmware: String?
    var loader: String?
    var readerProtocol: Int?
    var region: String?
    var regionSet: Bool?
    var userMustSetRegion: Bool?
    var maxPowerDBm: Double?
    var hasBattery: Bool?
    var batteryCapacityMinutes: Int?
    var linkBitRate: Double?
    var connectMs: Double?
    var skewPPM: Double?
    var error: Problem?
    /// Localized error text for the terminal (not in JSON).
    var localizedError: String?

    enum CodingKeys: String, CodingKey {
        case device, status, serial, firmware, loader, region, error
        case hardwareType = "hardware_type"
        case hardwareModel = "hardware_model"
        case hardwareRevision = "hardware_revision"
        case readerProtocol = "reader_protocol"
        case regionSet = "region_set"
        case userMustSetRegion = "user_must_set_region"
        case maxPowerDBm = "max_power_dbm"
        case hasBattery = "has_battery"
        case batteryCapacityMinutes = "battery_capacity_minutes"
        case linkBitRate = "link_bit_rate"
        case connectMs = "connect_ms"
        case skewPPM = "skew_ppm"
    }
}

/// `grokctl info`: connect to each Grokker at once (one thread per audio port), print what
/// each one is. Exit 1 when any of them could not be reached.
func runInfo(_ command: InfoCommand, _ context: CommandContext) throws -> ExitCode {
    let ports = DevicePortContext(bench: context.bench, alsaConfig: context.globals.alsaConfig,
                                  recordAudio: context.globals.recordAudio)
    var options = ReaderOptions()
    options.realtime = context.globals.realtime
    let localizer = context.localizer
    let reports = InfoGathering.gather(command.devices, ports: ports, options: options, localizer: localizer)

    let console = context.console
    if console.isJSON {
        for report in reports { console.json(report) }
    } else {
        let answered = reports.filter { $0.status == "ok" }
        if !answered.isEmpty {
            console.table(Table(
                headers: [.infoColumnDevice, .infoColumnSerial, .infoColumnFirmware, .infoColumnHardware,
                          .infoColumnRegion, .infoColumnLink, .infoColumnConnect].map { localizer.text($0) },
                rows: answered.map { r in
                    [r.device, r.serial ?? "", r.firmware ?? "",
                     localizer.text(.infoHardware, r.hardwareType ?? "", String(r.hardwareRevision ?? 0)),
                     r.region ?? localizer.text(.infoRegionNotSet),
                     localizer.text(.infoBitRate, formatNumber(r.linkBitRate ?? 0)),
                     localizer.text(.infoMilliseconds, String(Int((r.connectMs ?? 0).rounded())))]
                }))
        }
        for r in reports where r.status != "ok" {
            console.print(localizer.text(.infoDeviceFailed, r.device, r.localizedError ?? ""))
        }
        console.say(.infoSummary, String(answered.count), String(reports.count))
    }
    return reports.allSatisfy { $0.status == "ok" } ? .success : .failure
}

private func formatNumber(_ value: Double) -> String {
    value == value.rounded() ? String(Int(value)) : String((value * 10).rounded() / 10)
}

enum InfoGathering {
    /// Queries every device concurrently, one thread each (audio ports block), and returns
    /// the reports in the order given.
    static func gather(_ devices: [DeviceSpec], ports: DevicePortContext, options: ReaderOptions,
                       localizer: Localizer) -> [InfoReport] {
        let results = Mutex([InfoReport?](repeating: nil, count: devices.count))
        let group = DispatchGroup()
        for (i, spec) in devices.enumerated() {
            group.enter()
            let thread = Thread {
                let report = query(spec, ports: ports, options: options, localizer: localizer)
                results.withLock { $0[i] = report }
                group.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        group.wait()
        return results.withLock { $0.compactMap { $0 } }
    }

    static func query(_ spec: DeviceSpec, ports: DevicePortContext, options: ReaderOptions,
                      localizer: Localizer) -> InfoReport {
        do {
            let port = try DevicePorts.open(spec, context: ports)
            let session = ReaderSession(port: port, options: options)
            defer { session.close() }
            let info = try session.connect()
            var report = InfoReport(device: spec.description, status: "ok")
            report.serial = ReaderInfo.formatSerialNumber(info.serialNumber)
            report.hardwareType = info.hardwareType.vendorName
            report.hardwareModel = info.hardwareModel
            report.hardwareRevision = Int(info.hardwareRevision)
            report.firmware = info.firmwareVersion.description
            report.loader = info.loaderVersion.description
            report.readerProtocol = Int(info.readerProtocolVersion)
            report.region = info.region?.name
            report.regionSet = info.region != nil
            report.userMustSetRegion = info.userMustSetRegion
            report.maxPowerDBm = Double(info.maxPowerTenthsDBm) / 10
            report.hasBattery = info.hasBattery
            report.batteryCapacityMinutes = Int(info.batteryCapacityMinutes)
            report.linkBitRate = session.engine.mode.bitRate
            report.connectMs = session.connectMilliseconds
            report.skewPPM = ((session.engine.statistics.skewFactor - 1) * 1e6).rounded()
            return report
        } catch {
            var report = InfoReport(device: spec.description, status: "error")
            report.error = .init(code: Localizer.code(for: error), message: Localizer.english.message(for: error))
            report.localizedError = localizer.message(for: error)
            return report
        }
    }
}
