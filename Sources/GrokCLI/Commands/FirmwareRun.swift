import Foundation
import GrokCrypto
import GrokFirmware
import GrokNet
import GrokProtocol
import UGrokIt

/// One device's identity, or why it could not be read.
struct DeviceIdentification: Sendable {
    let spec: DeviceSpec
    let result: Result<ReaderInfo, any Error>

    var info: ReaderInfo? { try? result.get() }
}

/// Connecting to devices to learn what they run (`firmware list --device`, `check`, `flash`).
enum FirmwareDevices {
    /// Connects to every device at once (a thread each), reads its identity and hangs up.
    static func identify(_ specs: [DeviceSpec], _ context: CommandContext) -> [DeviceIdentification] {
        let ports = portContext(context)
        let options = readerOptions(context)
        return DeviceThreads.each(specs) { spec in
            var session: ReaderSession?
            do {
                let opened = ReaderSession(port: try DevicePorts.open(spec, context: ports), options: options)
                session = opened
                let info = try opened.connect()
                opened.close()
                return DeviceIdentification(spec: spec, result: .success(info))
            } catch {
                session?.close()
                return DeviceIdentification(spec: spec, result: .failure(error))
            }
        }
    }

    static func portContext(_ context: CommandContext) -> DevicePortContext {
        DevicePortContext(bench: context.bench, alsaConfig: context.globals.alsaConfig,
                          recordAudio: context.globals.recordAudio)
    }

