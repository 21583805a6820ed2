import GrokFleet
import Testing
import UGrokIt

/// Sets `region` (a code: `fcc`) on emulated Grokkers of the bench at `bench` through the
/// library (what `region set` does, without spawning the binary), for tests whose subject is
/// another command's output.
func setRegion(_ region: String, bench: String, devices: [DeviceSpec]) throws {
    let region = try #require(RegionCatalog.find(region))
    let access = DeviceAccess(ports: DevicePortContext(bench: Bench(directory: bench)))
    let results = RegionJob(access: access, region: region).run(devices)
    try #require(results.allSatisfy { $0.error == nil }, "\(results.map { String(describing: $0.error) })")
}
