//! The module layering of weir-actor, read from its sources: the core
//! (mailbox, cell, refs, context, dispatch, time) knows nothing of the
//! system, path resolution, selection or the features built on it.
//!
//! Each file under `src/` is scanned for the `crate::` and `super::` paths it
//! names (comments, string literals and `#[cfg(test)]` items left out); an
//! edge goes from the file's top-level module (the first path segment under
//! `src/`) to the top-level module the path names, through `lib.rs`'s
//! re-exports for paths like `crate::ActorRef`. Run with `-- --nocapture` to
//! see the strongly connected components.

mod modules;
mod scan;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use modules::{collect, module_dir, module_path};
use scan::{reexports, scan};

/// The core: a message's whole way (tell, mailbox, cell run, receive), the
/// context an actor gets, dispatch, time, dead letters and instrumentation,
/// and the [`runtime`] trait through which cells reach the system's services.
const CORE: &[&str] = &[
    "actor",
    "actor_ref",
    "bounded",
    "cell",
    "context",
    "dead_letters",
    "dispatcher",
    "instrument",
    "mailbox",
    "runtime",
    "scheduled",
    "scheduler",
];

/// Values and utilities that import nothing but each other: a path value is
/// fine in the core, path resolution is not.
const LEAVES: &[&str] = &[
    "error",
    "name",
    "path",
    "random",
    "supervision",
    "sync",
    "task_state",
    "threads",
];

/// The system (guardians, registry, termination) and resolution, above the core.
const SYSTEM: &[&str] = &["promise", "resolve", "selection", "system", "termination"];

/// Features, each a layer that uses the core and the system, never the reverse.
const FEATURES: &[&str] = &[
    "adapter",
    "ask",
    "async_handler",
    "backoff",
    "events",
    "extension",
    "function_ref",
    "pipe",
    "routing",
    "shutdown",
    "sim",
    "sleep",
    "stash",
    "test_probe",
    "watchers",
];

#[test]
fn the_core_imports_only_itself_and_leaves() {
    let graph = Graph::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    graph.print();
    let mut problems = Vec::new();
    let layers = [
        ("core", CORE),
        ("leaf", LEAVES),
        ("system", SYSTEM),
        ("feature", FEATURES),
    ];
    let layer_of = |module: &str| {
        layers
            .iter()
            .find(|(_, l)| l.contains(&module))
            .map(|(name, _)| *name)
    };
    for module in graph.edges.keys() {
        if layer_of(module).is_none() {
            problems.push(format!(
                "module `{module}` is in no layer: add it to one of the lists"
            ));
        }
    }
    for (name, list) in layers {
        for module in list.iter().filter(|m| !graph.edges.contains_key(**m)) {
            problems.push(format!("{name} module `{module}` does not exist"));
        }
    }
    for (module, deps) in &graph.edges {
        let layer = layer_of(module);
        for dep in deps {
            let dep_layer = layer_of(dep).unwrap_or("unknown");
            match layer {
                // (a) the core imports only the core and leaves.
                Some("core") if !matches!(dep_layer, "core" | "leaf") => {
                    problems.push(format!(
                        "core module `{module}` imports `{dep}` ({dep_layer} layer)"
                    ));
                }
                Some("leaf") if dep_layer != "leaf" => {
                    problems.push(format!(
                        "leaf module `{module}` imports `{dep}` ({dep_layer} layer)"
                    ));
                }
                _ => {}
            }
        }
    }
    // (b) said on its own: no core module imports a feature.
    for module in CORE {
        for dep in graph.edges.get(*module).into_iter().flatten() {
            if FEATURES.contains(&dep.as_str()) {
                problems.push(format!(
                    "core module `{module}` imports the feature `{dep}`"
                ));
            }
        }
    }
    // (c) no circle holds both a core module and one outside the core.
    for component in graph.components() {
        let core: Vec<&String> = component
            .iter()
            .filter(|m| CORE.contains(&m.as_str()))
            .collect();
        if !core.is_empty() && core.len() < component.len() {
            problems.push(format!(
                "a circle mixes the core with other layers: {component:?}"
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

/// Module -> the top-level modules it names.
struct Graph {
    edges: BTreeMap<String, BTreeSet<String>>,
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
                    module.clone()
                } else {
                    println!(
                        "note: `{named}` in {} is neither a module nor a re-export",
                        file.display()
                    );
                    continue;
                };
                if &target != top {
                    edges
                        .get_mut(top)
                        .expect("a top-level module")
                        .insert(target);
                }
            }
        }
        Self { edges }
    }

    fn components(&self) -> Vec<Vec<String>> {
        modules::components(&self.edges)
    }

    fn print(&self) {
        modules::print(&self.edges);
    }
}
