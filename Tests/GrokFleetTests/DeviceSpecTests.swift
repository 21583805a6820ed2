import Testing

@testable import GrokFleet

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
        #expect(throws: FleetError.self) { try DeviceSpec.parseList([spec]) }
        do {
            _ = try DeviceSpec.parseList([spec])
        } catch {
            #expect(error.code == "usage_invalid_device", "\(spec)")
        }
    }

    @Test("a spec without its scheme is refused with the spec meant: hw:1,0 is alsa:hw:1,0, 3 is sim:3",
          arguments: [("hw:1,0", "alsa:hw:1,0"), ("plughw:2,0", "alsa:plughw:2,0"), ("default", "alsa:default"), ("3", "sim:3"),
                      ("sim3", "sim:3"), ("sim-12", "sim:12")])
    func specWithoutSchemeSuggestsIt(_ spec: String, _ meant: String) {
        #expect(throws: FleetError.deviceWithoutScheme(spec: spec, suggestion: meant)) { try DeviceSpec.parseList([spec]) }
    }

    @Test func outOfRange() {
        #expect(throws: FleetError.deviceOutOfRange(index: "64", spec: "sim:64")) { try DeviceSpec.parse("sim:64") }
        #expect(throws: FleetError.deviceOutOfRange(index: "70", spec: "sim:0-70")) { try DeviceSpec.parse("sim:0-70") }
        #expect(throws: FleetError.deviceOutOfRange(index: "99999999999999999999999", spec: "sim:99999999999999999999999")) {
            try DeviceSpec.parse("sim:99999999999999999999999")
        }
    }

    @Test func duplicatesAreRejectedEvenThroughRanges() {
        #expect(throws: FleetError.duplicateDevice("sim:1")) { try DeviceSpec.parseList(["sim:1", "sim:1"]) }
        #expect(throws: FleetError.duplicateDevice("sim:2")) { try DeviceSpec.parseList(["sim:0-3,sim:2"]) }
        #expect(throws: FleetError.duplicateDevice("alsa:hw:1,0")) { try DeviceSpec.parseList(["alsa:hw:1,0", "alsa:hw:1,0"]) }
    }
}
