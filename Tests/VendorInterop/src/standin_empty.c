/* Stand-in for Android's libm.so, libdl.so and libstdc++.so: the vendor library names
 * them as dependencies; what it imports from them is in glibc, which this depends on. */
int vendor_interop_standin_marker;
