import GrokProtocol

/// Vendor `UgiLockUnlockMaskAndAction`: the 20-bit Gen2 Lock payload `lockUnlockTag` sends.
/// Build it field by field (``Gen2LockPayload/setting(_:mask:action:)``) or from raw bits.
public typealias UgiLockUnlockMaskAndAction = Gen2LockPayload

/// Vendor `UGI_ACCESS_ACTION_*`: what a lock makes of one field.
public typealias UgiLockAction = Gen2LockAction

/// Vendor `UGI_ACCESS_MASK_CHANGE_*`: which of a field's two action bits a lock changes.
public enum UgiLockMaskChange: UInt8, Sendable, Hashable, CaseIterable {
    /// Leave the field alone.
    case none = 0
    /// Change only the permalock bit.
    case permalock = 1
    /// Change only the pwd-write (passwords: pwd-read/write) bit.
    case writable = 2
    /// Change both.
    case writableAndPermalock = 3
}

extension Gen2LockPayload {
    /// This payload with `field`'s two mask bits set to `mask` and its two action bits to
    /// `action` (the other fields as they were): the vendor's
    /// `(MASK_CHANGE << field's MASK_BIT_OFFSET) | (ACTION << field's ACTION_BIT_OFFSET)`.
    public func setting(_ field: Gen2LockField, mask: UgiLockMaskChange, action: Gen2LockAction) -> Gen2LockPayload {
        var raw = rawValue
        raw &= ~(3 << UInt32(field.maskOffset) | 3 << UInt32(field.actionOffset))
        raw |= UInt32(mask.rawValue) << UInt32(field.maskOffset) | UInt32(action.rawValue) << UInt32(field.actionOffset)
        return Gen2LockPayload(rawValue: raw)
    }
}

// The vendor's constants under its names, so code written against `UgiInventory.h` reads the
// same (values from the header; EPC Gen2 v2 Lock payload layout).
/// Vendor `UGI_NO_PASSWORD`: no access password.
public let UGI_NO_PASSWORD: UInt32 = 0
public let UGI_ACCESS_KILL_PASSWORD_MASK_BIT_OFFSET = UInt32(Gen2LockField.killPassword.maskOffset)
public let UGI_ACCESS_ACCESS_PASSWORD_MASK_BIT_OFFSET = UInt32(Gen2LockField.accessPassword.maskOffset)
public let UGI_ACCESS_EPC_MASK_BIT_OFFSET = UInt32(Gen2LockField.epc.maskOffset)
public let UGI_ACCESS_TID_MASK_BIT_OFFSET = UInt32(Gen2LockField.tid.maskOffset)
public let UGI_ACCESS_USER_MASK_BIT_OFFSET = UInt32(Gen2LockField.user.maskOffset)
public let UGI_ACCESS_KILL_PASSWORD_ACTION_BIT_OFFSET = UInt32(Gen2LockField.killPassword.actionOffset)
public let UGI_ACCESS_ACCESS_PASSWORD_ACTION_BIT_OFFSET = UInt32(Gen2LockField.accessPassword.actionOffset)
public let UGI_ACCESS_EPC_ACTION_BIT_OFFSET = UInt32(Gen2LockField.epc.actionOffset)
public let UGI_ACCESS_TID_ACTION_BIT_OFFSET = UInt32(Gen2LockField.tid.actionOffset)
public let UGI_ACCESS_USER_ACTION_BIT_OFFSET = UInt32(Gen2LockField.user.actionOffset)
public let UGI_ACCESS_MASK_CHANGE_NONE = UInt32(UgiLockMaskChange.none.rawValue)
public let UGI_ACCESS_MASK_CHANGE_PERMALOCK = UInt32(UgiLockMaskChange.permalock.rawValue)
public let UGI_ACCESS_MASK_CHANGE_WRITABLE = UInt32(UgiLockMaskChange.writable.rawValue)
public let UGI_ACCESS_MASK_CHANGE_WRITABLE_AND_PERMALOCK = UInt32(UgiLockMaskChange.writableAndPermalock.rawValue)
public let UGI_ACCESS_ACTION_WRITABLE = UInt32(Gen2LockAction.writable.rawValue)
public let UGI_ACCESS_ACTION_PERMANENTLY_WRITABLE = UInt32(Gen2LockAction.permanentlyWritable.rawValue)
public let UGI_ACCESS_ACTION_WRITE_RESTRICTED = UInt32(Gen2LockAction.writeRestricted.rawValue)
public let UGI_ACCESS_ACTION_PERMANENTLY_NOT_WRITABLE = UInt32(Gen2LockAction.permanentlyNotWritable.rawValue)

extension UgiInventory {
    /// Vendor `lockUnlockTag:maskAndAction:password:whenCompleted:` with the payload built
    /// as a value.
    public func lockUnlockTag(_ epc: UgiEpc, maskAndAction: UgiLockUnlockMaskAndAction, password: UInt32 = UGI_NO_PASSWORD,
                              whenCompleted completion: @escaping @Sendable (Result<TagAccessStatus, ReaderError>) -> Void) {
        lockUnlockTag(epc, maskAndAction: maskAndAction.rawValue, password: password, whenCompleted: completion)
    }
}
