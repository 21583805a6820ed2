internal import CALSA
import GrokBasics
import Glibc

/// An ALSA configuration tree owned by Swift: either the system configuration with an
/// extra file merged on top (for one open only, ~/.asoundrc untouched), or just that file.
///
/// Not thread-safe: one owner at a time.
final class ALSAConfiguration {
    /// The tree; freed in `deinit`.
    let handle: OpaquePointer
    /// The extra file merged in.
    let file: String

    private init(handle: OpaquePointer, file: String) {
        self.handle = handle
        self.file = file
    }

    deinit {
        snd_config_delete(handle)
    }

    /// The system configuration (alsa.conf, ~/.asoundrc, ...) with `file` loaded on top of
    /// a private copy, so definitions in `file` add to or override the system ones.
    static func merged(with file: String) throws(AudioError) -> ALSAConfiguration {
        try checkReadable(file)
        ALSACall.prepare()
        var global: OpaquePointer?
        ALSACall.clearMessage()
        let updated = snd_config_update_ref(&global)
        guard updated >= 0, let global else {
            throw AudioError.file(path: file, detail: ALSACall.failure("snd_config_update_ref", code: Int(updated)))
        }
        defer { snd_config_unref(global) }
        var copy: OpaquePointer?
        let copied = snd_config_copy(&copy, global)
        guard copied >= 0, let copy else {
            throw AudioError.file(path: file, detail: ALSACall.failure("snd_config_copy", code: Int(copied)))
        }
        let configuration = ALSAConfiguration(handle: copy, file: file)
        try configuration.load(file)
        return configuration
    }

    /// Only the definitions in `file` (to list what it defines).
    static func only(_ file: String) throws(AudioError) -> ALSAConfiguration {
        try checkReadable(file)
        ALSACall.prepare()
        var top: OpaquePointer?
        let made = snd_config_top(&top)
        guard made >= 0, let top else {
            throw AudioError.file(path: file, detail: ALSACall.failure("snd_config_top", code: Int(made)))
        }
        let configuration = ALSAConfiguration(handle: top, file: file)
        try configuration.load(file)
        return configuration
    }

    /// The ids of the compound's children at `key` (e.g. the PCM names under `pcm`).
    func childIDs(of key: String) -> [String] {
        var node: OpaquePointer?
        guard snd_config_search(handle, key, &node) >= 0, let node else { return [] }
        var ids: [String] = []
        var iterator = snd_config_iterator_first(node)
        let end = snd_config_iterator_end(node)
        while iterator != end {
            if let child = snd_config_iterator_entry(iterator) {
                var id: UnsafePointer<CChar>?
                if snd_config_get_id(child, &id) >= 0, let id { ids.append(String(cString: id)) }
            }
            iterator = snd_config_iterator_next(iterator)
        }
        return ids
    }

    /// The string at `key` (dotted path), if there is one.
    func string(at key: String) -> String? {
        var node: OpaquePointer?
        guard snd_config_search(handle, key, &node) >= 0, let node else { return nil }
        var value: UnsafePointer<CChar>?
        guard snd_config_get_string(node, &value) >= 0, let value else { return nil }
        return String(cString: value)
    }

    private func load(_ file: String) throws(AudioError) {
        var input: OpaquePointer?
        ALSACall.clearMessage()
        let opened = snd_input_stdio_open(&input, file, "r")
        guard opened >= 0, let input else {
            throw AudioError.file(path: file, detail: ErrorDetail("config_unopenable", [ALSACall.errorName(Int(opened))]))
        }
        defer { snd_input_close(input) }
        ALSACall.clearMessage()
        let loaded = snd_config_load(handle, input)
        if loaded < 0 {
            throw AudioError.file(path: file, detail: Self.invalid(code: Int(loaded), message: ALSACall.lastMessage()))
        }
    }

    private static func checkReadable(_ file: String) throws(AudioError) {
        var info = stat()
        guard stat(file, &info) == 0 else {
            throw AudioError.file(path: file, detail: ErrorDetail("config_unreadable", [systemErrorName(errno)]))
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw AudioError.file(path: file, detail: ErrorDetail("config_not_regular"))
        }
    }

    /// What is wrong with a configuration file libasound refused: where, when its message
    /// names a line and column (`config_syntax`: line, column, error name), else just the
    /// error (`config_invalid`). libasound's sentence itself is English and stays out.
    static func invalid(code: Int, message: String) -> ErrorDetail {
        let name = ALSACall.errorName(code)
        // libasound says "<file>:<line>:<column>:<what>" (the file is "_toplevel_" for a
        // stream); take the last "number:number:" pair, so a ':' in the path cannot fool it.
        let parts = message.split(separator: ":", omittingEmptySubsequences: false)
        if parts.count >= 3 {
            for index in stride(from: parts.count - 2, through: 1, by: -1) {
                if let line = Int(parts[index - 1]), let column = Int(parts[index]) {
                    return ErrorDetail("config_syntax", [String(line), String(column), name])
                }
            }
        }
        return ErrorDetail("config_invalid", [name])
    }
}

@available(*, unavailable) extension ALSAConfiguration: Sendable {}
