extension UgiEpc {
    /// Vendor `UgiEpc(fromString:)` / `epcFromString:`: hex digits in either case, as
    /// ``init(hex:)``.
    public init(fromString string: String) throws(EpcError) {
        try self.init(hex: string)
    }
}
