import Foundation
import GrokCommandLine
import GrokFleet
import GrokBasics
import GrokFirmware
import UGrokIt

/// The reader options of the device commands (`firmware list --device`, `check`, `flash`, the fleet runs).
enum FirmwareDevices {
    static func portContext(_ context: CommandContext) -> DevicePortContext {
        context.ports
    }

    static func readerOptions(_ context: CommandContext) -> ReaderOptions {
        var options = ReaderOptions()
        options.realtime = context.globals.realtime
        return options
    }

    /// The devices as a device command opens them: each under its port's lock.
    static func locked(_ specs: [DeviceSpec], _ context: CommandContext) -> [FleetDevice] {
        specs.map { DevicePorts.lockedDevice($0, context: context.ports) }
    }
}

/// A per-device failure in `--json` form.
struct DeviceProblem: Encodable {
    let device: String
    let status = "error"
    let error: Problem

    struct Problem: Encodable {
        let code: String
        let message: String
    }

    init(device: String, error: any Error) {
        self.device = device
        self.error = Problem(code: Localizer.code(for: error), message: Localizer.english.message(for: error))
    }
}

/// A device that could not be read, as a line or (`--json`) an object.
private func showFailure(_ device: String, _ error: any Error, _ context: CommandContext) {
    if context.console.isJSON {
        context.console.json(DeviceProblem(device: device, error: error))
    } else {
        context.console.print(context.localizer.text(.infoDeviceFailed, device, context.localizer.message(for: error, about: device)))
    }
}

/// The `.ugif` image in `bytes`, parsed as the vendor's host parses it; a file's name must
/// agree with its header, an image on standard input has no name to check. Errors name the
/// input as `name` (``FirmwareError/invalidInput(file:detail:)``, exit 1).
extension InputFile {
    /// The file's own name (its last path component), which a `.ugif` header must agree with; `nil` for standard input.
    var fileName: String? { isStandardInput ? nil : (argument as NSString).lastPathComponent }
}

// MARK: list

/// One update as `firmware list --json` prints it.
struct UpdateListing: Encodable {
    let channel: String
    let name: String
    let version: String
    let buildDate: String
    let size: Int
    let sha256: String
    let cached: Bool
    /// `held`, `absent` or `corrupt`.
    let cache: FirmwareCacheState
    let notes: String
    let compatibility: [String: String]?

    enum CodingKeys: String, CodingKey {
        case channel, name, version, size, sha256, cached, cache, notes, compatibility
        case buildDate = "build_date"
    }
}

/// `grokctl firmware list --repository URL`: refreshes the trusted metadata (TUF) and lists
/// the channel's `.ugif` targets, with each device's compatibility when devices are given.
func runFirmwareList(_ command: FirmwareListCommand, _ context: CommandContext) throws -> ExitCode {
    let query = FirmwareQuery(channel: try command.firmware.openStation(), readerOptions: FirmwareDevices.readerOptions(context),
                              linkSettings: FirmwareDevices.portContext(context).linkSettings)
    let devices = FirmwareDevices.locked(command.devices, context)
    let list = try Blocking.run { try await query.list(devices) }
    let name = query.channel.name
    let console = context.console
    let localizer = context.localizer
    let language = localizer.language.rawValue
    func notes(_ listing: FirmwareListing) -> String { listing.metadata.notes[language] ?? listing.metadata.notes["en"] ?? "" }
    if console.isJSON {
        for row in list.rows {
            let listing = row.listing
            let perDevice = command.devices.isEmpty ? nil
                : Dictionary(zip(list.devices, row.compatibility.map(\.vendorName)), uniquingKeysWith: { _, last in last })
            console.json(UpdateListing(
                channel: name, name: listing.name, version: listing.metadata.version.description,
                buildDate: FirmwareText.timestamp(listing.metadata.buildDate), size: listing.length, sha256: row.sha256,
                cached: row.cache == .held, cache: row.cache, notes: notes(listing), compatibility: perDevice))
        }
    } else {
        console.say(.listHeadingTUF, name, query.repositoryURL, String(list.timestampVersion))
        let headers = [MessageKey.listColumnName, .listColumnVersion, .listColumnDate, .listColumnSize, .listColumnCached]
            .map { localizer.text($0) } + list.devices + [localizer.text(.listColumnNotes)]
        let cached: [FirmwareCacheState: MessageKey] = [.held: .listCachedYes, .absent: .listCachedNo, .corrupt: .listCachedCorrupt]
        let rows = list.rows.map { row in
            let listing = row.listing
            return [listing.name, listing.metadata.version.description, FirmwareText.day(listing.metadata.buildDate), String(listing.length),
                    localizer.text(cached[row.cache]!)] + row.compatibility.map(\.vendorName) + [notes(listing)]
        }
        if rows.isEmpty { console.say(.listEmpty, name) } else { console.table(Table(headers: headers, rows: rows)) }
    }
    for failure in list.failures { showFailure(failure.device, failure.error, context) }
    return list.failures.isEmpty ? .success : .failure
}