    static func readerOptions(_ context: CommandContext) -> ReaderOptions {
        var options = ReaderOptions()
        options.realtime = context.globals.realtime
        return options
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

/// Reloads the channel from `--server` when one is given (a conditional request); says so.
private func reloadIfServer(_ channels: FirmwareChannels, _ options: FirmwareOptions, _ context: CommandContext) throws {
    guard let server = options.server else { return }
    let channel = options.channel
    let outcome = try Blocking.run { try await channels.reload(channel, from: server) }
    switch outcome {
    case .updated(let version): context.console.say(.channelReloaded, channel, String(version), server.root, to: .standardError)
    case .unchanged(let version): context.console.say(.channelUnchanged, channel, String(version), to: .standardError)
    }
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
    let notes: String
    let compatibility: [String: String]?

    enum CodingKeys: String, CodingKey {
        case channel, name, version, size, sha256, cached, notes, compatibility
        case buildDate = "build_date"
    }
}

/// `grokctl firmware list`: the updates of the cached channel, with each device's
/// compatibility when devices are given. Exit 1 when a device could not be reached.
func runFirmwareList(_ command: FirmwareListCommand, _ context: CommandContext) throws -> ExitCode {
    if let station = try command.firmware.openStation() { return try runFirmwareListTUF(command, station, context) }
    let channels = try command.firmware.openChannels()
    try reloadIfServer(channels, command.firmware, context)
    let channel = command.firmware.channel
    let verified = try channels.cache.channel(channel)
    let identities = FirmwareDevices.identify(command.devices, context)
    let reachable = identities.compactMap { id in id.info.map { (id.spec, $0) } }
    let updates = channels.cache.updates(in: verified)
    // The compatibility of every update with every reachable device.
    var compatibility: [[FirmwareCompatibility]] = []
    for (_, info) in reachable {
        let judged = channels.cache.updates(in: verified, for: DeviceIdentity(info))
        compatibility.append(updates.map { update in
            judged.first { $0.entry.name == update.entry.name }?.compatibility ?? .invalid
        })
    }
    let language = context.localizer.language.rawValue
    let console = context.console
    let localizer = context.localizer
    if console.isJSON {
        for (i, update) in updates.enumerated() {
            let entry = update.entry
            var perDevice: [String: String]?
            if !command.devices.isEmpty {
                perDevice = [:]
                for (d, (spec, _)) in reachable.enumerated() { perDevice?[spec.description] = compatibility[d][i].vendorName }
            }
            console.json(UpdateListing(
                channel: channel, name: entry.name, version: entry.version.description,
                buildDate: FirmwareText.timestamp(entry.buildDate), size: entry.size, sha256: entry.sha256.hex,
                cached: update.cached, notes: entry.notes(in: language), compatibility: perDevice))
        }
        for id in identities { if case .failure(let error) = id.result { console.json(DeviceProblem(device: id.spec.description, error: error)) } }
    } else {
        console.say(.listHeading, channel, String(verified.metadata.version), FirmwareText.timestamp(verified.metadata.expires))
        var headers = [MessageKey.listColumnName, .listColumnVersion, .listColumnDate, .listColumnSize, .listColumnCached]
            .map { localizer.text($0) }
        headers += reachable.map { $0.0.description }
        headers.append(localizer.text(.listColumnNotes))
        let rows = updates.enumerated().map { i, update in
            let entry = update.entry
            return [entry.name, entry.version.description, FirmwareText.day(entry.buildDate), String(entry.size),
                    localizer.text(update.cached ? .listCachedYes : .listCachedNo)]
                + compatibility.map { $0[i].vendorName }
                + [entry.notes(in: language)]
        }
        if rows.isEmpty {
            console.say(.listEmpty, channel)
        } else {
            console.table(Table(headers: headers, rows: rows))
        }
        for id in identities {
            if case .failure(let error) = id.result {
                console.print(localizer.text(.infoDeviceFailed, id.spec.description, localizer.message(for: error)))
            }
        }
    }
    return reachable.count == identities.count ? .success : .failure
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

/// `grokctl firmware check`: per device, what runs and the best update. Exit 0 when no
/// device has an update, 100 when at least one has, 1 when a device could not be checked.
func runFirmwareCheck(_ command: FirmwareCheckCommand, _ context: CommandContext) throws -> ExitCode {
    if let station = try command.firmware.openStation() { return try runFirmwareCheckTUF(command, station, context) }
    let channels = try command.firmware.openChannels()
    try reloadIfServer(channels, command.firmware, context)
    let channel = command.firmware.channel
    _ = try channels.cache.channel(channel)  // Fails early, before any device, without metadata.
    let identities = FirmwareDevices.identify(command.devices, context)
    let console = context.console
    let localizer = context.localizer
    var failed = false
    var available = false
    for id in identities {
        switch id.result {
        case .failure(let error):
            failed = true
            if console.isJSON {
                console.json(DeviceProblem(device: id.spec.description, error: error))
            } else {
                console.print(localizer.text(.infoDeviceFailed, id.spec.description, localizer.message(for: error)))
            }
        case .success(let info):
            let best = try channels.best(channel, for: info)
            available = available || best != nil
            let report = CheckReport(
                device: id.spec.description, serial: ReaderInfo.formatSerialNumber(info.serialNumber),
                running: info.firmwareVersion.description, updateAvailable: best != nil,
                update: best.map {
                    .init(name: $0.entry.name, version: $0.entry.version.description,
                          compatibility: ($0.compatibility ?? .invalid).vendorName, cached: $0.cached)
                })
            if console.isJSON {
                console.json(report)
            } else if let update = report.update {
                console.print(localizer.text(.checkUpdate, report.device, report.running, update.name, update.version,
                                             update.compatibility))
            } else {
                console.print(localizer.text(.checkUpToDate, report.device, report.running, channel))
            }
        }
    }
    if failed { return .failure }
    return available ? FirmwareCheckCommand.updateAvailable : .success
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

/// `grokctl firmware download`: reloads the channel from `--server` (conditionally) and
/// downloads the images into the cache, verified before they enter it.
func runFirmwareDownload(_ command: FirmwareDownloadCommand, _ context: CommandContext) throws -> ExitCode {
    if let station = try command.firmware.openStation() { return try runFirmwareDownloadTUF(command, station, context) }
    let channels = try command.firmware.openChannels()
    try reloadIfServer(channels, command.firmware, context)
    let channel = command.firmware.channel
    let verified = try channels.cache.channel(channel)
    let all = channels.cache.updates(in: verified)
    let wanted: [AvailableUpdate]
    if let name = command.updateName {
        let entry = try verified.entry(named: name)
        wanted = all.filter { $0.entry.name == entry.name }
    } else {
        wanted = all
    }
    let console = context.console
    let localizer = context.localizer
    if wanted.isEmpty { console.say(.listEmpty, channel) }
    for update in wanted {
        let entry = update.entry
        let bar = console.isJSON || console.isQuiet || !console.isTerminal(.standardError)
            ? nil : ProgressBoard(labels: [entry.name], phase: localizer.text(.phaseDownloading), localizer: localizer)
        let server = command.firmware.server
        let phase = localizer.text(.phaseDownloading)
        let size = Int64(entry.size)
        var progress: (@Sendable (Int64, Int64?) -> Void)?
        if let bar {
            progress = { held, total in bar.update(row: 0, phase: phase, done: Int(held), total: Int(total ?? size)) }
        }
        let report = progress
        let package: FirmwarePackage
        do {
            package = try Blocking.run { try await channels.load(entry.name, channel: channel, from: server, progress: report) }
        } catch {
            bar?.finish(row: 0, message: localizer.text(.progressFailed))
            throw error
        }
        bar?.finish(row: 0, message: localizer.text(.progressDone))
        let done = DownloadReport(channel: channel, name: entry.name, version: entry.version.description,
                                    size: package.size, sha256: package.sha256.hex, alreadyCached: update.cached,
                                    path: channels.cache.imagePath(package.sha256))
        if console.isJSON {
            console.json(done)
        } else {
            console.print(localizer.text(update.cached ? .downloadAlreadyCached : .downloadDone,
                                         entry.name, entry.version.description, String(package.size)))
        }
    }
    return .success
}

// MARK: verify

/// `firmware verify --json`: the package facts and where the channel lists it.
struct VerifyReport: Encodable {
    let status = "ok"
    let package: PackageFacts
    let channel: String?
    let listedAs: String?
    let metadataVersion: UInt64?

    enum CodingKeys: String, CodingKey {
        case status, package, channel
        case listedAs = "listed_as"
        case metadataVersion = "metadata_version"
    }
}

/// `grokctl firmware verify`: parses and checks a package file (or a cached update by
/// name), prints its facts, and binds it to the channel's entry when it is listed.
func runFirmwareVerify(_ command: FirmwareVerifyCommand, _ context: CommandContext) throws -> ExitCode {
    let console = context.console
    let localizer = context.localizer
    let channel = command.firmware.channel
    var listedAs: String?
    var metadataVersion: UInt64?
    let facts: PackageFacts
    var note: String?
    if let file = command.packageFile {
        let bytes = try FirmwarePublisher.readInput(file, limit: 64 << 20)
        let package = try FirmwarePackage.parse(bytes, file: file)
        if let name = command.updateName {
            // Bound to the named entry: any disagreement is an error.
            let verified = try command.firmware.openCache().channel(channel)
            _ = try verified.bind(image: bytes, to: name, file: file)
            listedAs = name
            metadataVersion = verified.metadata.version
        } else {
            // Best effort: is it listed in the cached channel? A listed package must agree
            // with its entry (an error otherwise); an unusable cache is only a note.
            var verified: VerifiedChannel?
            do {
                verified = try command.firmware.openCache().channel(channel)
            } catch {
                note = localizer.text(.verifyNotChecked, channel, localizer.message(for: error))
            }
            if let verified {
                metadataVersion = verified.metadata.version
                if let entry = verified.metadata.updates.first(where: { $0.sha256 == package.sha256 }) {
                    _ = try verified.bind(image: bytes, to: entry.name, file: file)
                    listedAs = entry.name
                }
            }
        }
        facts = PackageFacts(file: file, package: package)
    } else {
        let name = command.updateName!
        let cache = try command.firmware.openCache()
        let verified = try cache.channel(channel)
        let package = try cache.image(named: name, in: verified)
        listedAs = name
        metadataVersion = verified.metadata.version
        facts = PackageFacts(file: cache.imagePath(package.sha256), package: package)
    }
    if console.isJSON {
        console.json(VerifyReport(package: facts, channel: metadataVersion == nil ? nil : channel, listedAs: listedAs,
                                  metadataVersion: metadataVersion))
    } else {
        console.print(localizer.text(.verifyOK, facts.file))
        for line in facts.lines(localizer) { console.print("  " + line) }
        if let listedAs, let metadataVersion {
            console.print(localizer.text(.verifyListed, listedAs, channel, String(metadataVersion)))
        } else if let note {
            console.print(note)
        } else {
            console.print(localizer.text(.verifyNotListed, channel))
        }
    }
    return .success
}

// MARK: cache

/// One file of `firmware cache verify --json`.
struct CacheFileLine: Encodable {
    let path: String
    let status: String
    let detail: String
}

/// `grokctl firmware cache verify`: each file's verdict; exit 1 when any is corrupt.
func runFirmwareCacheVerify(_ command: FirmwareCacheVerifyCommand, _ context: CommandContext) throws -> ExitCode {
    let reports = try command.firmware.openCache().verify()
    let console = context.console
    let localizer = context.localizer
    if console.isJSON {
        for report in reports { console.json(CacheFileLine(path: report.path, status: report.status.rawValue, detail: report.detail)) }
    } else if reports.isEmpty {
        console.say(.cacheEmpty, command.firmware.cacheDirectory)
    } else {
        console.table(Table(
            headers: [localizer.text(.cacheColumnFile), localizer.text(.cacheColumnStatus), localizer.text(.cacheColumnDetail)],
            rows: reports.map { [$0.path, localizer.text(cacheStatusKey($0.status)), $0.detail] }))
        let corrupt = reports.filter { $0.status == .corrupt }.count
        console.say(.cacheSummary, String(reports.count), String(corrupt))
    }
    return reports.contains { $0.status == .corrupt } ? .failure : .success
}

private func cacheStatusKey(_ status: CacheFileReport.Status) -> MessageKey {
    switch status {
    case .ok: .cacheStatusOK
    case .corrupt: .cacheStatusCorrupt
    case .expired: .cacheStatusExpired
    case .orphan: .cacheStatusOrphan
    }
}

/// `grokctl firmware cache prune`: removes orphans and corrupt images.
func runFirmwareCachePrune(_ command: FirmwareCachePruneCommand, _ context: CommandContext) throws -> ExitCode {
    let removed = try command.firmware.openCache().prune()
    let console = context.console
    if console.isJSON {
        for path in removed { console.json(["removed": path]) }
    } else {
        for path in removed { console.print(context.localizer.text(.cacheRemoved, path)) }
        console.say(.cachePruned, String(removed.count))
    }
    return .success
}

// MARK: Through the TUF repository (--repository)

/// Whether the verified image of `listing` is already in the station's state directory.
private func isHeld(_ listing: FirmwareListing, _ channel: FirmwareChannel) -> Bool {
    FileManager.default.fileExists(atPath: channel.repository.stateDirectory + "/images/" + listing.sha256.hex)
}

/// `grokctl firmware list --repository URL`: refreshes the trusted metadata (TUF) and lists
/// the channel's `.ugif` targets, with each device's compatibility when devices are given.
func runFirmwareListTUF(_ command: FirmwareListCommand, _ channel: FirmwareChannel, _ context: CommandContext) throws -> ExitCode {
    let name = channel.name
    let update = try Blocking.run { try await channel.repository.update(channels: [name]) }
    let listings = (update.updates[name] ?? []).sorted { ($0.metadata.version, $0.path) > ($1.metadata.version, $1.path) }
    let identities = FirmwareDevices.identify(command.devices, context)
    let reachable = identities.compactMap { id in id.info.map { (id.spec, $0) } }
    let compatibility = reachable.map { _, info in listings.map { $0.compatibility(with: DeviceIdentity(info)) } }
    let language = context.localizer.language.rawValue
    let console = context.console
    let localizer = context.localizer
    func notes(_ listing: FirmwareListing) -> String { listing.metadata.notes[language] ?? listing.metadata.notes["en"] ?? "" }
    if console.isJSON {
        for (i, listing) in listings.enumerated() {
            var perDevice: [String: String]?
            if !command.devices.isEmpty {
                perDevice = [:]
                for (d, (spec, _)) in reachable.enumerated() { perDevice?[spec.description] = compatibility[d][i].vendorName }
            }
            console.json(UpdateListing(
                channel: name, name: listing.name, version: listing.metadata.version.description,
                buildDate: FirmwareText.timestamp(listing.metadata.buildDate), size: listing.length, sha256: listing.sha256.hex,
                cached: isHeld(listing, channel), notes: notes(listing), compatibility: perDevice))
        }
        for id in identities { if case .failure(let error) = id.result { console.json(DeviceProblem(device: id.spec.description, error: error)) } }
    } else {
        console.say(.listHeadingTUF, name, channel.repository.metadataURL.replacingOccurrences(of: "/metadata", with: ""),
                    String(update.versions["timestamp"] ?? 0))
        var headers = [MessageKey.listColumnName, .listColumnVersion, .listColumnDate, .listColumnSize, .listColumnCached]
            .map { localizer.text($0) }
        headers += reachable.map { $0.0.description }
        headers.append(localizer.text(.listColumnNotes))
        let rows = listings.enumerated().map { i, listing in
            [listing.name, listing.metadata.version.description, FirmwareText.day(listing.metadata.buildDate), String(listing.length),
             localizer.text(isHeld(listing, channel) ? .listCachedYes : .listCachedNo)]
                + compatibility.map { $0[i].vendorName }
                + [notes(listing)]
        }
        if rows.isEmpty { console.say(.listEmpty, name) } else { console.table(Table(headers: headers, rows: rows)) }
        for id in identities {
            if case .failure(let error) = id.result {
                console.print(localizer.text(.infoDeviceFailed, id.spec.description, localizer.message(for: error)))
            }
        }
    }
    return reachable.count == identities.count ? .success : .failure
}

/// `grokctl firmware download --repository URL [--name NAME | --all]`: each image through
/// TUF (length and SHA-256 as signed), parsed as a `.ugif` and checked against its
/// description, into the state directory's `images/SHA256`.
func runFirmwareDownloadTUF(_ command: FirmwareDownloadCommand, _ channel: FirmwareChannel, _ context: CommandContext) throws -> ExitCode {
    let name = channel.name
    let listings = try Blocking.run { try await channel.listings() }
    var wanted = listings
    if let updateName = command.updateName {
        wanted = listings.filter { $0.name == updateName || $0.path == updateName }
        if wanted.isEmpty { throw FirmwareError.updateNotListed(channel: name, name: updateName) }
    }
    let console = context.console
    let localizer = context.localizer
    if wanted.isEmpty { console.say(.listEmpty, name) }
    for listing in wanted {
        let held = isHeld(listing, channel)
        let target = listing.path
        let release = try Blocking.run { try await channel.target(named: target) }
        let done = DownloadReport(channel: name, name: listing.name, version: release.version.description, size: release.length,
                                  sha256: release.sha256.hex, alreadyCached: held,
                                  path: channel.repository.stateDirectory + "/images/" + release.sha256.hex)
        if console.isJSON {
            console.json(done)
        } else {
            console.print(localizer.text(held ? .downloadAlreadyCached : .downloadDone, listing.name, release.version.description,
                                         String(release.length)))
        }
    }
    return .success
}

/// `grokctl firmware check --repository URL`: refreshes through TUF (before any device), then
/// per device what runs and the newest listing it may take. Exit codes as ``runFirmwareCheck``.
func runFirmwareCheckTUF(_ command: FirmwareCheckCommand, _ channel: FirmwareChannel, _ context: CommandContext) throws -> ExitCode {
    let listings = try Blocking.run { try await channel.listings() }
    let identities = FirmwareDevices.identify(command.devices, context)
    let console = context.console
    let localizer = context.localizer
    var failed = false
    var available = false
    for id in identities {
        switch id.result {
        case .failure(let error):
            failed = true
            if console.isJSON {
                console.json(DeviceProblem(device: id.spec.description, error: error))
            } else {
                console.print(localizer.text(.infoDeviceFailed, id.spec.description, localizer.message(for: error)))
            }
        case .success(let info):
            let device = DeviceIdentity(info)
            let best = listings.first { $0.compatibility(with: device).mayApply(allowDowngrade: false, allowSameVersion: false) }
            available = available || best != nil
            let report = CheckReport(
                device: id.spec.description, serial: ReaderInfo.formatSerialNumber(info.serialNumber),
                running: info.firmwareVersion.description, updateAvailable: best != nil,
                update: best.map {
                    .init(name: $0.name, version: $0.metadata.version.description,
                          compatibility: $0.compatibility(with: device).vendorName, cached: isHeld($0, channel))
                })
            if console.isJSON {
                console.json(report)
            } else if let update = report.update {
                console.print(localizer.text(.checkUpdate, report.device, report.running, update.name, update.version,
                                             update.compatibility))
            } else {
                console.print(localizer.text(.checkUpToDate, report.device, report.running, channel.name))
            }
        }
    }
    if failed { return .failure }
    return available ? FirmwareCheckCommand.updateAvailable : .success
}
