import Foundation
import GrokLedger
import PostgresTestSupport
import Testing

extension CLI {
    /// `ledger show`, `ledger export` and `ledger check` on the shared ledger (the test
    /// cluster): they read every station's records and write nothing.
    @Suite("Ledger commands on a shared ledger", .serialized)
    struct SharedLedgerReadTests {
        @Test("ledger show lists every station's runs and devices, one run by its key, one Grokker's history across stations")
        func show() throws {
            let fixture = try SharedFleetFixture.get()
            let all = try fixture.run(["ledger", "show", "--ledger", fixture.uri, "--json"])
            #expect(all.status == 0, "\(all.standardError)")
            let runs = jsonRecords(all.standardOutput, "run")
            #expect(Set(runs.compactMap { $0["station"] as? String }) == ["bench-0", "bench-1"], "\(runs)")
            let devices = jsonRecords(all.standardOutput, "device")
            #expect(Set(devices.compactMap { $0["serial"] as? String }) == Set(fixture.serials.flatMap { $0 }))
            let key = try #require(runs.first { $0["station"] as? String == "bench-1" }?["id"] as? String)
            let one = try fixture.run(["ledger", "show", key, "--ledger", fixture.uri])
            #expect(one.status == 0 && one.standardOutput.contains(key) && one.standardOutput.contains("bench-1"), "\(one.standardOutput)\(one.standardError)")
            let serial = fixture.serials[1][0]
            let history = try fixture.run(["ledger", "show", "--serial", serial, "--ledger", fixture.uri])
            #expect(history.status == 0 && history.standardOutput.contains("1.7.3 → 1.8.0"), "\(history.standardOutput)\(history.standardError)")
            let missing = try fixture.run(["ledger", "show", "nope-run", "--ledger", fixture.uri])
            #expect(missing.status == 1 && missing.standardError.contains("nope-run"))
        }

        @Test("ledger export of the shared ledger has every table, the schema 5 ones too, with the station of every record")
        func export() throws {
            let fixture = try SharedFleetFixture.get()
            let result = try fixture.run(["ledger", "export", "--json", "--ledger", fixture.uri])
            #expect(result.status == 0, "\(result.standardError)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
            #expect(object["format"] as? String == "grokctl-ledger")
            for table in ["devices", "runs", "steps", "smoke_tests", "intents", "rollout_stages", "stage_events", "rollout_results"] {
                #expect(object[table] is [Any], "no \(table)")
            }
            let cluster = PostgresCluster.shared
            func count(_ table: String) throws -> Int {
                Int(try cluster.psql(fixture.database, "SELECT count(*) FROM \(table)").trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
            }
            for table in ["steps", "smoke_tests", "rollout_results", "stage_events"] {
                #expect((object[table] as? [Any])?.count == (try count(table)), "\(table)")
            }
            let steps = try #require(object["steps"] as? [[String: Any]])
            #expect(Set(steps.compactMap { $0["station"] as? String }) == ["bench-0", "bench-1"])
            let results = try #require(object["rollout_results"] as? [[String: Any]])
            #expect(results.map { $0["outcome"] as? String } == ["succeeded", "failed", "failed", "succeeded"])
            #expect(results.first?["percentage"] as? Double == 100)
            let stage = try #require((object["rollout_stages"] as? [[String: Any]])?.first)
            #expect(stage["state"] as? String == "halted" && stage["tripped_by"] as? String == "bench-1")

            let csv = try fixture.run(["ledger", "export", "--csv", "--table", "rollout_results", "--ledger", fixture.uri])
            #expect(csv.status == 0, "\(csv.standardError)")
            let lines = csv.standardOutput.components(separatedBy: "\r\n").filter { !$0.isEmpty }
            #expect(lines.first == "id,rollout_id,run_id,station,serial,percentage,outcome,hardware_revision,firmware_after,finished_at,run_key")
            #expect(lines.count == 5)
        }

        @Test("ledger check on the shared ledger: sound, then a run left open by a dead station is found (exit 1) and left as it was")
        func check() throws {
            let cluster = PostgresCluster.shared
            let database = try cluster.newDatabase("check")
            let uri = cluster.uri(database)
            // An empty database is no ledger yet, and reading it creates nothing.
            let world = try FleetWorld(devices: 1)
            let empty = try world.run(["ledger", "check", "--ledger", uri])
            #expect(empty.status == 1 && empty.standardError.contains(database), "\(empty.standardError)")
            #expect(try cluster.psql(database, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
                .trimmingCharacters(in: .whitespacesAndNewlines) == "0", "reading an empty database created tables")
            let station = try PostgresLedger.open(uri, station: "bench-9")
            let run = try station.beginRun(RunStart(kind: .provision, profileName: "bench-us", profileSHA256: String(repeating: "ab", count: 32),
                                                    station: "bench-9", operatorName: "Zoë", startedAt: Date()))
            let sound = try world.run(["ledger", "check", "--ledger", uri])
            #expect(sound.status == 0, "a run its live station holds is fine: \(sound.standardOutput)\(sound.standardError)")
            let key = try #require(try station.run(run)?.key)
            station.close()   // the station's session ends with its run open: as if it died
            let dead = try world.run(["ledger", "check", "--ledger", uri, "--json"])
            #expect(dead.status == 1, "\(dead.standardOutput)\(dead.standardError)")
            let report = try #require(jsonRecords(dead.standardOutput, "check").first)
            #expect(report["open_runs_dead"] as? [String] == [key], "\(report)")
            #expect(report["schema_version"] as? Int == 8)
            #expect(try cluster.psql(database, "SELECT count(*) FROM runs WHERE ended_at IS NULL")
                .trimmingCharacters(in: .whitespacesAndNewlines) == "1", "check closed the run: it must only read")
            let text = try world.run(["--lang", "de", "ledger", "check", "--ledger", uri])
            #expect(text.status == 1 && text.standardOutput.contains(key), "\(text.standardOutput)")
        }
    }
}
