import GrokAudio
import GrokLink
import GrokFirmware
import GrokProtocol

/// What the firmware updater needs from a connection to a reader on the vendor protocol:
/// ``ReaderSession`` (the product); tests also drive a bare session over a
/// ``GrokLink/VendorLink`` pair to a loader-only peer.
public protocol FirmwareSession: AnyObject {
    /// The reader's GetVersion answer from the last connect (`nil` when not connected).
    var readerVersion: VendorReaderVersion? { get }
    /// Sends one request (the packet layer retries as the vendor's does) and returns the
    /// answer decoded; throws when the reader refused it (NACK) or did not answer.
    func firmwareCall(_ request: VendorRequest) throws(ReaderError) -> VendorResponse
    /// Goes quiet, keeps receive disabled `receiveDisabledSeconds`, then waits at most
    /// `timeoutSeconds` for the reader's handshake and asks GetVersion again.
    func reconnect(receiveDisabledSeconds: Double, timeoutSeconds: Double) throws(ReaderError) -> VendorReaderVersion
    /// Audio seconds since the session began (for reports).
    var audioSeconds: Double { get }
}

/// The vendor's firmware update results (`FirmwareUpdate` return and completion codes).
public enum FirmwareUpdateResult: Int, Sendable, Hashable, CaseIterable {
    case success = 0
    case crcMismatch = 3
    case noFile = 100
    case badFile = 101
    case incompatibleHardware = 102
    case incompatibleVersion = 103
    case protocolFailure = 104
    case cantReconnect = 105
    case cancelled = 106
    case batteryTooLow = 107

    /// The vendor's constant name.
    public var vendorName: String {
        switch self {
        case .success: "SUCCESS"
        case .crcMismatch: "CRC_MISMATCH"
        case .noFile: "NO_FILE"
        case .badFile: "BAD_FILE"
        case .incompatibleHardware: "INCOMPATIBLE_HARDWARE"
        case .incompatibleVersion: "INCOMPATIBLE_VERSION"
        case .protocolFailure: "PROTOCOL_FAILURE"
        case .cantReconnect: "CANT_RECONNECT"
        case .cancelled: "CANCELLED"
        case .batteryTooLow: "BATTERY_TOO_LOW"
        }
    }
}

/// Progress over both images: bytes acknowledged of the bytes to send.
public struct FirmwareUpdateProgress: Sendable, Hashable {
    public var done: Int
    public var total: Int
    /// Whether the image under way is the second (the reader image after the loader).
    public var secondImage: Bool

    public init(done: Int, total: Int, secondImage: Bool) {
        self.done = done
        self.total = total
        self.secondImage = secondImage
    }
}

/// How an update went.
public struct FirmwareUpdateReport: Sendable, Hashable {
    public var result: FirmwareUpdateResult
    /// What went wrong, for a person (empty on success).
    public var detail: String
    /// The reader's GetVersion after the update (or at the failure, when known).
    public var finalVersion: VendorReaderVersion?
    /// Audio seconds from the first request to the reader answering on the new version.
    public var audioSeconds: Double
    /// Chunks sent, chunks sent again after a reconnect (resumed), bytes per chunk used.
    public var chunks: Int
    public var resumedChunks: Int
    public var chunkBytes: Int
    /// Bytes of the reader image not sent again because an earlier, stopped upload of the
    /// same image had written them (``UploadJournal``); 0 when the upload started from its
    /// first byte.
    public var resumedFromByte = 0
}

/// Where an upload of the reader image stood, kept by the host (ours: the vendor protocol has
/// no request that reads the unit's flash or its upload's progress). The updater records the
/// bytes the unit acknowledged, per unit and image, and a later update of the same image to a
/// unit still in its loader starts at the last ``FirmwareUpdater/resumeAlignment`` boundary
/// below them instead of at the first byte. ChangeSoftwareType's CRCs over the whole image
/// are the proof: when the unit's flash does not hold the earlier bytes after all, it refuses
/// them and the updater sends the whole image again.
public protocol UploadJournal: Sendable {
    /// Bytes of `section` (at its address) the unit `serial` acknowledged in an earlier
    /// upload, from the section's start; 0 when none is known.
    func written(serial: UInt32, section: UgifSection) -> Int
    /// Notes that the unit `serial` acknowledged `bytes` of `section`.
    func record(serial: UInt32, section: UgifSection, bytes: Int)
    /// Forgets the unit's upload (it ended: installed, or found not to hold what was noted).
    func clear(serial: UInt32)
}

