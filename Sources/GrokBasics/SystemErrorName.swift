#if canImport(Glibc)
import Glibc
#endif

/// The symbolic name of an errno value (`ENOSPC`; `errno <n>` for one not listed): what an
/// error detail carries instead of `strerror`'s English, the same in every language. The one
/// table for every library (the ledger, TUF, the command line's output files).
public func systemErrorName(_ number: Int32) -> String {
    switch number {
    case EPERM: "EPERM"
    case ENOENT: "ENOENT"
    case EINTR: "EINTR"
    case EIO: "EIO"
    case EBADF: "EBADF"
    case EAGAIN: "EAGAIN"
    case ENOMEM: "ENOMEM"
    case EACCES: "EACCES"
    case EBUSY: "EBUSY"
    case EEXIST: "EEXIST"
    case EXDEV: "EXDEV"
    case ENOTDIR: "ENOTDIR"
    case EISDIR: "EISDIR"
    case EINVAL: "EINVAL"
    case EMFILE: "EMFILE"
    case EFBIG: "EFBIG"
    case ENOSPC: "ENOSPC"
    case EROFS: "EROFS"
    case EPIPE: "EPIPE"
    case ENAMETOOLONG: "ENAMETOOLONG"
    case ENOLCK: "ENOLCK"
    case EDQUOT: "EDQUOT"
    case ELOOP: "ELOOP"
    case ENODEV: "ENODEV"
    case ENXIO: "ENXIO"
    case ESTRPIPE: "ESTRPIPE"
    case EBADFD: "EBADFD"
    case ENOSYS: "ENOSYS"
    default: "errno \(number)"
    }
}
