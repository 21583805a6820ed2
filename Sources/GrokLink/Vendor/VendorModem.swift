import GrokAudio

/// Which end of the cable a ``VendorModem`` is.
public enum VendorModemRole: Sendable, Equatable {
    /// The phone or workstation: silent until the reader asks, then proposes a setting.
    case host
    /// The reader (Grokker): sends the request tone, follows the host's proposal.
    case device
}

/// Where the handshake stands. The names follow the vendor's phases (its debug text calls
/// them phase 1, 1A, 2, 3 and connected).
public enum VendorModemState: Sendable, Equatable, CustomStringConvertible {
    /// Host not opened, or device not started: silent.
    case closed
    /// Host, phase 1: silent, listening for the reader's 3150 Hz request.
    case awaitingRequest
    /// Device: sending the 3150 Hz request, listening for the host's answer.
    case requesting
    /// Phase 1A at a rate other than 44.1 kHz: the host sends 958 Hz, the reader answers
    /// 2666.66 Hz.
    case announcingRate
    /// Phase 1A when the host sends non-symmetric: the host sends 400 Hz, the reader answers
    /// 3675 Hz.
    case announcingNonSymmetric
    /// Phase 2: the host sends the answer tone of `samplesPerBit`; the reader has moved (or
    /// moves) to that setting's idle tone.
    case proposing(samplesPerBit: Int)
    /// Phase 3: both on the idle tone; the host counts four windows.
    case confirming(samplesPerBit: Int)
    /// Bytes flow.
    case connected(samplesPerBit: Int)

    public var description: String {
        switch self {
        case .closed: "closed"
        case .awaitingRequest: "awaiting request"
        case .requesting: "requesting"
        case .announcingRate: "announcing rate"
        case .announcingNonSymmetric: "announcing non-symmetric"
        case .proposing(let s): "proposing \(s) spb"
        case .confirming(let s): "confirming \(s) spb"
        case .connected(let s): "connected at \(s) spb"
        }
    }
}

/// Something that happened on the modem, stamped with the sample at which it happened.
public enum VendorModemEvent: Sendable, Equatable {
    case stateChanged(from: VendorModemState, to: VendorModemState, at: Int64)
    /// A handshake phase heard nothing it could use for 80 windows and started over.
    case handshakeGaveUp(phase: VendorModemState, at: Int64)
    /// Connected, the carrier was missing for five windows in a row: back to the handshake.
    case carrierLost(at: Int64)
    /// Connected, the layer above reported more than four errors within about a second
    /// (``VendorModem/countError()``): back to the handshake, as the vendor does.
    case tooManyErrors(count: Int, at: Int64)
}

/// Counters since the modem was created.
public struct VendorModemStatistics: Sendable, Equatable {
    public var bytesSent = 0
    public var bytesReceived = 0
    /// Bytes handed to ``VendorModem/send(_:)`` while not connected (dropped).
    public var bytesDroppedNotConnected = 0
    /// Bytes whose stop bit was not a 0.
    public var framingErrors = 0
    /// Handshakes that reached ``VendorModemState/connected(samplesPerBit:)``.
    public var handshakes = 0
    /// Handshake phases abandoned after 80 windows.
    public var handshakeGiveUps = 0
    public var carrierLosses = 0
    /// Connections dropped for more than four reported errors in about a second.
    public var errorDrops = 0
    /// Samples from the handshake's start (host: opening or dropping back; device: starting
    /// its request) to the last connection.
    public var lastHandshakeSamples: Int64?
}

