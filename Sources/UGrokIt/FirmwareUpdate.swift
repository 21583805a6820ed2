import GrokAudio
import GrokCrypto
import GrokFirmware
import GrokLink
import GrokProtocol

/// An application image to put on a Grokker: its bytes, what it claims to be, and the
/// package facts (hardware, revisions, the versions it applies on) that decide whether it
/// may go on a given reader.
public struct FirmwareImage: Sendable, Hashable {
    /// The package facts: version, hardware and revisions, reader protocol, applies-to ranges.
    public let firmware: FirmwareDescriptor
    /// What the reader is told the image is (version, hardware, address, length, CRC-32, SHA-256).
    public let descriptor: ImageDescriptor
    /// The image's bytes.
    public let bytes: [UInt8]

    /// An image from its bytes; the CRC-32 and SHA-256 are computed here.
    public init(firmware: FirmwareDescriptor, loadAddress: UInt32, bytes: [UInt8]) {
        self.firmware = firmware
        self.bytes = bytes
        descriptor = ImageDescriptor(version: firmware.version, hardwareType: firmware.hardwareType, loadAddress: loadAddress,
                                     length: UInt32(bytes.count), crc32: CRC32.checksum(bytes), sha256: SHA256.hash(bytes).bytes)
    }

    /// The application segment of a verified package.
    public init(package: FirmwarePackage) {
        self.init(firmware: package.descriptor, loadAddress: package.application.address, bytes: package.application.bytes)
    }
}

/// The vendor's firmware-update results (`UGI_FIRMWARE_UPDATE_*`).
public enum FirmwareUpdateResult: Int, Sendable, Hashable {
    case success = 0
    case crcMismatch = 3
    case noFile = 100
    case badFile = 101
    case incompatibleHardware = 102
    case incompatibleVersion = 103
    case protocolFailure = 104
    case cantReconnect = 105
    case cancelled = 106
}

