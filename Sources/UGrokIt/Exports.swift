// The SDK's public API speaks in the protocol's value types (regions, EPCs, firmware and
// reader versions, inventory types, sounds): an app, like the vendor's, imports one module.
// Protocol *work* (encoding commands, decoding packets) stays behind ReaderSession.
@_exported import GrokProtocol
