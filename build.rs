//! Rebuilds the crate when a migration is added: `sqlx::migrate!` embeds the folders' files,
//! and Cargo does not see a new file in them on its own.
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