/// The vendor's modem, one end of the cable: handshake tones, phase-continuous FSK, UART
/// bytes, full duplex. Pure: no I/O, and time is the number of samples processed.
///
/// The owner calls ``process(input:output:)`` with each block of captured samples and plays
/// what it writes (the shape of a ``CablePeer``). Everything the modem does is decided at
/// exact sample positions, so any chunking of the same samples gives the same output and the
/// same bytes.
///
/// Not thread-safe: one owner at a time.
public final class VendorModem: VendorByteTransport, CablePeer {
    /// Tunables; the defaults are the vendor's numbers.
    public struct Configuration: Sendable, Equatable {
        /// Peak amplitude of what this end plays (the vendor: full scale).
        public var amplitude: Float = 1
        /// Host: run the non-symmetric phase 1A (400 Hz / 3675 Hz), as the vendor's
        /// `sendNonSymmetric`.
        public var sendNonSymmetric = false
        /// Consecutive request windows before the host answers (vendor: 3).
        public var requestWindows = 3
        /// Windows the host ignores after it starts its answer tone (vendor: 10).
        public var answerSettleWindows = 10
        /// Consecutive idle-tone windows before the host moves to the idle tone (vendor: 2).
        public var foundLowWindows = 2
        /// Consecutive idle-tone windows on the idle tone before the host is connected
        /// (vendor: 4).
        public var confirmWindows = 4
        /// Non-matching windows before a phase gives up (vendor: 80).
        public var giveUpWindows = 80
        /// Consecutive windows without carrier that drop a connection (vendor: 5).
        public var carrierLossWindows = 5
        /// Share of a window's energy that must sit in a tone for the window to count as that
        /// tone (1 for a pure tone; about 0.002 for white noise).
        public var toneShare = 0.5
        /// Share of the idle tone that counts as carrier while connected (between bytes).
        public var carrierShare = 0.2
        /// Device: consecutive windows of one answer tone before it follows it.
        public var deviceAnswerWindows = 2
        /// Device: consecutive windows of the host's idle tone before it is connected.
        public var deviceConfirmWindows = 2

        public init() {}
    }

    public let role: VendorModemRole
    public let sampleRate: Int
    public let configuration: Configuration
    public private(set) var now: Int64 = 0
    public private(set) var state: VendorModemState = .closed
    public private(set) var statistics = VendorModemStatistics()
    /// The setting proposed, being confirmed or connected (`nil` before one is known).
    public private(set) var setting: VendorModemSetting?
    /// Host: the samples per bit ``open(samplesPerBit:)`` proposes.
    public private(set) var proposedSamplesPerBit = VendorModemSetting.defaultSamplesPerBit
    /// The last window's report (for diagnostics and tests).
    public private(set) var lastWindow: VendorWindowReport?

    private var modulator: VendorFSKModulator
    private var demodulator: VendorFSKDemodulator?
    private var window: VendorToneWindow
    private var events: [VendorModemEvent] = []
    private var received: [UInt8] = []
    private var decoded: [VendorFSKDemodulator.Byte] = []
    private var handshakeStart: Int64 = 0
    /// When the demodulator last completed a byte (modem time).
    private var lastByteAt: Int64 = .min / 2
    // Phase counters.
    private var matches = 0
    private var misses = 0
    private var settle = 0
    private var lastTarget = -1
    private var nonSymmetricDone = false
    private var rateDone = false
    private var hostAt48k = false
    /// Device: what each listened-for target means.
    private enum Target { case answer(Int), rateAnnouncement, nonSymmetric, tone }
    private var targetMeanings: [Target] = []
    /// Errors reported since the last check, and good windows until the next check.
    private var recentErrors = 0
    private var errorCheckCountdown = 0

    /// Creates one end of the cable.
    ///
    /// - Throws: ``VendorModemError/unsupportedSetting(samplesPerBit:sampleRate:)`` when the
    ///   sample rate is not 44 100 or 48 000.
    public init(role: VendorModemRole, sampleRate: Int, configuration: Configuration = Configuration()) throws(VendorModemError) {
        guard VendorModemSetting.supportedSampleRates.contains(sampleRate) else {
            throw .unsupportedSetting(samplesPerBit: VendorModemSetting.defaultSamplesPerBit, sampleRate: sampleRate)
        }
        self.role = role
        self.sampleRate = sampleRate
        self.configuration = configuration
        modulator = VendorFSKModulator(amplitude: configuration.amplitude)
        window = VendorToneWindow(sampleRate: sampleRate)
    }

    // MARK: Control

