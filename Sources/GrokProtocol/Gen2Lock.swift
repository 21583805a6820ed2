// The Gen2 Lock command's 20-bit payload and its parts (EPC Gen2 v2, 6.3.2.12.3.5): the
// value the vendor's `lockUnlockTag` carries on the wire (docs/vendor-protocol.md, lock), built
// by the SDK (`UgiLockUnlockMaskAndAction`) and applied by the emulated tags.

/// The lock state of one lockable field, as the two action bits of the Gen2 Lock command
/// (vendor names and values). For EPC, TID and USER it says who may write the bank; for the
/// two password fields it says who may read *and* write the password.
public enum Gen2LockAction: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Writable (passwords: readable and writable) in the open or secured state.
    case writable = 0
    /// Like ``writable``, and that can never change (permalocked open).
    case permanentlyWritable = 1
    /// Writable (passwords: readable and writable) only in the secured state, i.e. with the
    /// access password when the tag has a non-zero one.
    case writeRestricted = 2
    /// Never writable (passwords: never readable nor writable), for ever.
    case permanentlyNotWritable = 3

    /// The permalock bit is set: the state can never change.
    public var isPermanent: Bool { rawValue & 1 != 0 }
    /// The pwd-write (password fields: pwd-read/write) bit is set.
    public var needsSecuredState: Bool { rawValue & 2 != 0 }

    /// The name used in scene files (`writable`, `permanently_writable`, `write_restricted`,
    /// `permanently_not_writable`).
    public var sceneName: String {
        switch self {
        case .writable: "writable"
        case .permanentlyWritable: "permanently_writable"
        case .writeRestricted: "write_restricted"
        case .permanentlyNotWritable: "permanently_not_writable"
        }
    }

    /// The action named `name` in a scene file, or `nil`.
    public init?(sceneName name: String) {
        guard let action = Self.allCases.first(where: { $0.sceneName == name }) else { return nil }
        self = action
    }

    public var description: String { sceneName }
}

/// The five lockable fields of a Gen2 tag and their bit positions in the 20-bit Lock payload.
public enum Gen2LockField: Int, Sendable, Hashable, CaseIterable {
    /// The kill password (RESERVED words 0-1).
    case killPassword
    /// The access password (RESERVED words 2-3).
    case accessPassword
    /// The EPC bank.
    case epc
    /// The TID bank.
    case tid
    /// The USER bank.
    case user

    /// Offset of this field's two mask bits in the payload (18, 16, 14, 12, 10).
    public var maskOffset: Int { 18 - 2 * rawValue }
    /// Offset of this field's two action bits in the payload (8, 6, 4, 2, 0).
    public var actionOffset: Int { 8 - 2 * rawValue }
}

/// The 20-bit payload of a Gen2 Lock command: mask bits 19-10 (two per field) and action
/// bits 9-0 (two per field), at the offsets of ``Gen2LockField``. Mask values: none 0,
/// permalock 1, writable 2, both 3 (vendor names).
public struct Gen2LockPayload: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The payload in the low 20 bits.
    public let rawValue: UInt32

    /// A payload from its 20 bits; higher bits are ignored.
    public init(rawValue: UInt32) {
        self.rawValue = rawValue & 0xF_FFFF
    }

    /// A payload that sets each listed field to the given action with mask 3 (both bits),
    /// leaving the other fields alone.
    public init(setting actions: [Gen2LockField: Gen2LockAction]) {
        var raw: UInt32 = 0
        for (field, action) in actions {
            raw |= 3 << UInt32(field.maskOffset)
            raw |= UInt32(action.rawValue) << UInt32(field.actionOffset)
        }
        self.init(rawValue: raw)
    }

    /// The two mask bits of `field` (0...3).
    public func mask(for field: Gen2LockField) -> UInt8 {
        UInt8((rawValue >> UInt32(field.maskOffset)) & 3)
    }

    /// The two action bits of `field`.
    public func action(for field: Gen2LockField) -> Gen2LockAction {
        Gen2LockAction(rawValue: UInt8((rawValue >> UInt32(field.actionOffset)) & 3))!
    }

    public var description: String {
        let hex = String(rawValue, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: max(0, 5 - hex.count)) + hex
    }
}
