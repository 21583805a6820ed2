import Testing

@testable import GrokCLI

extension CLI {
    @Suite("Device specs")
    struct DeviceSpecTests {
        @Test func validSpecs() throws {
            #expect(try DeviceSpec.parse("sim:0") == [.emulated(index: 0)])
            #expect(try DeviceSpec.parse("sim:63") == [.emulated(index: 63)])
            #expect(try DeviceSpec.parse("sim:2-4") == [2, 3, 4].map { .emulated(index: $0) })
            #expect(try DeviceSpec.parse("sim:5-5") == [.emulated(index: 5)])
            #expect(try DeviceSpec.parse("alsa:hw:1,0") == [.alsa(name: "hw:1,0")])
            #expect(try DeviceSpec.parse("alsa:plughw:CARD=Device") == [.alsa(name: "plughw:CARD=Device")])
            #expect(try DeviceSpec.parse("alsa:default") == [.alsa(name: "default")])
            #expect(DeviceSpec.alsa(name: "hw:1,0").description == "alsa:hw:1,0")
            #expect(DeviceSpec.emulated(index: 7).description == "sim:7")
            #expect(try DeviceSpec.parse("pcm:/run/g/out,/run/g/in") == [.pipe(input: "/run/g/out", output: "/run/g/in")])
            #expect(DeviceSpec.pipe(input: "a", output: "b").description == "pcm:a,b")
        }

        @Test func rawPCMSpecsKeepTheirCommaInLists() throws {
            #expect(try DeviceSpec.parseList(["sim:0,pcm:a,b,alsa:hw:1,0"])
                    == [.emulated(index: 0), .pipe(input: "a", output: "b"), .alsa(name: "hw:1,0")])
        }

        @Test func listsRepeatAndSplitOnlyWhereASpecStarts() throws {
            #expect(
                try DeviceSpec.parseList(["sim:0,sim:1", "alsa:hw:1,0,sim:2"])
                    == [.emulated(index: 0), .emulated(index: 1), .alsa(name: "hw:1,0"), .emulated(index: 2)])
            #expect(try DeviceSpec.parseList(["sim:0-1,alsa:hw:2,0"]) == [.emulated(index: 0), .emulated(index: 1), .alsa(name: "hw:2,0")])
            #expect(DeviceSpec.split("alsa:hw:1,0,alsa:plughw:2,0") == ["alsa:hw:1,0", "alsa:plughw:2,0"])
        }

        @Test(arguments: ["", "sim:", "sim:x", "sim:-1", "sim:3-1", "sim:1-", "sim:1-2-3", "sim:+1", "sim: 1", "usb:1",
                          "alsa:", "alsa:a b", "sim:1,2", "pcm:", "pcm:a", "pcm:a,", "pcm:,b", "pcm:a,a", "pcm:a,b,c", "SIM:1", "sim:0,", ",sim:0"])
        func invalidSpecs(_ spec: String) {
            #expect(throws: CLIError.self) { try DeviceSpec.parseList([spec]) }
            do {
                _ = try DeviceSpec.parseList([spec])
            } catch {
                #expect(error.code == "usage_invalid_device", "\(spec)")
                #expect(error.isUsageError)
            }
        }

        @Test func outOfRange() {
            #expect(throws: CLIError.deviceOutOfRange(index: "64", spec: "sim:64")) { try DeviceSpec.parse("sim:64") }
            #expect(throws: CLIError.deviceOutOfRange(index: "70", spec: "sim:0-70")) { try DeviceSpec.parse("sim:0-70") }
            #expect(throws: CLIError.deviceOutOfRange(index: "99999999999999999999999", spec: "sim:99999999999999999999999")) {
                try DeviceSpec.parse("sim:99999999999999999999999")
            }
        }

        @Test func duplicatesAreRejectedEvenThroughRanges() {
            #expect(throws: CLIError.duplicateDevice("sim:1")) { try DeviceSpec.parseList(["sim:1", "sim:1"]) }
            #expect(throws: CLIError.duplicateDevice("sim:2")) { try DeviceSpec.parseList(["sim:0-3,sim:2"]) }
            #expect(throws: CLIError.duplicateDevice("alsa:hw:1,0")) { try DeviceSpec.parseList(["alsa:hw:1,0", "alsa:hw:1,0"]) }
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
