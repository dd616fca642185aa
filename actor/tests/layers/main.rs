//! The floors of weir-actor, read from its sources. The leaves (top-level
//! files: `error`, `path`, `sync`, ...) import only each other; `core/`
//! (mailbox, cell, refs, context, dispatch, time) imports itself and the
//! leaves; `system/` (the actor system and the services it owns, path
//! resolution) adds the core, and imports no feature; `features/` may use
//! everything below it. No circle crosses a floor, and outside the core
//! there is none but the named [`CIRCLES`]. A file names the module that
//! defines an item, never `lib.rs`'s re-exports (those are for users).
//!
//! Each file under `src/` is scanned for the `crate::` and `super::` paths it
//! names (comments, string literals and `#[cfg(test)]` items left out); an
//! edge goes from the file's unit to the unit the path names. A unit is a
//! top-level leaf (`error`) or a module of a floor folder (`core::cell`,
//! `system::shutdown`). Run with `-- --nocapture` to see the circles and
//! every unit's imports.

mod modules;
mod scan;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use modules::{collect, module_dir, module_path};
use scan::{reexport_paths, scan};

/// The floors, bottom first, and the floors each may import.
const FLOORS: &[(&str, &[&str])] = &[
    ("leaf", &["leaf"]),
    ("core", &["leaf", "core"]),
    ("system", &["leaf", "core", "system"]),
    ("features", &["leaf", "core", "system", "features"]),
];

/// The folders that are floors; every other top-level module is a leaf.
const FOLDERS: &[&str] = &["core", "system", "features"];

/// Circles allowed to stay, each with why; any other circle of more than one
/// unit is a problem, and a listed circle that is gone must leave the list.
const CIRCLES: &[(&[&str], &str)] = &[
    (
        &[
            "core::actor",
            "core::actor_ref",
            "core::cell",
            "core::context",
        ],
        "the heart: a cell runs an `Actor` with a `Context` and is addressed by refs that reach it",
    ),
    (
        &["core::dead_letters", "core::instrument"],
        "the hooks see dead letters, and dead letters are reported to the hooks",
    ),
];

/// The floor of a unit (`core::cell` -> `core`, `error` -> `leaf`).
fn floor_of(unit: &str) -> &'static str {
    let top = unit.split("::").next().unwrap_or_default();
    FOLDERS
        .iter()
        .find(|f| **f == top)
        .copied()
        .unwrap_or("leaf")
}

