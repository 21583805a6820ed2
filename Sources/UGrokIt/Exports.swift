// `import UGrokIt` is all an app needs, as the vendor's one header was: the SDK's public API
// speaks in the protocol's value types (regions, EPCs, firmware and reader versions,
// inventory types, sounds), opens audio ports (ALSA cards, pipes, recordings), takes
// firmware images and channels, and uses Foundation's Date and Data; all of them come with
// it. Protocol *work* (encoding commands, decoding packets) stays behind ReaderSession.
@_exported import Foundation
@_exported import GrokAudio
@_exported import GrokFirmware
@_exported import GrokProtocol
