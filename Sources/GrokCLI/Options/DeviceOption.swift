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
