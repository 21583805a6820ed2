import UGrokIt

/// What a device job (info, inventory, region) got from one Grokker: the value it wanted,
/// or the error that stopped it there. The other devices of the job go on either way.
public struct DeviceResult<Value: Sendable>: Sendable {
    /// The device as given (`--device`).
    public var device: DeviceSpec
    public var outcome: Result<Value, any Error>

    public init(device: DeviceSpec, outcome: Result<Value, any Error>) {
        self.device = device
        self.outcome = outcome
    }

    /// The value, when the device answered.
    public var value: Value? { try? outcome.get() }

    /// The error, when it did not.
    public var error: (any Error)? {
        if case .failure(let error) = outcome { error } else { nil }
    }
}

/// What every device job needs: how to open a port (under its lock, as every device
/// command does) and the link's options.
public struct DeviceAccess: Sendable {
    public var ports: DevicePortContext
    public var readerOptions: ReaderOptions

    public init(ports: DevicePortContext, readerOptions: ReaderOptions = ReaderOptions()) {
        self.ports = ports
        self.readerOptions = readerOptions
    }

    /// Opens `spec`'s port under its lock and a session on it (not yet connected); the
    /// caller closes the session, which releases the lock.
    public func session(_ spec: DeviceSpec) throws -> ReaderSession {
        try ReaderSession(port: try DevicePorts.open(spec, context: ports), options: readerOptions)
    }

    /// Opens `spec`, connects at its setting (``connect(_:_:)``), runs `body` and closes the
    /// session whatever happens.
    public func connected<Value>(_ spec: DeviceSpec, _ body: (ReaderSession, ReaderInfo) throws -> Value) throws -> Value {
        let session = try session(spec)
        defer { session.close() }
        let info = try connect(session, spec).info
        return try body(session, info)
    }

    /// Connects `session` (opened on `spec`) at the setting the station remembers for its
    /// Grokker or sound-card model, running AutoConfig where none works or none is known
    /// (``LinkSetup``), and remembers what it learned.
    /// - Throws: the session's ``ReaderError``; ``FleetError/linkSettingsNotWritten(file:detail:)``.
    public func connect(_ session: ReaderSession, _ spec: DeviceSpec) throws -> LinkSetup.Outcome {
        try LinkSetup.connect(session, cardModel: soundCardModel(spec, sysfs: ports.sysfs), remembering: ports.linkSettings)
    }
}
