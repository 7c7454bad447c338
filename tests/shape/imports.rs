//! Which file of a crate imports which: every `crate::`, `super::` and `self::` path (in `use`
//! declarations, braces expanded, and written inline in code or attributes), resolved to the file
//! that holds the module it names. Comments and string literals are left out. A folder's
//! `mod.rs` (or the `x.rs` beside a folder `x/`) naming its own children is wiring, not a
//! dependency, and makes no edge.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// File → the files it imports from.
pub type Graph = BTreeMap<PathBuf, BTreeSet<PathBuf>>;

/// The import graph of the crate whose root is `src/lib.rs` under `src`.
pub fn file_graph(src: &Path) -> Graph {
    let modules = module_files(src);
    let owners: BTreeMap<&PathBuf, PathBuf> = modules
        .values()
        .filter_map(|file| owned_folder(file).map(|folder| (file, folder)))
        .collect();
    let mut graph = Graph::new();
    for (module, file) in &modules {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let mut targets = BTreeSet::new();
        for (inline, path) in paths_in(&strip(&text)) {
            let here: Vec<String> = module.iter().chain(&inline).cloned().collect();
            let Some(absolute) = absolute(&here, &path) else {
                continue;
            };
            let Some(target) = file_of(&modules, &absolute) else {
                continue;
            };
            let wiring = owners
                .get(file)
                .is_some_and(|folder| target.starts_with(folder));
            if target != file && !wiring {
                targets.insert(target.clone());
            }
        }
        graph.insert(file.clone(), targets);
    }
    graph
}

/// Module path (`["web", "api"]`) → the file holding it, for every `.rs` file but `main.rs`.
fn module_files(src: &Path) -> BTreeMap<Vec<String>, PathBuf> {
    let mut modules = BTreeMap::new();
    for file in crate::files(src, ".rs") {
        let rel = file.strip_prefix(src).unwrap_or(&file);
        let mut parts: Vec<String> = rel
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        let last = parts.pop().unwrap_or_default();
        match last.as_str() {
            "lib.rs" if parts.is_empty() => {}
            "main.rs" if parts.is_empty() => continue,
            "mod.rs" => {}
            name => parts.push(name.trim_end_matches(".rs").to_string()),
        }
        modules.insert(parts, file);
    }
    modules
}

/// The folder whose files `file` declares as its children: `x/` for `x/mod.rs` and `x.rs`, all
/// of `src/` for `lib.rs`.
fn owned_folder(file: &Path) -> Option<PathBuf> {
    let name = file.file_name()?.to_string_lossy();
    let parent = file.parent()?;
    match name.as_ref() {
        "mod.rs" | "lib.rs" => Some(parent.to_path_buf()),
        other => {
            let folder = parent.join(other.trim_end_matches(".rs"));
            folder.is_dir().then_some(folder)
        }
    }
}

/// The file holding the longest module prefix of `path`.
fn file_of<'a>(
    modules: &'a BTreeMap<Vec<String>, PathBuf>,
    path: &[String],
) -> Option<&'a PathBuf> {
    (0..=path.len()).rev().find_map(|n| modules.get(&path[..n]))
}

/// `path` (its first segment `crate`, `super` or `self`) from inside module `here`, as a path
/// from the crate's root; `None` for any other start (another crate, a local name).
fn absolute(here: &[String], path: &[String]) -> Option<Vec<String>> {
    let mut at: Vec<String>;
    let mut rest = path;
    match path.first()?.as_str() {
        "crate" => {
            at = Vec::new();
            rest = &path[1..];
        }
        "self" => {
            at = here.to_vec();
            rest = &path[1..];
        }
        "super" => {
            at = here.to_vec();
            while rest.first().is_some_and(|s| s == "super") {
                at.pop()?;
                rest = &rest[1..];
            }
        }
        _ => return None,
    }
    at.extend(rest.iter().cloned());
    Some(at)
}