#[test]
fn every_arrow_runs_down_the_floors() {
    let graph = Graph::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    graph.print();
    let mut problems = graph.problems.clone();
    for (unit, deps) in &graph.edges {
        let floor = floor_of(unit);
        let allowed = FLOORS
            .iter()
            .find(|(name, _)| *name == floor)
            .map_or(&[][..], |(_, allowed)| *allowed);
        for dep in deps {
            let dep_floor = floor_of(dep);
            if !allowed.contains(&dep_floor) {
                problems.push(format!(
                    "{floor} unit `{unit}` imports `{dep}` ({dep_floor} floor): {}",
                    graph.witness[&(unit.clone(), dep.clone())]
                ));
            }
        }
    }
    let circles: Vec<Vec<String>> = modules::components(&graph.edges)
        .into_iter()
        .filter(|c| c.len() > 1)
        .collect();
    for circle in &circles {
        let floors: BTreeSet<&str> = circle.iter().map(|u| floor_of(u)).collect();
        if floors.len() > 1 {
            problems.push(format!("a circle crosses floors: {circle:?}"));
        } else if !CIRCLES.iter().any(|(units, _)| units == circle) {
            problems.push(format!(
                "a circle that is not in `CIRCLES`: {circle:?} (cut it)"
            ));
        }
    }
    for (units, _) in CIRCLES {
        if !circles.iter().any(|c| c == units) {
            problems.push(format!(
                "the circle {units:?} is gone or changed: update `CIRCLES`"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "{} layering problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn the_floors_hold_a_forbidden_arrow_up() {
    // What the test above reads for each floor: the system may not import
    // a feature, the core neither, a leaf nothing above the leaves.
    let may = |from: &str, to: &str| {
        let allowed = FLOORS
            .iter()
            .find(|(name, _)| *name == floor_of(from))
            .map_or(&[][..], |(_, allowed)| *allowed);
        allowed.contains(&floor_of(to))
    };
    assert!(!may("system::actor_system", "features::pipe"));
    assert!(!may("core::cell", "system::actor_system"));
    assert!(!may("error", "core::mailbox"));
    assert!(may("features::ask", "system::promise"));
    assert!(may("system::shutdown", "core::scheduler"));
}

#[test]
fn use_trees_give_their_leading_paths() {
    let paths = scan::tree_paths("{core::{cell::X, mailbox}, error, self, sim::a::B}", 2);
    let paths: Vec<String> = paths.iter().map(|p| p.join("::")).collect();
    assert_eq!(
        paths,
        ["core::cell", "core::mailbox", "error", "", "sim::a"]
    );
    let lib = "pub use crate::core::actor::{Actor, Props};\npub use features::{pipe, stash};\npub mod testkit {\n    pub use crate::core::scheduler::TestClock;\n}\n";
    let map = reexport_paths(lib);
    assert_eq!(map["Props"], ["core", "actor", "Props"]);
    assert_eq!(map["pipe"], ["features", "pipe"]);
    assert_eq!(
        map["testkit::TestClock"],
        ["core", "scheduler", "TestClock"]
    );
}

#[test]
fn the_scanner_sees_code_paths_only() {
    let text = concat!(
        "use crate::{a::B, c, d::{e, F}};\n",
        "use super::g;\n",
        "// crate::in_comment\n",
        "/* crate::in_block /* nested */ crate::still_comment */\n",
        "let s = \"crate::in_string // not a comment\"; let c = '\"'; let l: &'static str = s;\n",
        "let r = r#\"crate::in_raw\"#; fn f<'a>(x: &'a u8) { crate::h::i(x) }\n",
        "let q = '\\''; let k = crate::k::m; let e = '\\u{1F600}';\n",
        "#[cfg(test)]\nmod tests { use crate::in_tests; }\n",
        "#[cfg(all(test, loom))]\nmod loom_models;\n",
        "#[cfg(all(test, not(loom)))]\nmod tests;\n",
        "#[cfg(not(test))]\nuse crate::j;\n",
    );
    let scanned = scan(text);
    let crate_refs: BTreeSet<&str> = scanned
        .refs
        .iter()
        .filter(|r| r.0 == 0)
        .map(|r| r.1.as_str())
        .collect();
    assert_eq!(crate_refs, BTreeSet::from(["a", "c", "d", "h", "j", "k"]));
    assert_eq!(
        scanned
            .refs
            .iter()
            .filter(|r| r.0 == 1)
            .map(|r| r.1.as_str())
            .collect::<Vec<_>>(),
        ["g"]
    );
    assert_eq!(scanned.test_modules, ["loom_models", "tests"]);
}

/// Unit -> the units it names.
struct Graph {
    edges: BTreeMap<String, BTreeSet<String>>,
    /// (unit, unit it names) -> the first file and path that make it.
    witness: BTreeMap<(String, String), String>,
    /// Names the scanner could not place, and names taken through the
    /// crate root's re-exports.
    problems: Vec<String>,
}

/// The unit a path from the crate root names (`[core, cell, X]` ->
/// `core::cell`), if it names a module.
fn unit_of(path: &[String], top_modules: &BTreeSet<String>) -> Option<String> {
    let first = path.first()?;
    if !top_modules.contains(first) {
        return None;
    }
    if FOLDERS.contains(&first.as_str()) {
        return Some(path.iter().take(2).cloned().collect::<Vec<_>>().join("::"));
    }
    Some(first.clone())
}

impl Graph {
    fn read(src: &Path) -> Self {
        let lib = std::fs::read_to_string(src.join("lib.rs")).expect("lib.rs");
        let reexports = reexport_paths(&lib);
        let mut files = Vec::new();
        collect(src, &mut files);
        let mut skipped: BTreeSet<PathBuf> = BTreeSet::new();
        let mut scanned = Vec::new();
        for file in &files {
            let text = std::fs::read_to_string(file).expect("readable source");
            let result = scan(&text);
            let dir = module_dir(src, file);
            for name in &result.test_modules {
                skipped.insert(dir.join(format!("{name}.rs")));
                skipped.insert(dir.join(name).join("mod.rs"));
            }
            scanned.push((file.clone(), result));
        }
        let top_modules: BTreeSet<String> = files
            .iter()
            .filter(|f| f.file_name().is_some_and(|n| n != "lib.rs"))
            .map(|f| module_path(src, f)[0].clone())
            .collect();
        let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut witness = BTreeMap::new();
        let mut problems = Vec::new();
        for (file, result) in scanned {
            if skipped.contains(&file) || file == src.join("lib.rs") {
                continue;
            }
            let path = module_path(src, &file);
            let Some(unit) = unit_of(&path, &top_modules) else {
                continue;
            };
            // A floor's own `mod.rs` only declares its units.
            if FOLDERS.contains(&unit.as_str()) {
                continue;
            }
            edges.entry(unit.clone()).or_default();
            let shown = file
                .strip_prefix(src)
                .unwrap_or(&file)
                .display()
                .to_string();
            for (supers, named) in &result.paths {
                if *supers > path.len() {
                    continue;
                }
                // `crate::` (no `super`) starts at the root.
                let base = if *supers == 0 { 0 } else { path.len() - supers };
                let mut absolute: Vec<String> = path[..base].to_vec();
                absolute.extend(named.iter().cloned());
                let target = match unit_of(&absolute, &top_modules) {
                    Some(target) => target,
                    None if *supers != 0 && *supers != path.len() => continue,
                    None => {
                        let key = named.join("::");
                        let first = named.first().cloned().unwrap_or_default();
                        match reexports.get(&key).or_else(|| reexports.get(&first)) {
                            Some(real) => {
                                problems.push(format!(
                                    "{shown} imports `{key}` through the crate root: name `crate::{}`",
                                    real.join("::")
                                ));
                            }
                            None => problems.push(format!(
                                "`{key}` in {shown} is neither a module nor a re-export"
                            )),
                        }
                        continue;
                    }
                };
                if target != unit && !FOLDERS.contains(&target.as_str()) {
                    witness
                        .entry((unit.clone(), target.clone()))
                        .or_insert_with(|| format!("{shown} names `{}`", named.join("::")));
                    edges.entry(unit.clone()).or_default().insert(target);
                }
            }
        }
        for deps in edges.clone().values() {
            for dep in deps {
                edges.entry(dep.clone()).or_default();
            }
        }
        Self {
            edges,
            witness,
            problems,
        }
    }

    fn print(&self) {
        modules::print(&self.edges);
    }
}
