import Foundation
import Synchronization

/// A fresh directory under the system's temporary directory (`mkdtemp`, mode 0700), removed
/// with everything in it by ``remove()`` or when the last reference goes.
public final class TemporaryDirectory: Sendable {
    /// The directory.
    public let path: String
    private let removedWhenReleased: Bool

    /// Makes `<tmp>/<label>-XXXXXX`.
    /// - Parameters:
    ///   - label: The start of the name, to tell whose directory it is.
    ///   - removedWhenReleased: `false` keeps the directory after the last reference goes
    ///     (for a path handed to code that outlives this object).
    public init(_ label: String = "grok-test", removedWhenReleased: Bool = true) {
        var base = NSTemporaryDirectory()
        if !base.hasSuffix("/") { base += "/" }
        var template = Array((base + label + "-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp in \(base) failed: errno \(errno)")
        path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        self.removedWhenReleased = removedWhenReleased
    }

    deinit {
        if removedWhenReleased { remove() }
    }

    /// The path of `name` inside the directory (`name` may hold slashes).
    public func file(_ name: String) -> String { path + "/" + name }

    /// The directory `name` inside this one (with its missing parents), made now.
    public func directory(_ name: String) -> String {
        let made = file(name)
        do {
            try FileManager.default.createDirectory(atPath: made, withIntermediateDirectories: true)
        } catch {
            preconditionFailure("cannot make \(made): \(error)")
        }
        return made
    }

    /// The directory's URL.
    public var url: URL { URL(fileURLWithPath: path, isDirectory: true) }

    /// Removes the directory and everything in it.
    public func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

extension TemporaryDirectory {
    /// A fresh directory that lives until the test process exits, then is removed with
    /// everything in it: for a test that hands the path to processes or objects that outlive
    /// its own scope (a spawned grokctl, a bench).
    public static func untilExit(_ label: String = "grok-test") -> String {
        let directory = TemporaryDirectory(label)
        ExitCleanup.keep(directory)
        return directory.path
    }
}

/// The directories ``TemporaryDirectory/untilExit(_:)`` made, removed when the process exits.
private enum ExitCleanup {
    private static let kept = Mutex<[TemporaryDirectory]>([])
    private static let registered: Void = { atexit { ExitCleanup.removeAll() } }()

    static func keep(_ directory: TemporaryDirectory) {
        _ = registered
        kept.withLock { $0.append(directory) }
    }

    static func removeAll() {
        for directory in kept.withLock({ list in defer { list.removeAll() }; return list }) { directory.remove() }
    }
}
