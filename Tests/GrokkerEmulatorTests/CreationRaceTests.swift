import Foundation
import GrokAudio
import GrokBasics
import GrokTestSupport
import Synchronization
import Testing

@testable import GrokkerEmulator

@Suite("Creating an emulated Grokker")
struct CreationRaceTests {
    @Test("openers racing on a new unit all get the one identity that was saved, and leave no temp file")
    func racingOpenersShareOneIdentity() throws {
        let temp = TemporaryDirectory("grok-emulator-tests")
        defer { temp.remove() }
        let openers = 6
        for trial in 0..<12 {
            let unit = temp.file("unit-\(trial)")
            let serials = Mutex([UInt32?](repeating: nil, count: openers))
            let failures = Mutex([String]())
            let ready = Atomic<Int>(0)
            let group = DispatchGroup()
            for opener in 0..<openers {
                group.enter()
                Thread {
                    // Each with its own generator: without one creator, each would pick its own serial.
                    var generator = SplitMix64(seed: UInt64(trial * 100 + opener + 1))
                    ready.add(1, ordering: .relaxed)
                    while ready.load(ordering: .relaxed) < openers { sched_yield() }
                    do {
                        let store = try DeviceStateStore.openOrCreate(deviceDirectory: unit, using: &generator)
                        serials.withLock { $0[opener] = store.state.serialNumber }
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                    group.leave()
                }.start()
            }
            group.wait()
            #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
            let seen = Set(serials.withLock { $0 }.compactMap { $0 })
            #expect(seen.count == 1, "trial \(trial): serials \(seen.sorted())")
            var generator = SplitMix64(seed: 999)
            let saved = try DeviceStateStore.openOrCreate(deviceDirectory: unit, using: &generator).state.serialNumber
            #expect(seen == [saved], "trial \(trial): the openers' serial is the one saved")
            let left = try FileManager.default.contentsOfDirectory(atPath: unit).filter { $0 != DeviceStateStore.fileName }
            #expect(left.isEmpty, "trial \(trial): left \(left)")
        }
    }

    @Test("units opened at once on a new directory share one state and one flash.bin, all running the same application, and leave no temp file")
    func racingUnitsShareOneFlash() throws {
        let temp = TemporaryDirectory("grok-emulator-tests")
        defer { temp.remove() }
        let openers = 4
        let versions = Mutex([String]())
        let failures = Mutex([String]())
        let ready = Atomic<Int>(0)
        let group = DispatchGroup()
        for opener in 0..<openers {
            group.enter()
            Thread {
                var generator = SplitMix64(seed: UInt64(opener + 1))
                ready.add(1, ordering: .relaxed)
                while ready.load(ordering: .relaxed) < openers { sched_yield() }
                do {
                    let store = try DeviceStateStore.openOrCreate(deviceDirectory: temp.file("unit"), using: &generator)
                    let unit = try EmulatedGrokker(store: store)
                    versions.withLock { $0.append("\(store.state.serialNumber) \(unit.loader.runningVersion)") }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
                group.leave()
            }.start()
        }
        group.wait()
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        #expect(Set(versions.withLock { $0 }).count == 1, "\(versions.withLock { $0 })")
        let left = try FileManager.default.contentsOfDirectory(atPath: temp.file("unit")).sorted()
        #expect(left == ["flash.bin", "state.json"], "left \(left)")
    }
}