    /// Host: starts listening for a reader and will propose `samplesPerBit` (AutoConfig, a
    /// layer above, reconnects at another setting by opening again).
    public func open(samplesPerBit: Int = VendorModemSetting.defaultSamplesPerBit) throws(VendorModemError) {
        guard role == .host else { throw .wrongRole(operation: "open") }
        _ = try VendorModemSetting(samplesPerBit: samplesPerBit, sampleRate: sampleRate)
        proposedSamplesPerBit = samplesPerBit
        restartHandshake()
    }

    /// Host: stops and goes silent.
    public func close() {
        guard role == .host else { return }
        enter(.closed)
    }

    /// Device: starts sending the request tone.
    public func start() throws(VendorModemError) {
        guard role == .device else { throw .wrongRole(operation: "start") }
        restartHandshake()
    }

    /// Device: stops and goes silent.
    public func stop() {
        guard role == .device else { return }
        enter(.closed)
    }

    /// The layer above reports an error on the link (a bad packet). Connected, more than four
    /// within `sampleRate / 1260` good windows (about a second) drop the link back to the
    /// handshake: the vendor's `ByteProtocolCountError` rule. Ignored when not connected.
    public func countError() {
        guard isConnected else { return }
        recentErrors += 1
    }

    /// Events since the last call, oldest first.
    public func drainEvents() -> [VendorModemEvent] {
        defer { events.removeAll(keepingCapacity: true) }
        return events
    }

    // MARK: VendorByteTransport

    public var samplesPerBit: Int { setting?.samplesPerBit ?? proposedSamplesPerBit }

    public var isConnected: Bool {
        if case .connected = state { return true }
        return false
    }

    public var isSending: Bool { modulator.isSending }

    public func send(_ bytes: [UInt8]) {
        guard isConnected else {
            statistics.bytesDroppedNotConnected += bytes.count
            return
        }
        modulator.enqueue(bytes)
    }

    public func takeReceived() -> [UInt8] {
        defer { received.removeAll(keepingCapacity: true) }
        return received
    }

    // MARK: The sample pump

    public func process(input: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>) {
        precondition(input.count == output.count, "the modem plays and captures the same number of samples")
        var start = 0
        while start < input.count {
            let n = Swift.min(input.count - start, window.remaining)
            let segment = UnsafeBufferPointer(rebasing: input[start..<(start + n)])
            modulator.render(into: UnsafeMutableBufferPointer(rebasing: output[start..<(start + n)]))
            if demodulator != nil {
                demodulator!.process(segment, into: &decoded)
                if !decoded.isEmpty {
                    lastByteAt = now + Int64(n)
                    if isConnected { received.append(contentsOf: decoded.map(\.value)) }
                    statistics.bytesReceived += isConnected ? decoded.count : 0
                    decoded.removeAll(keepingCapacity: true)
                }
            }
            let report = window.consume(segment)
            now += Int64(n)
            start += n
            if let report {
                lastWindow = report
                handle(report)
            }
        }
        statistics.bytesSent = modulator.bytesSent
        statistics.framingErrors = demodulator?.framingErrors ?? statistics.framingErrors
    }

    // MARK: The handshake

    private func restartHandshake() {
        handshakeStart = now
        nonSymmetricDone = false
        rateDone = false
        hostAt48k = false
        enter(role == .host ? .awaitingRequest : .requesting)
    }

