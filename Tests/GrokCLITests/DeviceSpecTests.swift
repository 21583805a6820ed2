import GrokFleet
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

extension CLI {
    @Suite("Device specs")
    struct DeviceSpecTests {
        @Test(arguments: ["", "sim:x", "usb:1", "pcm:a,a", "sim:64", "sim:1,sim:1"])
        func wrongDevicesAreUsageErrors(_ spec: String) {
            #expect(throws: CLIError.self) { try DeviceSpec.parseOption([spec]) }
            do {
                _ = try DeviceSpec.parseOption([spec])
            } catch {
                #expect(error.code.hasPrefix("usage_"), "\(spec)")
                #expect(error.isUsageError)
            }
        }

        @Test func badDeviceOnTheCommandLineIsALocalizedUsageError() {
            let result = runInProcess(["info", "--device", "usb:3"], environment: ["LANG": "es_ES.UTF-8"])
            #expect(result.status == 64)
            #expect(result.standardOutput == "")
            let lines = result.standardError.split(separator: "\n").map(String.init)
            #expect(lines.first == "Error: " + text(.errorInvalidDevice, .es, "usb:3"))
            #expect(lines.first?.contains("sim:A-B") == true)
            #expect(lines.dropFirst().first == "Uso: grokctl info --device <dispositivo> ... [<opciones>]")
        }

        @Test func infoCommandReadsItsDevices() throws {
            var values = ParsedValues()
            values.record(InfoCommand.device, "sim:3-4")
            values.record(InfoCommand.device, "alsa:hw:1,0")
            #expect(try InfoCommand(values).devices == [.emulated(index: 3), .emulated(index: 4), .alsa(name: "hw:1,0")])
        }

        @Test func emulateCommandReadsItsOptions() throws {
            var values = ParsedValues()
            values.record(EmulateCommand.state, "/s")
            values.record(EmulateCommand.input, "/in")
            values.record(EmulateCommand.output, "/out")
            let defaulted = try EmulateCommand(values)
            #expect(defaulted.sampleRate == 44100)
            #expect(defaulted.stateDirectory == "/s")
            values.record(EmulateCommand.rate, "48000")
            #expect(try EmulateCommand(values).sampleRate == 48000)
        }
    }
}
