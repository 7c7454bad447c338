//! glibc malloc settings for a long-running process under a steady allocation churn.
//!
//! With glibc's defaults, the admin at 5,000 fires/s held 160-180 MiB resident while its live
//! heap stayed near 70 MiB (heaptrack): freed blocks of the large, short-lived buffers of batch
//! statements stayed in the per-thread arenas, because glibc raises its mmap threshold each
//! time such a buffer is freed and only trims an arena above 128 KiB of free top space. A fixed
//! 64 KiB mmap threshold returns large buffers to the kernel on free, and a 1 MiB trim threshold
//! keeps arenas from growing back; the same run then held 90 MiB at the same CPU share
//! (BENCHMARKS.md). `GLIBC_TUNABLES` cannot do this for a library user; the binary does it here.

/// Applies the settings; a no-op on other C libraries, where the allocator decides.
pub fn tune() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes glibc's allocation parameters; it is called before any
    // thread is started, and both values are within the documented ranges.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 64 * 1024);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1024 * 1024);
    }
}
