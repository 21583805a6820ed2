import Foundation
import GrokAudio
import GrokFleet
import GrokTestSupport
import Testing

/// `grokctl emulate`'s ends (``EmulatorJob/Ends``): files and FIFOs, or sound devices named
/// as `--device` names them.
@Suite("Emulator ends")
struct EmulatorJobTests {
    @Test("alsa: and usb: names are sound devices, anything else a file; a sound device with a file is refused naming both")
    func endsAreParsed() throws {
        #expect(try EmulatorJob.Ends.parse(input: "to-grokker", output: "-") == .files(input: "to-grokker", output: "-"))
        #expect(try EmulatorJob.Ends.parse(input: "alsa:pulse:host_out.monitor", output: "usb:1-1.4")
            == .sound(input: .alsa(name: "pulse:host_out.monitor"), output: .usb(path: "1-1.4")))
        #expect(throws: FleetError.emulatorEndsMixed(input: "alsa:hw:1,0", output: "from-grokker")) {
            try EmulatorJob.Ends.parse(input: "alsa:hw:1,0", output: "from-grokker")
        }
        #expect(throws: FleetError.invalidDevice("usb:not a port")) {
            try EmulatorJob.Ends.parse(input: "alsa:pulse", output: "usb:not a port")
        }
    }

    @Test("a sound device that cannot be opened is an error naming it, and nothing is left open")
    func missingDeviceIsNamed() throws {
        let temp = TemporaryDirectory("grok-emulator-ends")
        defer { temp.remove() }
        let job = try EmulatorJob(stateDirectory: temp.file("unit"), sampleRate: 44_100)
        let ends = try EmulatorJob.Ends.parse(input: "alsa:grok_no_such_pcm", output: "alsa:grok_no_such_pcm")
        let error = #expect(throws: AudioError.self) { try job.open(ends, recordAudio: nil) }
        guard case .deviceNotFound(let device, _)? = error else {
            Issue.record("expected deviceNotFound, got \(String(describing: error))")
            return
        }
        #expect(device == "grok_no_such_pcm")
    }
}
