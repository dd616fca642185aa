//! What both crates' layers tests need besides the scanner: the source
//! files, their module paths, and the circles in a module graph.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module -> the top-level modules it names.
pub(crate) type Edges = BTreeMap<String, BTreeSet<String>>;

/// Strongly connected components (Tarjan) of `edges`, each sorted.
pub(crate) fn components(edges: &Edges) -> Vec<Vec<String>> {
    struct State<'g> {
        edges: &'g Edges,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g str) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        for w in &s.edges[v] {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.stack.contains(&w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                component.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            component.sort();
            s.out.push(component);
        }
    }
    let mut state = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !state.index.contains_key(v.as_str()) {
            visit(&mut state, v);
        }
    }
    state.out
}

/// Print the circles and every module's imports (`-- --nocapture`).
pub(crate) fn print(edges: &Edges) {
    println!("circles (strongly connected components of more than one module):");
    for component in components(edges).iter().filter(|c| c.len() > 1) {
        println!("  {} modules: {}", component.len(), component.join(", "));
    }
    println!("imports:");
    for (module, deps) in edges {
        let deps: Vec<&str> = deps.iter().map(String::as_str).collect();
        println!("  {module} -> {}", deps.join(", "));
    }
}

pub(crate) fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable src dir") {
        let path = entry.expect("a dir entry").path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out.sort();
}

/// `src/cell/run.rs` -> `[cell, run]`; `src/cell/mod.rs` -> `[cell]`.
pub(crate) fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file
        .strip_prefix(src)
        .expect("under src")
        .with_extension("");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// The directory a file's `mod x;` lines load from.
pub(crate) fn module_dir(src: &Path, file: &Path) -> PathBuf {
    let dir = file.parent().expect("a parent").to_path_buf();
    match file.file_name().and_then(|n| n.to_str()) {
        Some("lib.rs" | "mod.rs") => dir,
        _ => src.join(module_path(src, file).join("/")),
    }
}