    private func enter(_ next: VendorModemState) {
        let previous = state
        state = next
        matches = 0
        misses = 0
        settle = 0
        lastTarget = -1
        switch next {
        case .closed:
            modulator.setCarrier(.silence)
            demodulator = nil
            setting = nil
            window.listen(for: [])
        case .awaitingRequest:
            modulator.setCarrier(.silence)
            demodulator = nil
            setting = nil
            // Sending non-symmetric, the vendor host also takes a request at twice the sign
            // changes (6300 Hz).
            window.listen(for: configuration.sendNonSymmetric && role == .host
                ? [VendorHandshakeTones.requestHz, 2 * VendorHandshakeTones.requestHz] : [VendorHandshakeTones.requestHz])
        case .requesting:
            modulator.setCarrier(.tone(VendorTone(hz: Int(VendorHandshakeTones.requestHz), sampleRate: sampleRate)))
            demodulator = nil
            setting = nil
            listenForHostAnnouncements()
        case .announcingRate:
            if role == .host {
                modulator.setCarrier(.tone(VendorHandshakeTones.rateAnnouncement(sampleRate: sampleRate)))
                window.listen(for: [VendorHandshakeTones.rateAcknowledgementHz])
            } else {
                modulator.setCarrier(.tone(tone(hz: VendorHandshakeTones.rateAcknowledgementHz)))
                listenForHostAnnouncements()
            }
        case .announcingNonSymmetric:
            if role == .host {
                modulator.setCarrier(.tone(VendorHandshakeTones.nonSymmetricAnnouncement(sampleRate: sampleRate)))
                window.listen(for: [VendorHandshakeTones.nonSymmetricAcknowledgementHz])
            } else {
                modulator.setCarrier(.tone(tone(hz: VendorHandshakeTones.nonSymmetricAcknowledgementHz)))
                listenForHostAnnouncements()
            }
        case .proposing(let spb):
            let s = try! VendorModemSetting(samplesPerBit: spb, sampleRate: sampleRate)
            setting = s
            if role == .host {
                modulator.setCarrier(.tone(s.answerTone))
                settle = configuration.answerSettleWindows
            } else {
                modulator.setCarrier(.data(s))
                demodulator = VendorFSKDemodulator(setting: s)
            }
            window.listen(for: [idleHz(s)])
        case .confirming(let spb):
            let s = try! VendorModemSetting(samplesPerBit: spb, sampleRate: sampleRate)
            setting = s
            modulator.setCarrier(.data(s))
            demodulator = VendorFSKDemodulator(setting: s)
            window.listen(for: [idleHz(s)])
        case .connected(let spb):
            let s = try! VendorModemSetting(samplesPerBit: spb, sampleRate: sampleRate)
            setting = s
            modulator.setCarrier(.data(s))
            if demodulator == nil { demodulator = VendorFSKDemodulator(setting: s) }
            window.listen(for: [idleHz(s)])
            statistics.handshakes += 1
            statistics.lastHandshakeSamples = now - handshakeStart
            recentErrors = 0
            errorCheckCountdown = sampleRate / vendorHandshakeWindow
        }
        if previous != next { events.append(.stateChanged(from: previous, to: next, at: now)) }
    }

    /// The idle ("0") tone as our detectors listen for it: the exact half-period tone.
    private func idleHz(_ s: VendorModemSetting) -> Double {
        Double(sampleRate) / Double(2 * s.zeroHalfPeriod)
    }

    private func tone(hz: Double) -> VendorTone {
        VendorTone(
            phaseIncrement: UInt32(hz * Double(VendorTone.phaseCycle) / Double(sampleRate)),
            nominalHz: Int(hz), sampleRate: sampleRate)
    }

    /// Device: listen for every answer tone, and the 1A announcements not yet answered.
    private func listenForHostAnnouncements() {
        var frequencies: [Double] = []
        targetMeanings = []
        for s in VendorModemSetting.all(sampleRate: sampleRate) {
            frequencies.append(Double(s.answerTone.nominalHz))
            targetMeanings.append(.answer(s.samplesPerBit))
        }
        if state != .announcingRate {
            frequencies.append(958)
            targetMeanings.append(.rateAnnouncement)
        }
        if state != .announcingNonSymmetric && state != .announcingRate {
            frequencies.append(400)
            targetMeanings.append(.nonSymmetric)
        }
        window.listen(for: frequencies)
    }

    private func giveUp() {
        statistics.handshakeGiveUps += 1
        events.append(.handshakeGaveUp(phase: state, at: now))
        restartHandshake()
    }

