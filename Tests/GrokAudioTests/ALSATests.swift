import Foundation
import GrokBasics
import GrokTestSupport
import Synchronization
import Testing

@testable import GrokAudio

extension TemporaryDirectory {
    /// A FIFO named `name` inside the directory.
    func fifo(_ name: String) -> String {
        let fifoPath = file(name)
        precondition(mkfifo(fifoPath, 0o600) == 0, "mkfifo \(fifoPath) failed")
        return fifoPath
    }
}

/// The ALSA fixtures.
enum AudioFixtures {
    /// The fixture ALSA configuration defining `grokbench_host`.
    static var asoundrc: String {
        Bundle.module.url(forResource: "asoundrc", withExtension: nil, subdirectory: "Fixtures")!.path
    }
}

/// Fails the whole run loudly instead of hanging CI if a FIFO session ever deadlocks.
/// (A normal session takes well under a second; the limit is only a last resort.)
final class DeadlockGuard: Sendable {
    private let done = Atomic<Bool>(false)

    init(_ what: String, seconds: UInt32 = 120) {
        Thread.detachNewThread { [self] in
            sleep(seconds)
            if !done.load(ordering: .acquiring) { fatalError("deadlock: \(what) did not finish in \(seconds) s") }
        }
    }

    func finish() { done.store(true, ordering: .releasing) }
}

/// The emulated device for the FIFO sessions: a thread that reads what the host played
/// and answers with it negated, `block` frames at a time, through a ``RawPipePort``.
final class NegatingPeer: Sendable {
    struct Outcome: Sendable {
        var received: [Float] = []
        var ending: AudioError?
    }

    private let outcome = Mutex(Outcome())
    private let finished = DispatchSemaphore(value: 0)

    /// Starts the thread; `stopAfter` frames makes it close its end early.
    init(input: String, output: String, block: Int, stopAfter: Int? = nil) {
        Thread.detachNewThread { [self] in
            defer { finished.signal() }
            let port: RawPipePort
            do {
                port = try RawPipePort(inputPath: input, outputPath: output, sampleRate: 44100)
            } catch {
                outcome.withLock { $0.ending = error as? AudioError }
                return
            }
            var answer = [Float](repeating: 0, count: block)
            var heard = [Float](repeating: 0, count: block)
            var received: [Float] = []
            while stopAfter.map({ received.count < $0 }) ?? true {
                do {
                    try answer.withUnsafeBufferPointer { out in
                        try heard.withUnsafeMutableBufferPointer { into in
                            try port.transfer(output: out, input: into)
                        }
                    }
                } catch {
                    outcome.withLock { $0.ending = error as? AudioError }
                    break
                }
                received += heard
                answer = heard.map { -$0 }
            }
            port.close()
            outcome.withLock { $0.received = received }
        }
    }

    /// Waits for the thread to end and returns what it heard and why it stopped.
    func join() -> Outcome {
        finished.wait()
        return outcome.withLock { $0 }
    }
}

@Suite("ALSA")
struct ALSATests {
    // MARK: Errors