/// Options of the vendor procedure and of what we add to it.
public struct FirmwareUpdateOptions: Sendable {
    /// The vendor refuses an older or the same version (`FirmwareUpdate(…, false, false, …)`
    /// returned 103 for both in the harness); set these to allow them.
    public var allowDowngrade = false
    public var allowSameVersion = false
    /// The vendor's reset: receive disabled 1 s, then up to 5 s for the handshake.
    public var receiveDisabledSeconds = 1.0
    public var reconnectTimeoutSeconds = 5.0
    /// Ours: the largest chunk to send, capped by the unit's max program bytes (the vendor
    /// host sends exactly max program bytes too).
    public var maxChunkBytes = 248
    /// Ours: reconnects (then resume at the chunk that failed, or restart the image when the
    /// unit forgot the upload) before giving up; the vendor gives up at once.
    public var resumeAttempts = 2
    /// The battery, when the caller knows it (percent); below ``minimumBatteryPercent`` the
    /// update is refused with BATTERY_TOO_LOW 107 before anything is sent.
    public var batteryPercent: Int?
    /// The lowest battery an update starts on (ours: the vendor's threshold is not known).
    public var minimumBatteryPercent = 20

    public init() {}
}

/// The vendor's firmware procedure, host side, on any ``FirmwareSession``:
/// compatibility and battery checks, the loader image first when the unit runs its
/// application, then the reader image; per image a ProgramReader start, chunks of the
/// unit's max program bytes, ChangeSoftwareType with both CRCs; after each the reset,
/// receive disabled 1 s and up to 5 s for the handshake, first as the loader (type 1),
/// finally as the application on the new version. Packets go back to back (each as soon as
/// the previous one's ACK arrives). Ours on top: a chunk that fails is resumed after a
/// reconnect (the loader takes addresses), and a unit found in its loader is repaired
/// whatever version its loader reports.
public final class FirmwareUpdater {
    public let session: any FirmwareSession
    public var options: FirmwareUpdateOptions
    /// Where stopped uploads are noted, to resume them (`nil`: every upload starts at its first byte).
    public let journal: (any UploadJournal)?
    /// Vendor `isUpdateInProgress`: true while ``update(to:progress:shouldCancel:)`` runs
    /// (its progress and cancel closures see it).
    public private(set) var isUpdateInProgress = false

    /// The flash erase sector a resumed upload starts on (4 KiB, the sector of the emulated
    /// unit's NOR flash and of common serial NOR): a loader erases a sector when the first
    /// chunk of an upload goes into it, so a resume starts at a sector's first byte.
    public static let resumeAlignment = 4096

    public init(session: any FirmwareSession, options: FirmwareUpdateOptions = .init(), journal: (any UploadJournal)? = nil) {
        self.session = session
        self.options = options
        self.journal = journal
    }

    /// The compatibility the vendor reports for `image` against the connected unit, judged by
    /// ``FirmwareChoice/judge(_:for:)``: a unit in its loader reports its loader's version, and
    /// any image for its hardware repairs it.
    public func compatibility(of image: UgifImage) -> UgifCompatibility {
        guard let version = session.readerVersion else { return .unparsable }
        switch FirmwareChoice.judge(.package(image), for: FirmwareUnit(version)) {
        case .invalid, .incompatible: return .incompatible
        case .downgrade: return .older
        case .sameVersion: return .same
        case .upgrade: return .newer
        }
    }

