import Foundation
import GrokLedger
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

extension CLI {
    @Suite("Ledger commands on a damaged ledger", .serialized)
    struct LedgerCommandTests {
        @Test("check passes a sound ledger; a damaged one is refused by show, export and provision with the recovery hint, never written; recover salvages it")
        func damagedLedger() throws {
            let world = try FleetWorld(devices: 2)
            let first = try world.provision(devices: "sim:0-1")
            #expect(first.status == 0, "\(first.standardError)")
            let check = try world.run(["ledger", "check"])
            #expect(check.status == 0 && check.standardOutput.contains("is sound"), "\(check.standardOutput)\(check.standardError)")
            #expect(!FileManager.default.fileExists(atPath: world.ledger + "-wal") || true)

            // The last page of the file overwritten (a page of rows or of an index).
            var bytes = try #require(FileManager.default.contents(atPath: world.ledger).map { [UInt8]($0) })
            let pages = bytes.count / 4096
            for i in 0..<4096 { bytes[(pages - 1) * 4096 + i] = UInt8(truncatingIfNeeded: i &* 131 &+ 7) }
            try Data(bytes).write(to: URL(fileURLWithPath: world.ledger))
            let wal = FileManager.default.contents(atPath: world.ledger + "-wal")

            for arguments in [["ledger", "show"], ["ledger", "export", "--csv"], ["ledger", "check"]] {
                let result = try world.run(arguments)
                #expect(result.status == 1, "\(arguments): \(result.standardOutput)")
                #expect(result.standardError.contains("grokctl ledger recover --ledger \(world.ledger)"), "\(arguments): \(result.standardError)")
            }
            let before = world.deviceBytes(2)
            let again = try world.provision(devices: "sim:0-1")
            #expect(again.status != 0)
            #expect(again.standardError.contains("grokctl ledger recover"), "\(again.standardError)")
            #expect(FileManager.default.contents(atPath: world.ledger).map { [UInt8]($0) } == bytes, "the damaged ledger was written to")
            #expect(FileManager.default.contents(atPath: world.ledger + "-wal") == wal)
            #expect(world.deviceBytes(2) == before, "a run went ahead on a damaged ledger")

            let recover = try world.run(["ledger", "recover"])
            #expect(recover.status == 0 || recover.status == 1, "\(recover.standardError)")
            #expect(recover.standardOutput.contains("Salvaged") && recover.standardOutput.contains("To use it"), "\(recover.standardOutput)")
            #expect(recover.standardOutput.contains("What was wrong"))
            let recovered = world.ledger + ".recovered"
            let checked = try world.run(["ledger", "check", "--ledger", recovered])
            #expect(checked.status == 0, "\(checked.standardError)")
            #expect(FileManager.default.contents(atPath: world.ledger).map { [UInt8]($0) } == bytes)
            // A second recover refuses to overwrite the first one's file.
            #expect(try world.run(["ledger", "recover"]).status == 1)
        }

        @Test("four grokctl processes on disjoint Grokkers creating one new ledger at once all succeed, and every run is closed")
        func fourProcessesNewLedger() throws {
            let world = try FleetWorld(devices: 4)
            let processes = try (0..<4).map { n -> Process in
                let process = Process()
                process.executableURL = try grokctlExecutable()
                process.arguments = ["provision", "--profile", FleetWorld.profile, "--device", "sim:\(n)", "--unattended"] + world.common
                process.environment = ["PATH": "/usr/bin:/bin"].merging(world.environment) { $1 }
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                process.standardInput = FileHandle.nullDevice
                return process
            }
            for process in processes { try process.run() }
            for process in processes { process.waitUntilExit() }
            #expect(processes.map(\.terminationStatus) == [0, 0, 0, 0])
            let ledger = try GrokLedger.Ledger.open(path: world.ledger, readOnly: true)
            let runs = try ledger.runs()
            #expect(runs.count == 4 && runs.allSatisfy { $0.outcome == .succeeded }, "\(runs)")
            #expect(try ledger.devices().count == 4)
        }

        @Test("an empty ledger file is refused by every command and stays empty")
        func emptyLedger() throws {
            let world = try FleetWorld(devices: 1)
            try FileManager.default.createDirectory(atPath: world.state + "/grokctl", withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: world.ledger, contents: Data()))
            let show = try world.run(["ledger", "show"])
            #expect(show.status == 1 && show.standardError.contains("empty"), "\(show.standardError)")
            let run = try world.provision(devices: "sim:0")
            #expect(run.status != 0)
            #expect(FileManager.default.contents(atPath: world.ledger) == Data())
        }
    }
}