// MARK: download

/// One image `firmware download` made sure of; its `--json` form.
struct DownloadReport: Encodable {
    let event = "download_done"
    let channel: String
    let name: String
    let version: String
    let size: Int
    let sha256: String
    let alreadyCached: Bool
    let path: String

    enum CodingKeys: String, CodingKey {
        case event, channel, name, version, size, sha256, path
        case alreadyCached = "already_cached"
    }
}

/// `grokctl firmware download --repository URL [--name NAME | --all]`: each image through
/// TUF, into the state directory, shown as it comes.
func runFirmwareDownload(_ command: FirmwareDownloadCommand, _ context: CommandContext) throws -> ExitCode {
    let query = FirmwareQuery(channel: try command.firmware.openStation())
    let updateName = command.updateName
    let wanted = try Blocking.run { try await query.listings(named: updateName) }
    let console = context.console
    if wanted.isEmpty { console.say(.listEmpty, query.channel.name) }
    for listing in wanted {
        let done = try Blocking.run { try await query.download(listing) }
        if console.isJSON {
            console.json(DownloadReport(channel: done.channel, name: done.name, version: done.version.description, size: done.size,
                                        sha256: done.sha256, alreadyCached: done.alreadyCached, path: done.path))
        } else {
            console.print(context.localizer.text(done.alreadyCached ? .downloadAlreadyCached : .downloadDone, done.name,
                                                 done.version.description, String(done.size), done.path))
        }
    }
    return .success
}

// MARK: check

/// One device's answer to `firmware check`; also its `--json` form.
struct CheckReport: Encodable {
    struct Update: Encodable {
        let name: String
        let version: String
        let compatibility: String
        let cached: Bool
    }
    let device: String
    let status = "ok"
    let serial: String
    let running: String
    let updateAvailable: Bool
    let update: Update?

    enum CodingKeys: String, CodingKey {
        case device, status, serial, running, update
        case updateAvailable = "update_available"
    }
}

/// `grokctl firmware check --repository URL`: refreshes through TUF (before any device), then
/// per device what runs and the newest listing it may take (GrokFleet's ``FirmwareQuery``).
/// Exit 0 when no device has an update, 100 when at least one has, 1 when a device could not be checked.
func runFirmwareCheck(_ command: FirmwareCheckCommand, _ context: CommandContext) throws -> ExitCode {
    let query = FirmwareQuery(channel: try command.firmware.openStation(), readerOptions: FirmwareDevices.readerOptions(context),
                              linkSettings: FirmwareDevices.portContext(context).linkSettings)
    let devices = FirmwareDevices.locked(command.devices, context)
    let checks = try Blocking.run { try await query.check(devices) }
    let console = context.console
    let localizer = context.localizer
    var failed = false
    var available = false
    for check in checks {
        switch check.result {
        case .failure(let error):
            failed = true
            showFailure(check.device, error, context)
        case .success(let unit):
            available = available || unit.update != nil
            let report = CheckReport(
                device: check.device, serial: unit.serial, running: unit.running.description, updateAvailable: unit.update != nil,
                update: unit.update.map {
                    .init(name: $0.name, version: $0.version.description, compatibility: $0.compatibility.vendorName, cached: $0.cached)
                })
            if console.isJSON {
                console.json(report)
            } else if let update = report.update {
                console.print(localizer.text(.checkUpdate, report.device, report.running, update.name, update.version, update.compatibility))
            } else {
                console.print(localizer.text(.checkUpToDate, report.device, report.running, query.channel.name))
            }
        }
    }
    if failed { return .failure }
    return available ? FirmwareCheckCommand.updateAvailable.code : .success
}