/// Why a firmware update did not happen or did not finish. Every case says what to do;
/// ``result`` is the vendor's code for it. Nothing that fails before the upload starts has
/// sent anything that changes the reader.
public enum FirmwareUpdateError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The image is for other hardware (type or board revision).
    case incompatibleHardware(port: String, image: String, reader: String)
    /// The image may not be applied on the version the reader runs (its applies-to
    /// ranges, or a reader protocol this host does not speak).
    case notApplicable(port: String, running: FirmwareVersion, appliesTo: String)
    /// The image is older than what runs, and downgrades were not allowed.
    case downgradeNotAllowed(port: String, running: FirmwareVersion, image: FirmwareVersion)
    /// The image has the version that runs, and re-installing was not allowed.
    case sameVersionNotAllowed(port: String, version: FirmwareVersion)
    /// The battery is too low to risk a flash.
    case batteryTooLow(port: String, percent: Int, minimum: Int)
    /// The image does not fit the reader's slot.
    case imageTooLarge(port: String, length: Int, capacity: Int)
    /// The reader's read-back of the image does not match it: it stays on its old image.
    case verifyMismatch(port: String, expected: String, found: String)
    /// The new image did not start: the reader went back to the image it ran before.
    case bootFailed(port: String, image: FirmwareVersion, running: FirmwareVersion)
    /// The reader did not come back within the time allowed.
    case cantReconnect(port: String, seconds: Double)
    /// The update was cancelled; the reader runs its previous image, and a later update
    /// goes on from what was already sent.
    case cancelled(port: String)
    /// The reader refused a step or answered something unexpected.
    case protocolFailure(port: String, detail: String)

    /// The vendor's result code.
    public var result: FirmwareUpdateResult {
        switch self {
        case .incompatibleHardware: .incompatibleHardware
        case .downgradeNotAllowed, .sameVersionNotAllowed, .notApplicable: .incompatibleVersion
        case .batteryTooLow, .imageTooLarge, .protocolFailure, .bootFailed: .protocolFailure
        case .verifyMismatch: .crcMismatch
        case .cantReconnect: .cantReconnect
        case .cancelled: .cancelled
        }
    }

    /// A stable code for `--json` output and the catalog key `error.<code>`.
    public var code: String {
        switch self {
        case .incompatibleHardware: "flash_incompatible_hardware"
        case .notApplicable: "flash_not_applicable"
        case .downgradeNotAllowed: "flash_downgrade_not_allowed"
        case .sameVersionNotAllowed: "flash_same_version_not_allowed"
        case .batteryTooLow: "flash_battery_too_low"
        case .imageTooLarge: "flash_image_too_large"
        case .verifyMismatch: "flash_verify_mismatch"
        case .bootFailed: "flash_boot_failed"
        case .cantReconnect: "flash_cant_reconnect"
        case .cancelled: "flash_cancelled"
        case .protocolFailure: "flash_protocol_failure"
        }
    }

    /// The values the localized message fills in, in order.
    public var arguments: [String] {
        switch self {
        case .incompatibleHardware(let port, let image, let reader): [port, image, reader]
        case .notApplicable(let port, let running, let appliesTo): [port, "\(running)", appliesTo]
        case .downgradeNotAllowed(let port, let running, let image): [port, "\(running)", "\(image)"]
        case .sameVersionNotAllowed(let port, let version): [port, "\(version)"]
        case .batteryTooLow(let port, let percent, let minimum): [port, String(percent), String(minimum)]
        case .imageTooLarge(let port, let length, let capacity): [port, String(length), String(capacity)]
        case .verifyMismatch(let port, let expected, let found): [port, expected, found]
        case .bootFailed(let port, let image, let running): [port, "\(image)", "\(running)"]
        case .cantReconnect(let port, let seconds): [port, String(format2: seconds)]
        case .cancelled(let port): [port]
        case .protocolFailure(let port, let detail): [port, detail]
        }
    }

    public var description: String {
        switch self {
        case .incompatibleHardware(let port, let image, let reader):
            "\(port): the image is for \(image) but this reader is \(reader); choose the image for this hardware"
        case .notApplicable(let port, let running, let appliesTo):
            "\(port): the image applies on \(appliesTo), and the reader runs \(running); install an intermediate version first"
        case .downgradeNotAllowed(let port, let running, let image):
            "\(port): the reader runs \(running) and the image is the older \(image); allow downgrades to install it"
        case .sameVersionNotAllowed(let port, let version):
            "\(port): the reader already runs \(version); allow same-version updates to install it again"
        case .batteryTooLow(let port, let percent, let minimum):
            "\(port): the battery is at \(percent) %, below the \(minimum) % a flash needs; charge the reader and retry"
        case .imageTooLarge(let port, let length, let capacity):
            "\(port): the image has \(length) bytes and the reader's slot takes \(capacity); this image is not for this reader"
        case .verifyMismatch(let port, let expected, let found):
            "\(port): the reader read back \(found) where the image is \(expected); it stays on its old image; retry the update"
        case .bootFailed(let port, let image, let running):
            "\(port): the new image \(image) did not start, and the reader went back to \(running); report the image to its publisher"
        case .cantReconnect(let port, let seconds):
            "\(port): the reader did not come back within \(String(format2: seconds)) s; check the cable and re-run the update (it goes on where it stopped)"
        case .cancelled(let port):
            "\(port): the update was cancelled; the reader runs its previous image, and a new update goes on where this one stopped"
        case .protocolFailure(let port, let detail):
            "\(port): the update failed (\(detail)); re-run it (it goes on where it stopped)"
        }
    }
}