/// The source with comments, string and character literals blanked out (newlines kept).
fn strip(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if chars[i] == '\n' {
                        out.push('\n');
                    }
                    i += 1;
                }
            }
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && !ident_before(&chars, i) {
            // raw string: r"..." or r#"..."#
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                match chars.get(j) {
                    None => break,
                    Some('"') if (0..hashes).all(|h| chars.get(j + 1 + h) == Some(&'#')) => {
                        j += 1 + hashes;
                        break;
                    }
                    Some('\n') => out.push('\n'),
                    _ => {}
                }
                j += 1;
            }
            out.push_str("\"\"");
            i = j;
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                } else if chars[i] == '\n' {
                    out.push('\n');
                }
                i += 1;
            }
            out.push_str("\"\"");
            i += 1;
        } else if c == '\'' && (chars.get(i + 2) == Some(&'\'') || next == Some('\\')) {
            // a character literal ('x', '\n', '\u{1F}'), not a lifetime
            let mut j = i + 1;
            if chars.get(j) == Some(&'\\') {
                j += 1;
            }
            while j < chars.len() && chars[j] != '\'' {
                j += 1;
            }
            out.push_str("' '");
            i = j + 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn ident_before(chars: &[char], i: usize) -> bool {
    i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Every path in `code` with the inline modules (`mod x { … }`) it stands in: the expanded
/// trees of `use` declarations, and `crate::…`, `super::…`, `self::…` paths elsewhere.
fn paths_in(code: &str) -> Vec<(Vec<String>, Vec<String>)> {
    let chars: Vec<char> = code.chars().collect();
    let mut found = Vec::new();
    // inline modules open at a brace depth
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut pending_mod: Option<String> = None;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '{' {
            depth += 1;
            if let Some(name) = pending_mod.take() {
                inline.push((name, depth));
            }
            i += 1;
            continue;
        }
        if c == '}' {
            if inline.last().is_some_and(|(_, d)| *d == depth) {
                inline.pop();
            }
            depth = depth.saturating_sub(1);
            i += 1;
            continue;
        }
        if c == ';' {
            pending_mod = None;
        }
        if is_ident(c) && !ident_before(&chars, i) {
            let start = i;
            while i < chars.len() && is_ident(chars[i]) {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let names: Vec<String> = inline.iter().map(|(n, _)| n.clone()).collect();
            match word.as_str() {
                "mod" => {
                    let rest: String = chars[i..].iter().collect();
                    let name: String = rest
                        .trim_start()
                        .chars()
                        .take_while(|c| is_ident(*c))
                        .collect();
                    if !name.is_empty() {
                        pending_mod = Some(name);
                    }
                }
                "use" => {
                    let end = chars[i..]
                        .iter()
                        .position(|c| *c == ';')
                        .map_or(chars.len(), |p| i + p);
                    let tree: String = chars[i..end].iter().collect();
                    for path in expand(&tree) {
                        found.push((names.clone(), path));
                    }
                    i = end;
                }
                "crate" | "super" | "self" if followed_by_path(&chars, i) => {
                    let mut path = vec![word];
                    while followed_by_path(&chars, i) {
                        i += 2;
                        let s = i;
                        while i < chars.len() && is_ident(chars[i]) {
                            i += 1;
                        }
                        path.push(chars[s..i].iter().collect());
                    }
                    found.push((names, path));
                }
                _ => {}
            }
            continue;
        }
        i += 1;
    }
    found
}

/// Whether `::` and an identifier follow position `i`.
fn followed_by_path(chars: &[char], i: usize) -> bool {
    chars.get(i) == Some(&':')
        && chars.get(i + 1) == Some(&':')
        && chars.get(i + 2).is_some_and(|c| is_ident(*c))
}

/// The paths of a `use` tree (`super::{a, b::{c, d}}` → `super::a`, `super::b::c`, …), without
/// `as` renames, `*` and `self` items.
fn expand(tree: &str) -> Vec<Vec<String>> {
    fn walk(prefix: &[String], tree: &str, out: &mut Vec<Vec<String>>) {
        let tree = tree.trim();
        if let Some(open) = tree.find('{') {
            let head: Vec<String> = segments(&tree[..open]);
            let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
            let base: Vec<String> = prefix.iter().cloned().chain(head).collect();
            let mut level = 0;
            let mut start = 0;
            for (i, c) in inner.char_indices() {
                match c {
                    '{' => level += 1,
                    '}' => level -= 1,
                    ',' if level == 0 => {
                        walk(&base, &inner[start..i], out);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            walk(&base, &inner[start..], out);
        } else {
            let tree = tree.split(" as ").next().unwrap_or(tree);
            let mut path: Vec<String> = prefix.iter().cloned().chain(segments(tree)).collect();
            if path.last().is_some_and(|s| s == "self") {
                path.pop();
            }
            if !path.is_empty() {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&[], tree, &mut out);
    out
}

fn segments(text: &str) -> Vec<String> {
    text.split("::")
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty() && s != "*")
        .collect()
}

/// Every group of two or more files that import each other, directly or around a loop
/// (Tarjan's strongly connected components).
pub fn circles(graph: &Graph) -> Vec<Vec<PathBuf>> {
    struct Walk<'a> {
        graph: &'a Graph,
        index: BTreeMap<&'a PathBuf, usize>,
        low: BTreeMap<&'a PathBuf, usize>,
        stack: Vec<&'a PathBuf>,
        on_stack: BTreeSet<&'a PathBuf>,
        next: usize,
        found: Vec<Vec<PathBuf>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a PathBuf) {
            self.index.insert(v, self.next);
            self.low.insert(v, self.next);
            self.next += 1;
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.graph.get(v).into_iter().flatten() {
                if !self.graph.contains_key(w) {
                    continue;
                }
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.on_stack.contains(w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut group = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    group.push(w.clone());
                    if w == v {
                        break;
                    }
                }
                if group.len() > 1 {
                    self.found.push(group);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v) {
            walk.visit(v);
        }
    }
    walk.found
}
