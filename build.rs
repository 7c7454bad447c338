//! Rebuilds the crate when a migration is added (`sqlx::migrate!` embeds the folders' files,
//! and Cargo does not see a new file in them on its own), and hashes the console's assets into
//! `JOBWHEEL_ASSETS_VERSION`, the `?v=` of their URLs: at build time, because the CodeMirror
//! bundle is too large to hash in const evaluation.
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=migrations");
    println!("cargo:rerun-if-changed=assets");
    let mut names: Vec<_> = std::fs::read_dir("assets")
        .map(|dir| dir.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    names.sort();
    // FNV-1a over every asset's name and bytes
    let mut hash = 0xcbf2_9ce4_8422_2325_u64;
    for path in &names {
        println!("cargo:rerun-if-changed={}", path.display());
        let name = path.file_name().map(|n| n.as_encoded_bytes().to_vec());
        let bytes = std::fs::read(Path::new(path)).unwrap_or_default();
        for b in name.unwrap_or_default().iter().chain(&bytes) {
            hash = (hash ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    println!("cargo:rustc-env=JOBWHEEL_ASSETS_VERSION={hash:016x}");
}