    /// Counts a window that did or did not match; returns true once `needed` matched in a
    /// row. A miss costs one of the phase's `giveUpWindows` (the vendor's rule) unless the
    /// phase never gives up.
    private func count(_ matched: Bool, needed: Int, canGiveUp: Bool = true) -> Bool {
        if matched {
            matches += 1
            return matches >= needed
        }
        matches = 0
        if canGiveUp {
            misses += 1
            if misses >= configuration.giveUpWindows { giveUp() }
        }
        return false
    }

    private func handle(_ report: VendorWindowReport) {
        let share = configuration.toneShare
        let shares = report.toneShares
        switch (role, state) {
        case (_, .closed):
            return
        case (.host, .awaitingRequest):
            if count(shares.contains { $0 >= share }, needed: configuration.requestWindows, canGiveUp: false) {
                hostAfterRequest()
            }
        case (.host, .announcingNonSymmetric):
            if count(shares.contains { $0 >= share }, needed: 3) {
                nonSymmetricDone = true
                hostAfterRequest()
            }
        case (.host, .announcingRate):
            if count((shares.first ?? 0) >= share, needed: 3) {
                rateDone = true
                hostAfterRequest()
            }
        case (.host, .proposing(let spb)):
            if settle > 0 {
                settle -= 1
                return
            }
            if count((shares.first ?? 0) >= share, needed: configuration.foundLowWindows) {
                enter(.confirming(samplesPerBit: spb))
            }
        case (.host, .confirming(let spb)):
            if count((shares.first ?? 0) >= share, needed: configuration.confirmWindows) {
                enter(.connected(samplesPerBit: spb))
            }
        case (.device, .requesting), (.device, .announcingRate), (.device, .announcingNonSymmetric):
            deviceListen(shares)
        case (.device, .proposing(let spb)):
            if count((shares.first ?? 0) >= share, needed: configuration.deviceConfirmWindows) {
                enter(.connected(samplesPerBit: spb))
            }
        case (_, .connected):
            monitorCarrier(report)
        default:
            return
        }
    }

    private func hostAfterRequest() {
        if configuration.sendNonSymmetric && !nonSymmetricDone {
            enter(.announcingNonSymmetric)
        } else if sampleRate != 44_100 && !rateDone {
            enter(.announcingRate)
        } else {
            enter(.proposing(samplesPerBit: proposedSamplesPerBit))
        }
    }

    private func deviceListen(_ shares: [Double]) {
        var best = -1
        var bestShare = configuration.toneShare
        for (i, s) in shares.enumerated() where s >= bestShare {
            best = i
            bestShare = s
        }
        if best < 0 || best != lastTarget {
            lastTarget = best
            matches = best < 0 ? 0 : 1
            if best < 0 && state != .requesting {
                misses += 1
                if misses >= configuration.giveUpWindows { giveUp() }
            }
            if matches < configuration.deviceAnswerWindows { return }
        } else {
            matches += 1
            if matches < configuration.deviceAnswerWindows { return }
        }
        switch targetMeanings[best] {
        case .answer(let spb): enter(.proposing(samplesPerBit: spb))
        case .rateAnnouncement: enter(.announcingRate)
        case .nonSymmetric: enter(.announcingNonSymmetric)
        case .tone: return
        }
    }

    private func monitorCarrier(_ report: VendorWindowReport) {
        let idleShare = report.toneShares.first ?? 0
        var present = idleShare >= configuration.carrierShare
        if !present, now - lastByteAt <= Int64(vendorHandshakeWindow) {
            present = true
        }
        if present {
            misses = 0
            errorCheckCountdown -= 1
            if errorCheckCountdown <= 0 {
                let errors = recentErrors
                recentErrors = 0
                errorCheckCountdown = sampleRate / vendorHandshakeWindow
                if errors > 4 {
                    statistics.errorDrops += 1
                    events.append(.tooManyErrors(count: errors, at: now))
                    modulator.dropQueue()
                    restartHandshake()
                }
            }
            return
        }
        misses += 1
        if misses >= configuration.carrierLossWindows {
            statistics.carrierLosses += 1
            events.append(.carrierLost(at: now))
            modulator.dropQueue()
            restartHandshake()
        }
    }
}

@available(*, unavailable)
extension VendorModem: Sendable {}