    @Test(arguments: ["grok_no_such_device", "hw:29,0", "plughw:CARD=NoSuchGrokCard"])
    func unknownDeviceIsNotFound(device: String) {
        #expect {
            _ = try ALSAPort(device: device)
        } throws: { error in
            guard case .deviceNotFound(let named, let detail) = error as? AudioError else { return false }
            // The call and its errno's name, as a code: no libasound English.
            return named == device && detail.code == "playback_call_failed"
                && detail.arguments.first?.hasPrefix("snd_pcm_open") == true
                && ["ENOENT", "ENODEV", "ENXIO"].contains(detail.arguments.last ?? "")
        }
    }

    @Test func missingConfigFileNamesIt() {
        let scratch = TemporaryDirectory("grokaudio-test")
        let missing = scratch.file("no-such-asoundrc")
        #expect(throws: AudioError.file(path: missing, detail: ErrorDetail("config_unreadable", ["ENOENT"]))) {
            _ = try ALSAPort(device: "grokbench_host", configFile: missing)
        }
    }

    @Test func unparsableConfigFileNamesIt() throws {
        let scratch = TemporaryDirectory("grokaudio-test")
        let broken = scratch.file("broken-asoundrc")
        try "pcm.broken {\n  type file\n  slave { pcm \"null\"\n".write(toFile: broken, atomically: true, encoding: .utf8)
        #expect {
            _ = try ALSAPort(device: "broken", configFile: broken)
        } throws: { error in
            guard case .file(let path, let detail) = error as? AudioError else { return false }
            // Where libasound stopped when it says so (its sentence is English, so only the
            // position and the errno); this file's unclosed braces it refuses without a word
            // (alsa-lib 1.2 here, in this process and in grokctl alike), so just the errno.
            return path == broken
                && (detail == ErrorDetail("config_invalid", ["EINVAL"]) || (detail.code == "config_syntax" && detail.arguments.count == 3))
        }
        // libasound's "<file>:<line>:<column>:<what>" gives the position, whatever ':' the path holds.
        #expect(ALSAConfiguration.invalid(code: -22, message: "/tmp/a:b/broken-asoundrc:4:0:Unexpected end of file")
                == ErrorDetail("config_syntax", ["4", "0", "EINVAL"]))
        #expect(ALSAConfiguration.invalid(code: -22, message: "") == ErrorDetail("config_invalid", ["EINVAL"]))
    }

    /// A 48 kHz-only card, made of ALSA's own plugins: plug over null held at 48000.
    static func cards(_ scratch: TemporaryDirectory) throws -> String {
        let file = scratch.file("asoundrc-rates")
        try """
            pcm.card48 { type plug; slave { pcm "null"; rate 48000 } }
            pcm.card32 { type plug; slave { pcm "null"; rate 32000 } }
            """.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    @Test("native rate: a card is asked for 44.1 then 48 kHz with resampling off; a 48 kHz-only card opens at 48 kHz, never through plug's resampler unless a plug device is named")
    func nativeRate() throws {
        let scratch = TemporaryDirectory("grokaudio-test")
        let file = try Self.cards(scratch)
        #expect(try ALSAPort.nativeRate(device: "card48", configFile: file) == 48000)
        #expect(try ALSAPort.nativeRate(device: "null") == 44100)
        #expect(throws: AudioError.unsupportedFormat(device: "card32", detail: ErrorDetail("no_native_rate"))) {
            _ = try ALSAPort.nativeRate(device: "card32", configFile: file)
        }
        // At 44.1 kHz the card would need the resampler: refused without it, opened with it.
        #expect(throws: AudioError.self) { _ = try ALSAPort(device: "card48", sampleRate: 44100, configFile: file) }
        let resampled = try ALSAPort(device: "card48", sampleRate: 44100, configFile: file, resample: true)
        resampled.close()
        let native = try ALSAPort(device: "card48", sampleRate: 48000, configFile: file)
        #expect(native.sampleRate == 48000)
        native.close()
        #expect(ALSAPort.isPlugDevice("plughw:CARD=Device,DEV=0") && ALSAPort.isPlugDevice("plug:card48"))
        #expect(!ALSAPort.isPlugDevice("hw:1,0") && !ALSAPort.isPlugDevice("default") && !ALSAPort.isPlugDevice("card48"))
    }

    @Test(arguments: [8000, 22050, 96000])
    func unsupportedRatesAreRefused(rate: Int) {
        #expect {
            _ = try ALSAPort(device: "null", sampleRate: rate)
        } throws: { error in
            guard case .unsupportedFormat(let device, let detail) = error as? AudioError else { return false }
            return device == "null" && detail == ErrorDetail("port_rate", ["\(rate)"])
        }
    }

    @Test func errorCodesMapToCases() {
        let device = "hw:3,0"
        #expect(ALSACall.error(code: -Int(ENOENT), operation: "snd_pcm_open", device: device)
            == .deviceNotFound(device: device, detail: ErrorDetail("call_failed", ["snd_pcm_open", "ENOENT"])))
        for code in [ENODEV, ENXIO] {
            guard case .deviceNotFound = ALSACall.error(code: -Int(code), operation: "snd_pcm_open", device: device) else {
                Issue.record("errno \(code) should mean device not found")
                continue
            }
        }
        #expect(ALSACall.error(code: -Int(EBUSY), operation: "snd_pcm_open", device: device) == .deviceBusy(device: device))
        #expect(ALSACall.error(code: -Int(EINVAL), operation: "snd_pcm_hw_params_set_rate", stream: "playback", device: device)
            == .unsupportedFormat(device: device, detail: ErrorDetail("playback_call_failed", ["snd_pcm_hw_params_set_rate", "EINVAL"])))
        #expect(ALSACall.error(code: -Int(EIO), operation: "snd_pcm_readi", stream: "capture", device: device)
            == .io(device: device, operation: "snd_pcm_readi", detail: ErrorDetail("capture_error", ["EIO"])))
        // libasound's own codes have no errno name: snd_strerror's text is the value.
        #expect(ALSACall.errorName(-500_000) != "errno -500000")
        #expect(ALSACall.errorName(-Int(ESTRPIPE)) == "ESTRPIPE")
    }

    @Test(arguments: [
        ("hw:1,0", "1"), ("hw:1", "1"), ("plughw:CARD=Device,DEV=0", "Device"), ("plughw:Device", "Device"),
        ("hw:DEV=0,CARD=2", "2"), ("hw:\"Device\",0", "Device"),
    ])
    func cardArgumentOfDeviceNames(device: String, card: String) {
        #expect(ALSACard.cardArgument(ofDevice: device) == card)
    }

    @Test(arguments: ["default", "null", "grokbench_host", "dmix:0", "hw:"])
    func notCardDevices(device: String) {
        #expect(ALSACard.cardArgument(ofDevice: device) == nil)
    }

    // MARK: Device list

    @Test func listingWorksWithoutACard() {
        let devices = ALSADevices.list()
        #expect(Set(devices.map(\.name)).count == devices.count)
        #expect(!devices.contains { $0.name == "grokbench_host" })
    }

    @Test func listingIncludesConfiguredPCMs() throws {
        let devices = ALSADevices.list(configFile: AudioFixtures.asoundrc)
        let host = try #require(devices.first { $0.name == "grokbench_host" })
        #expect(host.description == "Host jack over FIFOs (ALSA file plugin, no sound card)")
        #expect(host.canPlay && host.canCapture)
        let json = try JSONEncoder().encode(host)
        #expect(try JSONDecoder().decode(ALSADeviceInfo.self, from: json) == host)
    }

    // MARK: A whole session through libasound (file + null plugins over FIFOs)

    static func hostDevice(_ playback: String, _ capture: String) -> String {
        "grokbench_host:PLAYBACK=\"\(playback)\",CAPTURE=\"\(capture)\""
    }

    /// The host plays a pseudo-random signal in chunks of varying size; the device thread
    /// answers with the negation. What the host captures must be exactly its own output,
    /// negated, delayed by the prefilled buffer plus the device's block.
    @Test(arguments: [(256, 4, 100), (64, 2, 441), (128, 3, 1)])
    func fullDuplexSessionOverFIFOs(periodFrames: Int, periods: Int, block: Int) throws {
        let scratch = TemporaryDirectory("grokaudio-test")
        let playbackFIFO = scratch.fifo("host-playback")
        let captureFIFO = scratch.fifo("host-capture")
        let watchdog = DeadlockGuard("FIFO session")
        defer { watchdog.finish() }
        let peer = NegatingPeer(input: playbackFIFO, output: captureFIFO, block: block)

        let host = try ALSAPort(
            device: Self.hostDevice(playbackFIFO, captureFIFO), sampleRate: 44100,
            periodFrames: periodFrames, periods: periods, configFile: AudioFixtures.asoundrc)
        #expect(host.periodFrames == periodFrames)
        #expect(host.bufferFrames == periodFrames * periods)
        #expect(host.jackPlugged == nil)
        #expect(host.name.hasPrefix("alsa:grokbench_host"))

        var random = SplitMix64(seed: UInt64(periodFrames * 31 + block))
        let total = 300 * periodFrames
        let sent = (0..<total).map { _ in Float(random.next() % 60001) / 32767 - 0.9155 }
        var captured = [Float](repeating: 9, count: total)
        let sizes = [periodFrames, periodFrames / 2 + 3, 1, periodFrames * 2 - 5]
        var position = 0
        var turn = 0
        while position < total {
            let count = min(sizes[turn % sizes.count], total - position)
            turn += 1
            try sent.withUnsafeBufferPointer { out in
                try captured.withUnsafeMutableBufferPointer { into in
                    try host.transfer(
                        output: UnsafeBufferPointer(rebasing: out[position..<(position + count)]),
                        input: UnsafeMutableBufferPointer(rebasing: into[position..<(position + count)]))
                }
            }
            position += count
        }
        #expect(host.xrunCount == 0)
        host.close()
        let outcome = peer.join()

        let quantized = sent.map { PCM16.float(PCM16.sample($0)) }
        let delay = host.bufferFrames + block
        let expected = (0..<total).map { $0 < delay ? 0 : -quantized[$0 - delay] }
        let firstWrong = zip(captured, expected).enumerated().first { $0.element.0 != $0.element.1 }
        #expect(firstWrong == nil, "first mismatch at frame \(firstWrong?.offset ?? -1) of \(total)")

        // The device heard the prefill, then what the host played. (How much of the end it
        // heard depends on when the host's close reached it; the host's reads prove it
        // answered at least this much.)
        #expect(outcome.received.count >= total - block)
        #expect(outcome.received.prefix(host.bufferFrames).allSatisfy { $0 == 0 })
        let heard = Array(outcome.received.dropFirst(host.bufferFrames).prefix(total))
        #expect(heard == Array(quantized.prefix(heard.count)))
        #expect(outcome.ending != nil)

        #expect(throws: AudioError.closed(port: host.name)) {
            try [Float](repeating: 0, count: 4).withUnsafeBufferPointer { out in
                var into = [Float](repeating: 0, count: 4)
                try into.withUnsafeMutableBufferPointer { try host.transfer(output: out, input: $0) }
            }
        }
    }

    /// The device hangs up mid-session: the host gets an error, not a hang or a SIGPIPE.
    @Test func deviceHangingUpEndsTheHostsTransfers() throws {
        let scratch = TemporaryDirectory("grokaudio-test")
        let playbackFIFO = scratch.fifo("host-playback")
        let captureFIFO = scratch.fifo("host-capture")
        let watchdog = DeadlockGuard("hang-up session")
        defer { watchdog.finish() }
        let peer = NegatingPeer(input: playbackFIFO, output: captureFIFO, block: 128, stopAfter: 4096)
        let host = try ALSAPort(
            device: Self.hostDevice(playbackFIFO, captureFIFO), periodFrames: 128, periods: 2,
            configFile: AudioFixtures.asoundrc)
        let out = [Float](repeating: 0.25, count: 128)
        var into = [Float](repeating: 0, count: 128)
        var failure: AudioError?
        for _ in 0..<10_000 {
            do {
                try out.withUnsafeBufferPointer { o in
                    try into.withUnsafeMutableBufferPointer { try host.transfer(output: o, input: $0) }
                }
            } catch {
                failure = error as? AudioError
                break
            }
        }
        _ = peer.join()
        let error = try #require(failure)
        guard case .io(let device, _, _) = error else {
            Issue.record("expected an io error, got \(error)")
            return
        }
        #expect(device == Self.hostDevice(playbackFIFO, captureFIFO))
        host.close()
    }

    // MARK: RawPipePort on plain files

    @Test func rawPipePortReadsAndWritesS16LE() throws {
        let scratch = TemporaryDirectory("grokaudio-test")
        let inputPath = scratch.file("in.raw")
        let outputPath = scratch.file("out.raw")
        let values: [Int16] = [0, 1, -1, 32767, -32767, 1234, -4321, 77]
        let bytes = values.flatMap { [UInt8(truncatingIfNeeded: $0), UInt8(truncatingIfNeeded: $0 >> 8)] }
        try Data(bytes).write(to: URL(fileURLWithPath: inputPath))

        let port = try RawPipePort(inputPath: inputPath, outputPath: outputPath, sampleRate: 48000)
        #expect(port.sampleRate == 48000)
        #expect(port.jackPlugged == nil)
        let out: [Float] = [0.5, -0.5, 1, -1, 2, 0, 0.25, -0.25]
        var into = [Float](repeating: 0, count: 8)
        try out.withUnsafeBufferPointer { o in
            try into.withUnsafeMutableBufferPointer { try port.transfer(output: o, input: $0) }
        }
        #expect(into == values.map { PCM16.float($0) })
        // The input is used up: end of file closes the link.
        #expect(throws: AudioError.closed(port: port.name)) {
            try out.withUnsafeBufferPointer { o in
                try into.withUnsafeMutableBufferPointer { try port.transfer(output: o, input: $0) }
            }
        }
        port.close()
        let written = try Data(contentsOf: URL(fileURLWithPath: outputPath))
        let samples = stride(from: 0, to: written.count, by: 2).map {
            Int16(bitPattern: UInt16(written[$0]) | UInt16(written[$0 + 1]) << 8)
        }
        #expect(Array(samples.prefix(8)) == [16384, -16384, 32767, -32767, 32767, 0, 8192, -8192])
    }

    @Test func rawPipePortNeedsItsInput() {
        let scratch = TemporaryDirectory("grokaudio-test")
        #expect {
            _ = try RawPipePort(inputPath: scratch.file("missing"), outputPath: scratch.file("out"))
        } throws: { error in
            guard case .file(let path, let detail) = error as? AudioError else { return false }
            return path == scratch.file("missing") && detail == ErrorDetail("open_failed", ["ENOENT"])
        }
    }
}
