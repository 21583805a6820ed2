import Foundation
import GrokBasics
import GrokkerEmulator
import GrokProtocol

/// The directory where emulated Grokkers keep their state, one subdirectory each
/// (`sim-0`, `sim-1`, ...), so a bench survives between runs like real readers would.
public struct Bench: Sendable, Equatable {
    /// The bench directory (`--bench`).
    public let directory: String

    /// A bench rooted at `directory`; nothing is created until a Grokker is used.
    public init(directory: String) {
        self.directory = directory
    }

    /// Where emulated Grokker `index` keeps its state.
    public func stateDirectory(for index: Int) -> String {
        DeviceStateStore.deviceDirectory(in: directory, index: index)
    }

    /// The ports of this bench that hold an emulated Grokker with state, by number (port N
    /// holds Grokker N unless something was unplugged or moved: ``content(ofPort:)``); none
    /// when the directory does not exist yet.
    ///
    /// - Throws: ``FleetError/benchNotDirectory(path:)`` when it is a file,
    ///   ``FleetError/benchUnreadable(path:detail:)`` when it cannot be listed.
    public func emulatedDevices() throws(FleetError) -> [Int] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) else { return [] }
        guard isDirectory.boolValue else { throw .benchNotDirectory(path: directory) }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw .benchUnreadable(path: directory, detail: (error as NSError).localizedDescription)
        }
        let units = names.compactMap { name -> Int? in
            guard name.hasPrefix("sim-"), let index = Int(name.dropFirst(4)),
                DeviceSpec.emulatedRange.contains(index), name == "sim-\(index)"
            else { return nil }
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: stateDirectory(for: index), isDirectory: &isDirectory),
                isDirectory.boolValue
            else { return nil }
            return index
        }
        var ports: [Int] = []
        for unit in units {
            if let port = try port(holding: unit) { ports.append(port) }
        }
        return ports.sorted()
    }

    /// What an emulated Grokker of the bench says about itself, read from its state without
    /// connecting to it (`grokctl devices`).
    public struct Unit: Sendable, Equatable {
        /// The 8-digit serial number; `nil` for a unit never used (its serial is drawn then).
        public var serial: String?
        public var firmware: String?
        /// The vendor's name of its region; `nil` when none is set or unknown.
        public var region: String?
        /// Why the state could not be read, when it could not (``GrokBasics/ErrorCause``).
        public var unreadable: ErrorCause?
        /// The Grokker's state directory (`sim-K` of the Grokker the port holds); `nil` for an
        /// empty port.
        public var directory: String? = nil
    }

    /// The serial number, firmware and region of the emulated Grokker in port `index`, from
    /// its state file.
    public func unit(_ index: Int) -> Unit {
        let unit: Int
        do {
            guard case .unit(let held) = try content(ofPort: index) else {
                return Unit(serial: nil, firmware: nil, region: nil, unreadable: nil)
            }
            unit = held
        } catch {
            return Unit(serial: nil, firmware: nil, region: nil, unreadable: ErrorCause(error))
        }
        do {
            guard let state = try DeviceStateStore.read(deviceDirectory: stateDirectory(for: unit)) else {
                return Unit(serial: nil, firmware: nil, region: nil, unreadable: nil, directory: stateDirectory(for: unit))
            }
            return Unit(serial: ReaderInfo.formatSerialNumber(state.serialNumber), firmware: state.firmwareVersion.description,
                        region: state.region?.name, unreadable: nil, directory: stateDirectory(for: unit))
        } catch {
            return Unit(serial: nil, firmware: nil, region: nil, unreadable: ErrorCause(error))
        }
    }
}
