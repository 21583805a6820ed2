import GrokCommandLine
import GrokFleet

extension DeviceSpec {
    /// The values of a repeatable `--device` option through the library's parser
    /// (``DeviceSpec/parseList(_:)``); a wrong one is a usage error (exit 64).
    static func parseOption(_ values: [String]) throws(CLIError) -> [DeviceSpec] {
        do throws(FleetError) {
            return try parseList(values)
        } catch {
            throw .devices(error)
        }
    }
}

extension CLIError {
    /// Devices named wrong (`--device`): a spec that is not one, a number out of range, a
    /// device named twice (``FleetError/invalidDevice(_:)``, ``FleetError/deviceOutOfRange(index:spec:)``,
    /// ``FleetError/duplicateDevice(_:)``); its code and arguments are the library's.
    static func devices(_ error: FleetError) -> CLIError {
        .coded(code: error.code, arguments: error.arguments)
    }
}
