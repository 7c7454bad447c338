//! The shape of the code base, checked on every run: no circle of files in `src/`, no file in
//! `src/` or `tests/` a reader cannot hold (over 800 lines), one name per public type, and
//! `docs/` for the product's documents (at most 400 KB, and the console's page screenshots
//! at most 4 MB).

mod imports;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The repository's root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every file under `dir` whose name ends with `ext`, sorted.
fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else if path.to_string_lossy().ends_with(ext) {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

fn relative(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// The most lines a source or test file may have.
const MAX_LINES: usize = 800;
/// The most `docs/` may hold besides the console's page screenshots, in bytes.
const DOCS_MAX_BYTES: u64 = 400 * 1024;
/// Where `scripts/docs-screenshots.sh` puts every console page, in both languages and widths.
const PAGE_SHOTS: &str = "docs/screenshots/pages";
/// The most those screenshots may hold, in bytes (WebP, about 20 KB a picture).
const PAGE_SHOTS_MAX_BYTES: u64 = 4 * 1024 * 1024;

#[test]
fn no_file_in_src_or_tests_is_over_800_lines() {
    let long: Vec<String> = ["src", "tests"]
        .iter()
        .flat_map(|dir| files(&root().join(dir), ".rs"))
        .filter_map(|file| {
            let lines = std::fs::read_to_string(&file).ok()?.lines().count();
            (lines > MAX_LINES).then(|| format!("{} ({lines} lines)", relative(&file)))
        })
        .collect();
    assert!(
        long.is_empty(),
        "split by what the code is about: {}",
        long.join(", ")
    );
}

#[test]
fn no_two_public_types_share_a_name() {
    let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for file in files(&root().join("src"), ".rs") {
        let text = std::fs::read_to_string(&file).expect("source");
        for line in text.lines() {
            let line = line.trim_start();
            let Some(rest) = ["pub struct ", "pub enum ", "pub trait ", "pub type "]
                .iter()
                .chain(&[
                    "pub(crate) struct ",
                    "pub(crate) enum ",
                    "pub(crate) trait ",
                ])
                .find_map(|start| line.strip_prefix(start))
            else {
                continue;
            };
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            seen.entry(name).or_default().push(relative(&file));
        }
    }
    let twice: Vec<String> = seen
        .into_iter()
        .filter(|(_, places)| places.len() > 1)
        .map(|(name, places)| format!("{name} in {}", places.join(" and ")))
        .collect();
    assert!(
        twice.is_empty(),
        "one name per concept: {}",
        twice.join("; ")
    );
}

#[test]
fn docs_hold_at_most_400_kb() {
    let shots = root().join(PAGE_SHOTS);
    let size = |f: &PathBuf| std::fs::metadata(f).map(|m| m.len()).unwrap_or(0);
    let all = files(&root().join("docs"), "");
    let (pictures, rest): (Vec<&PathBuf>, Vec<&PathBuf>) =
        all.iter().partition(|f| f.starts_with(&shots));
    let bytes: u64 = rest.iter().map(|f| size(f)).sum();
    assert!(
        bytes <= DOCS_MAX_BYTES,
        "docs/ holds {bytes} bytes, more than {DOCS_MAX_BYTES}: benchmark diaries belong in git history"
    );
    let bytes: u64 = pictures.iter().map(|f| size(f)).sum();
    assert!(
        bytes <= PAGE_SHOTS_MAX_BYTES,
        "{PAGE_SHOTS} holds {bytes} bytes, more than {PAGE_SHOTS_MAX_BYTES}: smaller pictures, not more"
    );
}

#[test]
fn no_circle_of_files_in_src() {
    let graph = imports::file_graph(&root().join("src"));
    let circles: Vec<String> = imports::circles(&graph)
        .into_iter()
        .map(|circle| {
            let mut names: Vec<String> = circle.iter().map(|f| relative(f)).collect();
            names.sort();
            names.join(" ↔ ")
        })
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    assert!(
        circles.is_empty(),
        "files that import each other in a loop (dependencies point one way: move what both \
         need into a module below them): {}",
        circles.join("; ")
    );
}

#[test]
fn the_circle_check_sees_circles() {
    let dir = tempfile::tempdir().expect("temp dir");
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("lib.rs", "pub mod a;\npub mod b;\npub mod c;\n");
    write("a/mod.rs", "mod inner;\npub use inner::X;\n");
    // a folder's mod.rs wiring its own children is no circle
    write("a/inner.rs", "use super::helper;\npub struct X;\n");
    write(
        "b.rs",
        "use crate::c::{Y, z::Deep};\n#[cfg(test)]\nmod tests { use super::*; }\n",
    );
    write(
        "c.rs",
        "// use crate::b::Nothing;\npub fn f() { crate::b::g(); }\n",
    );
    let graph = imports::file_graph(dir.path());
    let circles = imports::circles(&graph);
    assert_eq!(circles.len(), 1, "{circles:?}");
    let mut names: Vec<String> = circles[0]
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["b.rs", "c.rs"]);
}
