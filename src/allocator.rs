//! glibc malloc settings for a long-running process under a steady allocation churn.
//!
//! Invariant: blocks of 64 KiB and more are mmapped, so freeing one returns it to the kernel,
//! and an arena gives its free top back once that exceeds 1 MiB. Setting them turns off glibc's
//! dynamic thresholds, which rise each time a large buffer is freed and would keep the large,
//! short-lived buffers of batch statements in the per-thread arenas, holding the resident size
//! well above the live heap. `GLIBC_TUNABLES` cannot do this for a
//! library user; the binary's entry point calls [`tune`].

/// Applies the settings; a no-op on other C libraries, where the allocator decides.
#[cfg(feature = "admin")]
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