// MARK: verify

/// `firmware verify --json`: the image's facts and where the channel lists it.
struct VerifyReport: Encodable {
    let status = "ok"
    let image: UgifFileFacts
    /// `listed` (a trusted channel lists its SHA-256: intact), `unlisted` (the channel asked
    /// does not), `not_checked` (no channel asked): only `listed` says it is intact.
    let integrity: String
    let channel: String?
    let listedAs: String?
    let targetsVersion: UInt64?

    enum CodingKeys: String, CodingKey {
        case status, image, integrity, channel
        case listedAs = "listed_as"
        case targetsVersion = "targets_version"
    }
}

/// `grokctl firmware verify [FILE.ugif] [--name NAME] [--repository URL]`: a local `.ugif`'s
/// facts and, with `--repository`, where the channel lists it; `--name` alone verifies the
/// channel's target through TUF (GrokFleet's ``FirmwareVerification``).
func runFirmwareVerify(_ command: FirmwareVerifyCommand, _ context: CommandContext) throws -> ExitCode {
    let console = context.console
    let localizer = context.localizer
    let channel = try command.firmware.openStationIfGiven()
    let updateName = command.updateName
    if updateName != nil, channel == nil { throw CLIError.missingOption(option: FirmwareOptions.repository.spelling) }
    let verified: FirmwareVerification
    if let input = command.packageFile {
        // Read once, at its size and at most a .ugif's limit, then parsed from memory.
        let shown = input.name(localizer)
        let bytes = try input.readAll(limit: UgifImage.maxFileBytes, localizer: localizer)
        let fileName = input.fileName
        verified = try Blocking.run {
            try await FirmwareVerification.verify(bytes, file: input.argument, shownAs: shown, fileName: fileName, channel: channel,
                                                  name: updateName)
        }
    } else {
        guard let channel, let updateName else { throw CLIError.missingOption(option: FirmwareOptions.repository.spelling) }
        verified = try Blocking.run { try await FirmwareVerification.verify(named: updateName, in: channel) }
    }
    let facts = verified.facts
    // Exit 1 when the channel asked does not list it: nothing vouches for it.
    let exit: ExitCode = verified.integrity == .unlisted ? .failure : .success
    if console.isJSON {
        console.json(VerifyReport(image: facts, integrity: verified.integrity.rawValue, channel: verified.channel,
                                  listedAs: verified.listedAs, targetsVersion: verified.targetsVersion))
        return exit
    }
    // "Intact" only when a trusted listing's SHA-256 says so: a .ugif carries no checksum.
    console.print(localizer.text(verified.integrity == .listed ? .verifyIntact : .verifyWellFormed, facts.shownAs))
    var lines = [
        localizer.text(.packageFactFile, facts.shownAs),
        localizer.text(.packageFactSize, String(facts.size)),
        localizer.text(.packageFactSHA256, facts.sha256),
        localizer.text(.packageFactVersion, facts.version),
        verified.revisions.map { revisions in
            localizer.text(.packageFactHardware, facts.hardwareName, revisions.map(String.init).joined(separator: ", "), String(revisions.count))
        } ?? localizer.text(.packageFactHardwareRevisionsUnknown, facts.hardwareName),
        localizer.text(.packageFactBuildDate, facts.date),
    ]
    for section in facts.sections {
        lines.append(localizer.text(.packageFactSegment, section.kind, section.address, String(section.length), section.crc32))
    }
    for line in lines { console.print("  " + line) }
    if let name = verified.channel {
        if let listedAs = verified.listedAs {
            console.print(localizer.text(.verifyListed, listedAs, name, verified.targetsVersion.map(String.init) ?? "-"))
        } else {
            console.print(localizer.text(.verifyNotListed, name))
        }
    } else {
        console.print(localizer.text(.verifyNoChannel))
    }
    return exit
}
