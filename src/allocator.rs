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

/// Hands the free pages inside every malloc arena back to the kernel; true if any were.
///
/// Trimming by threshold only releases an arena's free top; this also releases free pages
/// below live blocks. The executor calls it after reaping a burst of idle job actors.
pub fn release_free_memory() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns whole free pages of glibc's own heaps to the kernel;
    // it takes each arena's lock, so it is safe alongside other threads allocating.
    unsafe {
        libc::malloc_trim(0) == 1
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freed_memory_can_be_released() {
        // a burst of blocks below the mmap threshold, freed: their pages are free for the taking
        let blocks: Vec<Vec<u8>> = (0..4_096).map(|i| vec![(i % 251) as u8; 8_000]).collect();
        let kept: Vec<Vec<u8>> = blocks.iter().step_by(512).cloned().collect();
        drop(blocks);
        let released = release_free_memory();
        if cfg!(all(target_os = "linux", target_env = "gnu")) {
            assert!(released, "32 MB of freed blocks gave nothing back");
        } else {
            assert!(!released);
        }
        assert_eq!(kept.len(), 8);
    }
}
