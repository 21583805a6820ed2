#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The C library's sine and cosine, for the vendor modem's tables and oscillators.
@inline(__always) func vendorSin(_ x: Double) -> Double { sin(x) }
@inline(__always) func vendorCos(_ x: Double) -> Double { cos(x) }