extension String {
    fileprivate init(format2 value: Double) {
        let hundredths = Int((value * 100).rounded())
        let fraction = hundredths % 100
        self = "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}

/// Where an update is, for progress bars (vendor `updateFirmwareUpdateProgress`).
public struct FirmwareUpdateProgress: Sendable, Hashable {
    /// The steps of an update, in order.
    public enum Phase: String, Sendable, Hashable {
        case checking, loader, uploading, verifying, switching, confirming
    }

    public var phase: Phase
    /// Image bytes the reader holds.
    public var done: Int
    /// Image bytes in all.
    public var total: Int
    /// Whether cancelling now leaves the reader as it was (false once the switch began).
    public var canCancel: Bool
}

/// What an update did (vendor `notifyFirmwareUpdateSuccess`).
public struct FirmwareUpdateReport: Sendable, Hashable {
    /// The version the reader ran before.
    public var from: FirmwareVersion
    /// The version it runs now.
    public var to: FirmwareVersion
    /// Seconds of audio the update took, from the first request to the confirmation.
    public var seconds: Double
    /// Image bytes sent (those the reader already held were not).
    public var imageBytesSent: Int
    /// Encoded bytes sent for them.
    public var encodedBytesSent: Int
    /// Where the upload began (0, or where an earlier attempt stopped).
    public var resumedFrom: Int
    /// The encoding used.
    public var encoding: BlockEncoding
    /// The reader already ran this exact image: nothing was sent.
    public var alreadyInstalled: Bool
}

/// Options for ``FirmwareUpdater``.
public struct FirmwareUpdateOptions: Sendable {
    /// Install an older version than the one that runs (vendor `allowDowngrade`).
    public var allowDowngrade = false
    /// Install the version that runs again (vendor `allowSameVersion`).
    public var allowSameVersion = false
    /// The battery charge below which no flash starts.
    public var minimumBatteryPercent = 20
    /// Upload requests in flight at once.
    public var window = 4
    /// Seconds of audio to wait for the reader to come back after an unplug or a restart.
    public var reconnectTimeout = 20.0
    /// Encodings to consider (the reader's list narrows it); the smallest wins.
    public var encodings: [BlockEncoding] = [.deflateX86, .deflate, .raw]

    public init() {}
}

/// Flashes an application image onto a Grokker over the audio link (vendor
/// `firmwareUpdate`): checks, moves the reader to its loader, streams the image into the
/// spare slot (compressed, a few blocks in flight, going on from whatever the reader
/// already holds), has the reader hash it back, boots it on trial and confirms it once it
/// answers. Any failure leaves the reader on its previous image; re-running goes on where
/// the last attempt stopped (docs/flashing.md).
public final class FirmwareUpdater {
    public let session: ReaderSession
    public let options: FirmwareUpdateOptions
    private var port: String { session.port.name }

    public init(session: ReaderSession, options: FirmwareUpdateOptions = FirmwareUpdateOptions()) {
        self.session = session
        self.options = options
    }

    /// Puts `image` on the reader. The session must be connected.
    ///
    /// - Parameters:
    ///   - progress: called as the update moves on.
    ///   - shouldCancel: asked between blocks; `true` stops the upload and returns the
    ///     reader to its previous image (``FirmwareUpdateError/cancelled(port:)``).
    public func update(to image: FirmwareImage, progress: (FirmwareUpdateProgress) -> Void = { _ in },
                       shouldCancel: () -> Bool = { false }) throws(FirmwareUpdateError) -> FirmwareUpdateReport {
        let session = self.session
        var phase: FirmwareUpdateProgress.Phase?
        let progress = { (update: FirmwareUpdateProgress) in
            if update.phase != phase {
                phase = update.phase
                session.log(.firmwareUpdate, "\(update.phase.rawValue): \(update.done) of \(update.total) bytes held")
            }
            progress(update)
        }
        do {
            let report = try performUpdate(to: image, progress: progress, shouldCancel: shouldCancel)
            session.log(.firmwareUpdate, "\(report.from) -> \(report.to) in \(report.seconds) s of audio, \(report.encodedBytesSent) bytes sent")
            return report
        } catch {
            session.log(.firmwareUpdate, "failed (\(error.result)): \(error)")
            throw error
        }
    }

    private func performUpdate(to image: FirmwareImage, progress: (FirmwareUpdateProgress) -> Void,
                               shouldCancel: () -> Bool) throws(FirmwareUpdateError) -> FirmwareUpdateReport {
        let started = session.elapsedMilliseconds
        let total = image.bytes.count
        progress(FirmwareUpdateProgress(phase: .checking, done: 0, total: total, canCancel: true))
        var info = try reconnectIfNeeded()
        let from = info.firmwareVersion
        var status = try firmwareStatus()

        // A re-run after the switch: the image runs already, on trial or confirmed.
        if let running = status.runningSlot, running.image?.sha256 == image.descriptor.sha256 {
            if running.pendingConfirm { status = try confirm() }
            return FirmwareUpdateReport(from: from, to: image.descriptor.version, seconds: seconds(since: started),
                                        imageBytesSent: 0, encodedBytesSent: 0, resumedFrom: total, encoding: .raw,
                                        alreadyInstalled: !running.pendingConfirm)
        }
        try check(image, against: info, status: status)

        // The loader; then the upload, going on from what the reader holds.
        if status.mode != .loader { status = try statusRequest(.enterLoader) }
        progress(FirmwareUpdateProgress(phase: .loader, done: 0, total: total, canCancel: true))
        let encoding = chooseEncoding(image, offered: status.encodings)
        var sentImage = 0
        var sentEncoded = 0
        var resumedFrom: Int?
        var attempts = 0
        while true {
            do {
                let begun = try beginUpload(image)
                if resumedFrom == nil { resumedFrom = begun }
                let (image, encoded) = try upload(image, from: begun, encoding: encoding, progress: progress, shouldCancel: shouldCancel)
                sentImage += image
                sentEncoded += encoded
                break
            } catch {
                switch error {
                case .lostConnection:
                    attempts += 1
                    guard attempts <= 3 else { throw .cantReconnect(port: port, seconds: options.reconnectTimeout) }
                    info = try reconnectIfNeeded()
                    status = try firmwareStatus()
                    if status.mode != .loader { status = try statusRequest(.enterLoader) }
                case .failed(let failure):
                    throw failure
                }
            }
        }

        // Verify on the reader.
        progress(FirmwareUpdateProgress(phase: .verifying, done: total, total: total, canCancel: true))
        guard case .check(let check) = try request(.verifyUpload, expecting: .check) else { throw unexpected("verify") }
        guard check.crc32 == image.descriptor.crc32, check.sha256 == image.descriptor.sha256,
              Int(check.length) == total
        else {
            _ = try? request(.leaveLoader, expecting: .status)
            throw .verifyMismatch(port: port, expected: Self.summary(image.descriptor.crc32, image.descriptor.sha256),
                                  found: Self.summary(check.crc32, check.sha256))
        }
        if shouldCancel() { try cancel() }

        // Switch: the reader restarts into the new image on trial.
        progress(FirmwareUpdateProgress(phase: .switching, done: total, total: total, canCancel: false))
        do {
            let response = try session.call(.firmware(.activate))
            guard case .done = response else { throw unexpected("activate") }
        } catch {
            throw Self.failure(error, port: port, step: "activate")
        }
        // Let the answer's acknowledgement go out, then find the restarted reader.
        try? session.idle(forAtMost: 0.15)
        session.engine.disconnect()
        info = try reconnectIfNeeded(force: true)
        progress(FirmwareUpdateProgress(phase: .confirming, done: total, total: total, canCancel: false))
        status = try firmwareStatus()
        guard let running = status.runningSlot, running.image?.sha256 == image.descriptor.sha256 else {
            throw .bootFailed(port: port, image: image.descriptor.version, running: info.firmwareVersion)
        }
        if running.pendingConfirm { status = try confirm() }
        return FirmwareUpdateReport(from: from, to: image.descriptor.version, seconds: seconds(since: started),
                                    imageBytesSent: sentImage, encodedBytesSent: sentEncoded, resumedFrom: resumedFrom ?? 0,
                                    encoding: encoding, alreadyInstalled: false)
    }

    // MARK: Steps

    private func check(_ image: FirmwareImage, against info: ReaderInfo, status: FirmwareStatus) throws(FirmwareUpdateError) {
        let firmware = image.firmware
        switch Compatibility.check(firmware, against: DeviceIdentity(info)) {
        case .invalid:
            throw .protocolFailure(port: port, detail: "the image's package does not say which hardware and versions it fits")
        case .incompatible:
            if firmware.hardwareType != info.hardwareType || !firmware.hardwareRevisions.contains(info.hardwareRevision) {
                throw .incompatibleHardware(
                    port: port, image: "\(firmware.hardwareType.vendorName) rev \(firmware.hardwareRevisions.map(String.init).joined(separator: "/"))",
                    reader: "\(info.hardwareType.vendorName) rev \(info.hardwareRevision)")
            }
            throw .notApplicable(port: port, running: info.firmwareVersion,
                                 appliesTo: firmware.appliesTo.map(\.description).joined(separator: ", "))
        case .downgrade where !options.allowDowngrade:
            throw .downgradeNotAllowed(port: port, running: info.firmwareVersion, image: image.descriptor.version)
        case .sameVersion where !options.allowSameVersion:
            throw .sameVersionNotAllowed(port: port, version: info.firmwareVersion)
        default:
            break
        }
        guard image.bytes.count <= Int(status.slotCapacity) else {
            throw .imageTooLarge(port: port, length: image.bytes.count, capacity: Int(status.slotCapacity))
        }
        // The battery is read by the application; a reader already in its loader (an
        // earlier attempt) was checked then.
        guard status.mode == .application else { return }
        do {
            let battery = try session.batteryInfo()
            if Int(battery.percentRemaining) < options.minimumBatteryPercent && !battery.externalPowerIsConnected {
                throw FirmwareUpdateError.batteryTooLow(port: port, percent: Int(battery.percentRemaining), minimum: options.minimumBatteryPercent)
            }
        } catch let error as FirmwareUpdateError {
            throw error
        } catch {
            throw Self.failure(error, port: port, step: "battery")
        }
    }

    private func chooseEncoding(_ image: FirmwareImage, offered: [BlockEncoding]) -> BlockEncoding {
        var best = BlockEncoding.raw
        var bestSize = image.bytes.count
        for encoding in options.encodings where encoding != .raw && offered.contains(encoding) {
            if let size = try? BlockEncoder(image: image.bytes, from: 0, encoding: encoding).totalEncodedSize(), size < bestSize {
                best = encoding
                bestSize = size
            }
        }
        return best
    }

    private func beginUpload(_ image: FirmwareImage) throws(UploadInterruption) -> Int {
        let response: Response
        do {
            response = try session.call(.firmware(.beginUpload(image.descriptor)))
        } catch .lostConnection {
            throw .lostConnection
        } catch {
            throw .failed(Self.failure(error, port: port, step: "begin upload"))
        }
        guard case .firmware(.progress(let progress), _) = response else { throw .failed(unexpected("begin upload")) }
        return Int(progress.offset)
    }

    /// Streams the image from `offset`, `window` blocks in flight; returns the image and
    /// encoded bytes sent.
    private func upload(_ image: FirmwareImage, from start: Int, encoding: BlockEncoding,
                        progress: (FirmwareUpdateProgress) -> Void,
                        shouldCancel: () -> Bool) throws(UploadInterruption) -> (Int, Int) {
        let total = image.bytes.count
        var encoder: BlockEncoder
        do {
            encoder = try BlockEncoder(image: image.bytes, from: start, encoding: encoding)
        } catch {
            throw .failed(.protocolFailure(port: port, detail: "\(error)"))
        }
        var inFlight: [UInt16] = []
        var inFlightSizes: [Int] = []
        var sentImage = 0
        var sentEncoded = 0
        var held = start
        progress(FirmwareUpdateProgress(phase: .uploading, done: held, total: total, canCancel: true))
        while held < total {
            // Fill the window.
            while inFlight.count < options.window, !shouldCancel() {
                let block: UploadBlock?
                do {
                    block = try encoder.next()
                } catch {
                    throw .failed(.protocolFailure(port: port, detail: "\(error)"))
                }
                guard let block else { break }
                do {
                    inFlight.append(try session.submit(.firmware(.uploadBlock(block))))
                } catch .lostConnection {
                    throw .lostConnection
                } catch {
                    throw .failed(Self.failure(error, port: port, step: "upload"))
                }
                sentImage += Int(block.decodedLength)
                sentEncoded += block.data.count
                inFlightSizes.append(block.data.count + 32)
            }
            let inFlightBytes = inFlightSizes.reduce(0, +)
            if inFlight.isEmpty {
                if shouldCancel() {
                    do { try cancel() } catch { throw .failed(error) }
                }
                throw .failed(.protocolFailure(port: port, detail: "the upload stalled at \(held) of \(total) bytes"))
            }
            let answer: (id: UInt16, response: Response)
            do {
                // Everything in flight has to cross the link first: allow for it.
                let carrying = Double(inFlightBytes * 8) / session.engine.mode.bitRate * 1.5
                answer = try session.awaitResponse(to: [inFlight[0]], timeout: session.options.commandTimeout + carrying)
            } catch .lostConnection {
                throw .lostConnection
            } catch {
                throw .failed(Self.failure(error, port: port, step: "upload"))
            }
            inFlight.removeFirst()
            inFlightSizes.removeFirst()
            guard case .firmware(.progress(let reported), _) = answer.response else {
                throw .failed(unexpected("upload", answer.response))
            }
            held = Int(reported.offset)
            progress(FirmwareUpdateProgress(phase: .uploading, done: held, total: total, canCancel: true))
            if !reported.accepted {
                // The reader lost the stream (a damaged block): drain what is in flight
                // and start a new stream where it stands.
                let carrying = Double(inFlightSizes.reduce(0, +) * 8) / session.engine.mode.bitRate * 1.5
                for id in inFlight {
                    do {
                        _ = try session.awaitResponse(to: [id], timeout: session.options.commandTimeout + carrying)
                    } catch .lostConnection {
                        throw .lostConnection
                    } catch {}
                }
                inFlight.removeAll()
                inFlightSizes.removeAll()
                let restart = (held / BranchFilter.pageSize) * BranchFilter.pageSize
                guard restart == held || held == total else {
                    throw .failed(.protocolFailure(port: port, detail: "the reader stands at \(held), not on a block boundary"))
                }
                do {
                    encoder = try BlockEncoder(image: image.bytes, from: held, encoding: encoding)
                } catch {
                    throw .failed(.protocolFailure(port: port, detail: "\(error)"))
                }
            }
        }
        return (sentImage, sentEncoded)
    }

    private func cancel() throws(FirmwareUpdateError) {
        _ = try? request(.leaveLoader, expecting: .status)
        throw .cancelled(port: port)
    }

    private func confirm() throws(FirmwareUpdateError) -> FirmwareStatus {
        try statusRequest(.confirm)
    }

    private func firmwareStatus() throws(FirmwareUpdateError) -> FirmwareStatus {
        try statusRequest(.status)
    }

    private func statusRequest(_ request: FirmwareRequest) throws(FirmwareUpdateError) -> FirmwareStatus {
        guard case .status(let status) = try self.request(request, expecting: .status) else {
            throw unexpected("\(request.opcode)")
        }
        return status
    }

    private enum ReplyKind { case status, check }

    private func request(_ request: FirmwareRequest, expecting kind: ReplyKind) throws(FirmwareUpdateError) -> FirmwareReply {
        let response: Response
        do {
            response = try session.call(.firmware(request))
        } catch {
            throw Self.failure(error, port: port, step: "\(request.opcode)")
        }
        switch (kind, response) {
        case (.status, .firmware(.status, _)), (.check, .firmware(.check, _)):
            guard case .firmware(let reply, _) = response else { throw unexpected("\(request.opcode)") }
            return reply
        default:
            throw unexpected("\(request.opcode)", response)
        }
    }

    /// Connects when the link is down (after an unplug or the reader's restart), for up to
    /// ``FirmwareUpdateOptions/reconnectTimeout`` seconds of audio.
    private func reconnectIfNeeded(force: Bool = false) throws(FirmwareUpdateError) -> ReaderInfo {
        if !force, session.connectionState == .connected, let info = session.info { return info }
        let deadline = session.elapsedMilliseconds + options.reconnectTimeout * 1000
        while session.elapsedMilliseconds < deadline {
            do {
                try session.connect()
                return try session.identify()
            } catch {
                session.engine.disconnect()
                try? session.idle(forAtMost: 0.2)
            }
        }
        throw .cantReconnect(port: port, seconds: options.reconnectTimeout)
    }

    private func seconds(since startMilliseconds: Double) -> Double {
        (session.elapsedMilliseconds - startMilliseconds) / 1000
    }

    private func unexpected(_ step: String, _ response: Response? = nil) -> FirmwareUpdateError {
        if case .failure(_, let status, let message)? = response {
            return .protocolFailure(port: port, detail: "\(step) refused: \(status): \(message)")
        }
        return .protocolFailure(port: port, detail: "\(step) answered with \(response.map { "\($0.opcode)" } ?? "something else")")
    }

    private static func failure(_ error: ReaderError, port: String, step: String) -> FirmwareUpdateError {
        switch error {
        case .lostConnection, .notPluggedIn, .cannotHandshake: .cantReconnect(port: port, seconds: 0)
        default: .protocolFailure(port: port, detail: "\(step): \(error)")
        }
    }

    private static func failure(_ error: any Error, port: String, step: String) -> FirmwareUpdateError {
        if let error = error as? ReaderError { return failure(error, port: port, step: step) }
        if let error = error as? FirmwareUpdateError { return error }
        return .protocolFailure(port: port, detail: "\(step): \(error)")
    }

    private static func summary(_ crc: UInt32, _ sha: [UInt8]) -> String {
        "CRC-32 \(String(crc, radix: 16)), SHA-256 \(Hex.encode(sha.prefix(8)))…"
    }
}

/// Why an upload pass stopped.
private enum UploadInterruption: Error {
    case lostConnection
    case failed(FirmwareUpdateError)
}

/// Cuts an image into upload blocks from an offset: one compressed stream (primed with
/// the image just before the offset, as the reader primes its decoder) sync-flushed at each
/// block, or raw pieces.
struct BlockEncoder {
    static let pageBytes = BranchFilter.pageSize
    static let rawBlockBytes = 2048

    private let image: [UInt8]
    private let encoding: BlockEncoding
    private var offset: Int
    private var first = true
    private let deflater: Deflater?

    init(image: [UInt8], from offset: Int, encoding: BlockEncoding) throws(CryptoError) {
        self.image = image
        self.encoding = encoding
        self.offset = offset
        switch encoding {
        case .raw:
            deflater = nil
        case .deflate, .deflateX86:
            let from = max(0, offset - 32 * 1024)
            var history = Array(image[from..<offset])
            if encoding == .deflateX86 { BranchFilter.encodePages(&history, position: UInt32(from)) }
            deflater = try Deflater(level: 9, dictionary: history)
        }
    }

    /// The next block, or `nil` at the end of the image.
    mutating func next() throws(CryptoError) -> UploadBlock? {
        guard offset < image.count else { return nil }
        let size = encoding == .raw ? Self.rawBlockBytes : Self.pageBytes
        let end = min(offset + size, image.count)
        let plain = Array(image[offset..<end])
        var data: [UInt8]
        switch encoding {
        case .raw:
            data = plain
        case .deflate, .deflateX86:
            var input = plain
            if encoding == .deflateX86 { BranchFilter.encodePages(&input, position: UInt32(offset)) }
            data = try deflater!.compress(input, flush: .sync)
            guard data.count <= UploadBlock.maxDataBytes else {
                // Incompressible beyond a message: the caller falls back to raw.
                throw .outputLimitExceeded(limit: UploadBlock.maxDataBytes)
            }
        }
        let block = UploadBlock(offset: UInt32(offset), encoding: encoding, restart: first, decodedLength: UInt16(plain.count),
                                crc32: CRC32.checksum(plain), data: data)
        first = false
        offset = end
        return block
    }

    /// The encoded size of everything from the start offset.
    func totalEncodedSize() throws(CryptoError) -> Int {
        var copy = try BlockEncoder(image: image, from: offset, encoding: encoding)
        var total = 0
        while let block = try copy.next() { total += block.data.count }
        return total
    }
}
