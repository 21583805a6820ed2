import Foundation
@testable import GrokFleet
import GrokkerEmulator
import GrokLedger
import GrokTestSupport
import Testing
import UGrokIt

/// `grokctl devices --probe` (issue 22, item 6): who answers on every port at once.
@Suite("Device probe")
struct ProbeJobTests {
    @Test("every port at once: a known Grokker answers at its stored setting, a port another grokctl holds is busy and untouched, a silent line is no answer")
    func probesEveryPort() throws {
        let bench = FleetBench()
        var access = DeviceJobTests.access(bench)
        access.readerOptions.handshakeTimeout = 1
        let serial = String(format: "%08d", try bench.prepare(0, serial: 4242).state.serialNumber)
        try bench.prepare(1, serial: 4343)
        try LinkSettingTests.file(bench).add([
            LinkSettingRecord(subject: .serial(serial), samplesPerBit: 10, sampleRate: 44_100, reason: .autoconfig,
                              station: "other", recordedAt: Date(timeIntervalSince1970: 1_000))])
        // Another grokctl holds sim:1: the probe must not wait for it, nor talk to it.
        let held = try DevicePorts.acquire(directory: bench.lockDirectory, key: DevicePorts.portKey(.emulated(index: 1), context: access.ports),
                                           device: "sim:1", wait: 0)
        defer { held.unlock() }
        let before = try bench.state(1)

        let silent = TemporaryDirectory("probe-silent")
        let line = DeviceSpec.pipe(input: "/dev/zero", output: silent.path + "/out.raw")
        let findings = ProbeJob(access: access).run([.emulated(index: 0), .emulated(index: 1), line])

        #expect(findings.map(\.device) == [.emulated(index: 0), .emulated(index: 1), line])
        guard case .grokker(let identity) = findings[0].answer else {
            Issue.record("sim:0 did not answer: \(findings[0].answer)")
            return
        }
        #expect(identity.serial == serial && identity.samplesPerBit == 10 && identity.settingSource == .stored && !identity.inLoader)
        guard case .busy(let busy) = findings[1].answer, case FleetError.deviceBusy(let device, let pid, _, _) = busy else {
            Issue.record("sim:1 not busy: \(findings[1].answer)")
            return
        }
        #expect(device == "sim:1" && pid == String(getpid()))
        #expect(try bench.state(1) == before)
        guard case .silent(let error) = findings[2].answer else {
            Issue.record("the silent line: \(findings[2].answer)")
            return
        }
        #expect(DeviceJobTests.code(error) == "reader_cannot_handshake")
        #expect(findings.map(\.answer.status) == ["answered", "busy", "no_answer"])
    }

    @Test("the ports probed: each duplex card once, by its usb: name where on USB, else hw:; not default or pulse; then the bench")
    func portsProbed() {
        let usb = USBSoundCard(card: 1, path: "1-1.4", vendorProduct: "0d8c:0014", name: nil, cardID: "Device")
        func card(_ name: String, play: Bool = true, capture: Bool = true, usb: USBSoundCard? = nil) -> SoundCard {
            SoundCard(device: .alsa(name: name), description: name, canPlay: play, canCapture: capture, mixer: nil, levels: nil,
                      jackPlugged: nil, usb: usb)
        }
        let cards = [card("default"), card("pulse"), card("hw:0,0"), card("hw:0,3", capture: false),
                     card("hw:1,0", usb: usb), card("plughw:1,0", usb: usb), card("sysdefault:CARD=Device", usb: usb)]
        #expect(ProbeJob.ports(cards: cards, emulated: [0, 2])
            == [.alsa(name: "hw:0,0"), .usb(path: "1-1.4"), .emulated(index: 0), .emulated(index: 2)])
    }
}