    /// Updates the connected unit to `image`. `progress` is called after every chunk;
    /// `shouldCancel` is asked before every packet (CANCELLED 106 when it answers true).
    public func update(to image: UgifImage, progress: (FirmwareUpdateProgress) -> Void = { _ in },
                       shouldCancel: () -> Bool = { false }) -> FirmwareUpdateReport {
        isUpdateInProgress = true
        defer { isUpdateInProgress = false }
        let started = session.audioSeconds
        var chunks = 0
        var resumed = 0
        var chunkBytes = 0
        var resumedFrom = 0
        func report(_ result: FirmwareUpdateResult, _ detail: String = "", version: VendorReaderVersion? = nil) -> FirmwareUpdateReport {
            FirmwareUpdateReport(result: result, detail: detail, finalVersion: version ?? session.readerVersion,
                                 audioSeconds: session.audioSeconds - started, chunks: chunks, resumedChunks: resumed,
                                 chunkBytes: chunkBytes, resumedFromByte: resumedFrom)
        }
        guard let version = session.readerVersion else { return report(.protocolFailure, "not connected") }
        switch compatibility(of: image) {
        case .unparsable: return report(.badFile, "the image cannot be judged")
        case .incompatible:
            return report(.incompatibleHardware, "the image is for \(image.hardwareTypeName), the unit is \(version.hardwareTypeName)")
        case .older where !options.allowDowngrade, .same where !options.allowSameVersion:
            return report(.incompatibleVersion, "the image is \(image.version), the unit runs \(versionText(version))")
        default: break
        }
        if let battery = options.batteryPercent, battery < options.minimumBatteryPercent {
            return report(.batteryTooLow, "battery \(battery) %, at least \(options.minimumBatteryPercent) % needed")
        }

        var plan: [(section: UgifSection, target: VendorSoftwareType)] = []
        if version.software != .loader, let loader = image.loader { plan.append((loader, .loader)) }
        plan.append((image.reader, .application))
        let total = plan.reduce(0) { $0 + $1.section.bytes.count }
        var done = 0

        for (index, step) in plan.enumerated() {
            guard let unit = session.readerVersion else { return report(.cantReconnect, "not connected") }
            let size = max(1, min(options.maxChunkBytes, Int(unit.maxProgramBytes), VendorWireLimits.maxPayloadBytes - 2))
            chunkBytes = size
            let bytes = step.section.bytes
            var offset = 0
            var needsStart = true
            var attempts = 0
            // The loader writes the application: an upload it was writing when it stopped
            // goes on at the sector boundary below what the unit acknowledged.
            let journaled = step.target == .application && unit.software == .loader ? journal : nil
            var skip = 0
            if let journaled {
                let earlier = min(journaled.written(serial: unit.serialNumber, section: step.section), bytes.count)
                let address = Int(step.section.address)
                skip = max(0, (address + earlier) / Self.resumeAlignment * Self.resumeAlignment - address)
            }
            progress(FirmwareUpdateProgress(done: done, total: total, secondImage: index > 0))
            while offset < bytes.count || needsStart {
                if shouldCancel() { return report(.cancelled, "cancelled at byte \(done) of \(total)") }
                let request: VendorProgramReader
                do throws(VendorCommandError) {
                    if needsStart {
                        request = try VendorProgramReader(address: step.section.address)
                    } else {
                        let end = min(offset + size, bytes.count)
                        request = try VendorProgramReader(address: step.section.address &+ UInt16(offset), data: Array(bytes[offset..<end]))
                    }
                } catch {
                    return report(.badFile, "\(error)")
                }
                do throws(ReaderError) {
                    _ = try session.firmwareCall(.programReader(request))
                } catch {
                    // Ours: reconnect and resume; a refused chunk after a reconnect means the
                    // unit forgot the upload (it restarted): start the image again.
                    attempts += 1
                    guard attempts <= options.resumeAttempts else {
                        return report(.protocolFailure, "ProgramReader at 0x\(String(request.address, radix: 16)): \(error)")
                    }
                    if case .rejected = error, !needsStart {
                        done -= offset
                        offset = 0
                        needsStart = true
                        skip = 0
                        continue
                    }
                    guard let back = try? session.reconnect(receiveDisabledSeconds: options.receiveDisabledSeconds,
                                                            timeoutSeconds: options.reconnectTimeoutSeconds) else {
                        return report(.cantReconnect, "no handshake after \(error)")
                    }
                    if back.software != unit.software {
                        // The unit restarted into another program: start over on what it runs now.
                        return update(to: image, progress: progress, shouldCancel: shouldCancel)
                    }
                    if !needsStart { resumed += 1 }
                    continue
                }
                if needsStart {
                    needsStart = false
                    if offset == 0, skip > 0 {
                        // The bytes below `skip` are in the unit's flash from the earlier upload.
                        offset = skip
                        done += skip
                        resumedFrom = skip
                        progress(FirmwareUpdateProgress(done: done, total: total, secondImage: index > 0))
                    }
                } else {
                    let count = min(size, bytes.count - offset)
                    let before = offset
                    offset += count
                    done += count
                    chunks += 1
                    if let journaled, offset / Self.resumeAlignment != before / Self.resumeAlignment || offset == bytes.count {
                        journaled.record(serial: unit.serialNumber, section: step.section, bytes: offset)
                    }
                    progress(FirmwareUpdateProgress(done: done, total: total, secondImage: index > 0))
                }
            }
            if shouldCancel() { return report(.cancelled, "cancelled before ChangeSoftwareType") }
            do throws(ReaderError) {
                _ = try session.firmwareCall(.changeSoftwareType(step.section.changeSoftwareType(to: step.target)))
            } catch {
                if skip > 0, let journaled {
                    // A resumed image the unit does not take (its CRCs are NACKed, and the packet
                    // layer resends until it gives up): its flash did not hold the earlier bytes.
                    // Send the whole image (the unit stays in its loader, its upload open).
                    journaled.clear(serial: unit.serialNumber)
                    return update(to: image, progress: progress, shouldCancel: shouldCancel)
                }
                if case .rejected = error { return report(.crcMismatch, "the unit refused the \(step.target) image's CRCs") }
                return report(.protocolFailure, "ChangeSoftwareType: \(error)")
            }
            let back: VendorReaderVersion
            do {
                back = try session.reconnect(receiveDisabledSeconds: options.receiveDisabledSeconds,
                                             timeoutSeconds: options.reconnectTimeoutSeconds)
            } catch {
                return report(.cantReconnect, "no handshake after the reset into the \(step.target): \(error)")
            }
            guard back.software == step.target else {
                return report(.protocolFailure, "the unit came back as software type \(back.softwareType), not \(step.target)", version: back)
            }
            if step.target == .application {
                journaled?.clear(serial: unit.serialNumber)
                let now = UgifVersion(running: back)
                guard now == image.version else {
                    return report(.protocolFailure, "the unit came back on \(now), not \(image.version)", version: back)
                }
            }
        }
        return report(.success)
    }

    private func versionText(_ v: VendorReaderVersion) -> String { "\(v.firmwareMajor).\(v.firmwareMinor).\(v.firmwareBuild)" }
}

extension ReaderSession: FirmwareSession {
    public var readerVersion: VendorReaderVersion? { version }

    public func firmwareCall(_ request: VendorRequest) throws(ReaderError) -> VendorResponse {
        try call(request)
    }

    /// The vendor's reset: goes quiet with receive off for `receiveDisabledSeconds`, then
    /// handshakes (up to `timeoutSeconds`) and asks GetVersion again.
    public func reconnect(receiveDisabledSeconds: Double, timeoutSeconds: Double) throws(ReaderError) -> VendorReaderVersion {
        try rest(forAtMost: receiveDisabledSeconds)
        try connect(handshakeTimeout: timeoutSeconds)
        guard let version else { throw .cannotGetInfo(port: port.name) }
        return version
    }

    public var audioSeconds: Double { Double(link.now) / Double(link.sampleRate) }
}
