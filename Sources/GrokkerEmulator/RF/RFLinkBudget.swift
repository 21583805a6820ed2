import Foundation

/// The reader's carrier while it is on: transmit power and the channel it is on.
public struct RFCarrier: Sendable, Hashable {
    /// Conducted transmit power, dBm.
    public var powerDBm: Double
    /// Carrier frequency, MHz.
    public var frequencyMHz: Double

    /// Creates a carrier.
    public init(powerDBm: Double, frequencyMHz: Double) {
        self.powerDBm = powerDBm
        self.frequencyMHz = frequencyMHz
    }
}

/// Where a tag is, seen from the reader's antenna.
public enum TagPlacement: Sendable, Hashable {
    /// At a fixed distance in metres (free-space path loss at the channel's frequency).
    case distance(meters: Double)
    /// Behind a fixed one-way path loss in dB, whatever the frequency.
    case pathLoss(dB: Double)
    /// Moving: distance waypoints (time in seconds of the device clock, metres), sorted by
    /// time, interpolated linearly and held constant before the first and after the last.
    case motion([Waypoint])

    /// One point of a tag's motion.
    public struct Waypoint: Sendable, Hashable, Codable {
        /// Time, seconds of the device's sample clock.
        public var time: Double
        /// Distance from the reader's antenna, metres.
        public var distance: Double

        /// Creates a waypoint.
        public init(time: Double, distance: Double) {
            self.time = time
            self.distance = distance
        }

        private enum CodingKeys: String, CodingKey {
            case time = "t_s"
            case distance = "distance_m"
        }
    }

    /// The distance at `time`, or `nil` for a fixed path loss.
    public func distance(at time: Double) -> Double? {
        switch self {
        case .distance(let meters): return meters
        case .pathLoss: return nil
        case .motion(let points):
            guard let first = points.first, let last = points.last else { return nil }
            if time <= first.time { return first.distance }
            if time >= last.time { return last.distance }
            // Binary search for the segment holding `time`.
            var low = 0
            var high = points.count - 1
            while high - low > 1 {
                let mid = (low + high) / 2
                if points[mid].time <= time { low = mid } else { high = mid }
            }
            let a = points[low]
            let b = points[high]
            let span = b.time - a.time
            guard span > 0 else { return b.distance }
            return a.distance + (b.distance - a.distance) * (time - a.time) / span
        }
    }
}

/// The radio link between the reader and a tag (monostatic, free space).
///
/// Forward: power at the tag = reader power + antenna gain − path loss; the tag wakes when
/// that reaches its activation threshold. Reverse: RSSI at the reader = reader power
/// + 2 × gain − 2 × path loss − tag backscatter loss; the reader decodes the reply when the
/// RSSI reaches its sensitivity.
public enum RFLinkBudget {
    /// Speed of light, m/s.
    public static let speedOfLight = 299_792_458.0

    /// Free-space path loss in dB at `meters` and `frequencyMHz`: 20·log10(4πdf/c), never
    /// below 0 dB (closer than λ/4π the formula no longer holds).
    public static func freeSpacePathLoss(meters: Double, frequencyMHz: Double) -> Double {
        let ratio = 4 * Double.pi * meters * frequencyMHz * 1e6 / speedOfLight
        guard ratio > 1 else { return 0 }
        return 20 * log10(ratio)
    }

    /// The one-way path loss to a tag placed at `placement`, at `time`, on `frequencyMHz`.
    public static func pathLoss(_ placement: TagPlacement, at time: Double, frequencyMHz: Double) -> Double {
        if case .pathLoss(let dB) = placement { return dB }
        return freeSpacePathLoss(meters: placement.distance(at: time) ?? 0, frequencyMHz: frequencyMHz)
    }

    /// Power reaching the tag, dBm.
    public static func powerAtTag(readerPowerDBm: Double, antennaGainDBi: Double, pathLossDB: Double) -> Double {
        readerPowerDBm + antennaGainDBi - pathLossDB
    }

    /// Backscatter power reaching the reader, dBm.
    public static func rssi(
        readerPowerDBm: Double, antennaGainDBi: Double, pathLossDB: Double, backscatterLossDB: Double
    ) -> Double {
        readerPowerDBm + 2 * antennaGainDBi - 2 * pathLossDB - backscatterLossDB
    }
}

/// Bit errors on the tag-to-reader link, from the reply's margin above the reader's
/// hardware floor (the scene's `reader_sensitivity_dbm`).
///
/// The model: the reader detects FM0/Miller backscatter coherently, as antipodal signalling
/// in white Gaussian noise, so a bit is wrong with probability ½·erfc(√(Eb/N0)) (Proakis and
/// Salehi, *Digital Communications*, 5th ed., section 4.2, binary antipodal signalling). The
/// floor is defined as the reply power where that probability is 10⁻³ (Eb/N0 = 6.79 dB), and
/// every dB of margin above it adds a dB of Eb/N0. A reply of *n* bits arrives intact with
/// probability (1 − BER)ⁿ; one that does not fails its CRC-16 and is lost.
public enum Gen2BitErrors {
    /// Eb/N0 at the hardware floor, dB: where the bit error rate is 10⁻³.
    public static let floorEbN0DB = 6.79

    /// The bit error rate at `ebN0DB`.
    public static func bitErrorRate(ebN0DB: Double) -> Double {
        0.5 * erfc(sqrt(pow(10, ebN0DB / 10)))
    }

    /// The bit error rate of a reply `marginDB` above the hardware floor.
    public static func bitErrorRate(marginDB: Double) -> Double {
        bitErrorRate(ebN0DB: floorEbN0DB + marginDB)
    }

    /// The probability that a reply of `bits` bits, `marginDB` above the floor, has at least
    /// one bit wrong (and so fails its CRC).
    public static func replyErrorProbability(bits: Int, marginDB: Double) -> Double {
        // 1 − (1 − p)^n, computed without cancellation for tiny p.
        -expm1(Double(bits) * log1p(-bitErrorRate(marginDB: marginDB)))
    }
}
