@testable import GrokCLI
import GrokAudio
import GrokkerEmulator
import GrokLink
import Testing
import UGrokIt

/// Every library error a command can surface has a catalog key in all four languages, with
/// exactly the placeholders its arguments fill.
@Suite("Library error messages")
struct LibraryErrorTests {
    static func check(_ samples: [any CodedError]) {
        for sample in samples {
            let key = MessageKey(errorCode: sample.code)
            #expect(key != nil, "no catalog key error.\(sample.code)")
            guard let key else { continue }
            #expect(Catalogs.placeholders(in: Localizer.english.text(key)) == Set(0..<sample.arguments.count), "\(sample.code)")
            for language in Language.allCases {
                let message = Localizer(language: language).message(for: sample)
                for argument in sample.arguments { #expect(message.contains(argument), "\(language) \(sample.code)") }
                #expect(!message.contains("{"), "\(language) \(sample.code): \(message)")
            }
        }
    }

    @Test func readerErrors() {
        let samples: [ReaderError] = [
            .notPluggedIn(port: "sim:1"), .cannotHandshake(port: "sim:1", seconds: 3), .cannotGetInfo(port: "sim:1"),
            .incompatibleReader(port: "sim:1", detail: "link protocol"), .timeout(port: "sim:1", command: "identify", seconds: 5),
            .lostConnection(port: "sim:1"), .rejected(port: "sim:1", command: "identify", status: "busy"),
            .audio(.closed(port: "sim:1")), .link(.notConnected), .malformedResponse(port: "sim:1", detail: "x"), .unknownRegion("mars"), .regionNotSet(port: "sim:4"),
            .firmwareDoesNotSupportSetRegion(port: "sim:4", firmware: "1.4.2"), .regionNotApproved(port: "sim:4", region: "China"), .noInventoryRunning(port: "sim:4"), .inventoryRunning(port: "sim:4"),
            .oddTagMemoryBytes(field: "offset", value: 3), .invalidArgument(field: "volume", value: "1.5", allowed: "0 to 1"),
            .authenticationRequired(port: "sim:2"),
        ]
        // Exhaustive: a new case fails to compile here until it gets a sample and keys.
        for sample in samples {
            switch sample {
            case .notPluggedIn, .cannotHandshake, .cannotGetInfo, .incompatibleReader, .timeout, .lostConnection,
                .rejected, .audio, .link, .malformedResponse, .unknownRegion, .regionNotSet, .firmwareDoesNotSupportSetRegion, .regionNotApproved, .noInventoryRunning, .inventoryRunning, .oddTagMemoryBytes, .invalidArgument,
                .authenticationRequired: break
            }
        }
        Self.check(samples)
        #expect(Localizer(language: .es).message(for: ReaderError.cannotHandshake(port: "alsa:hw:1,0", seconds: 3))
            .hasPrefix("Ningún Grokker respondió en alsa:hw:1,0"))
    }

    @Test func linkErrors() {
        let samples: [LinkError] = [.notConnected, .messageTooLarge(size: 70_000, limit: 65_536), .queueFull(limit: 1_048_576)]
        for sample in samples {
            switch sample {
            case .notConnected, .messageTooLarge, .queueFull: break
            }
        }
        Self.check(samples)
    }

    @Test func emulatorErrors() {
        let samples: [EmulatorError] = [
            .directory(path: "/b/sim-0", detail: "denied"), .stateUnreadable(path: "/b/sim-0/state.json", detail: "denied"),
            .stateCorrupt(path: "/b/sim-0/state.json", detail: "not JSON"),
            .stateTooNew(path: "/b/sim-0/state.json", format: 9, supported: 1),
            .stateWriteFailed(path: "/b/sim-0/state.json", detail: "disk full"),
            .scene(path: "/b/sim-0/scene.json", detail: "tags[3].epc: expected hex"),
            .flash(path: "/b/sim-0/flash.bin", detail: "the flash file has 10 bytes, this hardware has 278528"),
        ]
        for sample in samples {
            switch sample {
            case .directory, .stateUnreadable, .stateCorrupt, .stateTooNew, .stateWriteFailed, .scene, .flash: break
            }
        }
        Self.check(samples)
    }
}
