//! The floor plan of weir-streams, read from its sources: every arrow
//! between top-level modules runs down the floors, never up, except the
//! named [`EXCEPTIONS`] (the debt left, each with why); and a file names
//! the module that defines an item, not `lib.rs`'s re-exports (those are
//! for users).
//!
//! The scanner is weir-actor's layers scanner (one copy): each file under
//! `src/` is scanned for the `crate::` and `super::` paths it names
//! (comments, string literals and `#[cfg(test)]` items left out); an edge
//! goes from the file's top-level module to the top-level module the path
//! names. Run with `-- --nocapture` to see every arrow, the ones that run
//! up and the circles.
//!
//! The executors floor holds the islands (`interpreter`); the two other
//! drivers, a sink's pull (`fusion/pull.rs`) and the pool task
//! (`fusion/task.rs`), still live in `fusion` until the plan names its
//! driver.

#[path = "../../../actor/tests/layers/modules.rs"]
mod modules;
#[path = "../../../actor/tests/layers/scan.rs"]
mod scan;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use modules::{collect, module_dir, module_path};
use scan::{reexports, scan};

/// The floors, bottom first. A module may import its own floor and the
/// floors below it.
const FLOORS: &[(&str, &[&str])] = &[
    (
        "leaves",
        &[
            "completion",
            "error",
            "materializer",
            "overflow",
            "running",
            "snapshot",
            "sync",
            "tuning",
        ],
    ),
    ("stage", &["stage"]),
    ("handover", &["handover"]),
    ("fusion", &["fusion"]),
    ("plan", &["plan"]),
    ("executors", &["interpreter"]),
    ("blueprint", &["blueprint"]),
    (
        "catalogue",
        &[
            "actor",
            "graph",
            "hub",
            "io",
            "kill_switch",
            "ops",
            "queue",
            "testkit",
        ],
    ),
];

/// Arrows that still run up, each with why it is left.
const EXCEPTIONS: &[(&str, &str, &str)] = &[
    // `GraphStage::fused_fan_in` names the fused form the planner may put
    // in a crate junction's place, and `ErasedStage::as_task` the pool-task
    // form of a stage: hooks of the stage contract into fusion.
    (
        "stage",
        "fusion",
        "the stage contract's hooks name fused forms",
    ),
];

fn floor_of(module: &str) -> Option<usize> {
    FLOORS.iter().position(|(_, list)| list.contains(&module))
}

#[test]
fn every_arrow_runs_down_the_floors() {
    let graph = Graph::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    graph.print();
    let mut problems = graph.unresolved.clone();
    problems.extend(graph.through_root.iter().cloned());
    for module in graph.edges.keys() {
        if floor_of(module).is_none() {
            problems.push(format!(
                "module `{module}` is on no floor: add it to one of the lists"
            ));
        }
    }
    for (name, list) in FLOORS {
        for module in list.iter().filter(|m| !graph.edges.contains_key(**m)) {
            problems.push(format!("{name} module `{module}` does not exist"));
        }
    }
    let mut up = 0;
    for (module, deps) in &graph.edges {
        let Some(floor) = floor_of(module) else {
            continue;
        };
        for dep in deps {
            let dep_floor = floor_of(dep).unwrap_or(usize::MAX);
            if dep_floor <= floor {
                continue;
            }
            up += 1;
            let excused = EXCEPTIONS
                .iter()
                .any(|(from, to, _)| from == module && to == dep);
            let arrow = format!(
                "`{module}` ({} floor) imports `{dep}` ({} floor): {}",
                FLOORS[floor].0,
                FLOORS.get(dep_floor).map_or("no", |f| f.0),
                graph.witness[&(module.clone(), dep.clone())],
            );
            println!("up: {arrow}{}", if excused { " [exception]" } else { "" });
            if !excused {
                problems.push(arrow);
            }
        }
    }
    println!("{up} arrows run up");
    for (from, to, _) in EXCEPTIONS {
        let still = graph
            .edges
            .get(*from)
            .is_some_and(|deps| deps.contains(*to));
        if !still {
            problems.push(format!(
                "the exception `{from}` -> `{to}` is gone: remove it from the list"
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
/// Module -> the top-level modules it names.
struct Graph {
    edges: BTreeMap<String, BTreeSet<String>>,
    /// (module, module it names) -> the first file and name that make it.
    witness: BTreeMap<(String, String), String>,
    /// Names the scanner could not place (each would hide an arrow).
    unresolved: Vec<String>,
    /// Names taken through `lib.rs`'s re-exports (which are for users).
    through_root: Vec<String>,
}

impl Graph {
    fn read(src: &Path) -> Self {
        let lib = std::fs::read_to_string(src.join("lib.rs")).expect("lib.rs");
        let reexports = reexports(&lib);
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
        let mut witness = BTreeMap::new();
        let mut unresolved = Vec::new();
        let mut through_root = Vec::new();
        let mut edges: BTreeMap<String, BTreeSet<String>> = top_modules
            .iter()
            .map(|m| (m.clone(), BTreeSet::new()))
            .collect();
        for (file, result) in scanned {
            if skipped.contains(&file) || file == src.join("lib.rs") {
                continue;
            }
            let path = module_path(src, &file);
            let top = &path[0];
            for (supers, first) in &result.refs {
                // `crate::x`, or `super::x` from a top-level module, names
                // the crate root; a shallower `super::` stays inside.
                if *supers != 0 && *supers != path.len() {
                    continue;
                }
                let named = first.clone();
                let target = if top_modules.contains(&named) {
                    named
                } else if let Some(module) = reexports.get(&named) {
                    let file = file.strip_prefix(src).unwrap_or(&file);
                    through_root.push(format!(
                        "{} imports `{named}` through the crate root: name `crate::{module}`",
                        file.display()
                    ));
                    module.clone()
                } else {
                    let file = file.strip_prefix(src).unwrap_or(&file);
                    unresolved.push(format!(
                        "`{named}` in {} is neither a module nor a re-export",
                        file.display()
                    ));
                    continue;
                };
                if &target != top {
                    witness
                        .entry((top.clone(), target.clone()))
                        .or_insert_with(|| {
                            let file = file.strip_prefix(src).unwrap_or(&file);
                            format!("{} names `{first}`", file.display())
                        });
                    edges
                        .get_mut(top)
                        .expect("a top-level module")
                        .insert(target);
                }
            }
        }
        Self {
            edges,
            witness,
            unresolved,
            through_root,
        }
    }

    fn print(&self) {
        modules::print(&self.edges);
    }
}

#[test]
fn a_nested_reexport_names_its_top_module() {
    let lib = "pub use graph::bidi_flow::BidiFlow;\npub use blueprint::{Flow, Sink};\n";
    let map = reexports(lib);
    assert_eq!(map.get("BidiFlow").map(String::as_str), Some("graph"));
    assert_eq!(map.get("Sink").map(String::as_str), Some("blueprint"));
}
