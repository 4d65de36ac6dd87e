//! The code base is layered one way (issue 31, item 3): no import cycle between the
//! top-level modules of `src/`, none between the modules inside `engine/`, and the
//! session, engine, UI and documents never import what sits above them. A
//! `crate::<module>` (or, inside `engine/`, `super::<module>`) path is an import.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Module → the modules it imports.
type Graph = BTreeMap<String, BTreeSet<String>>;

/// Each `.rs` file under `dir` (recursively) with its text.
fn sources(dir: &Path) -> Vec<(std::path::PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            for entry in std::fs::read_dir(&path).expect("dir").flatten() {
                stack.push(entry.path());
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).expect("source");
            out.push((path, text));
        }
    }
    out
}

/// The names after each `prefix` in `text` (`crate::engine::` → `driver`, …).
fn after<'t>(text: &'t str, prefix: &str) -> Vec<&'t str> {
    text.match_indices(prefix)
        .map(|(i, _)| {
            let rest = &text[i + prefix.len()..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            &rest[..end]
        })
        .collect()
}

/// The import graph of the modules directly inside `dir` (`foo.rs` and `foo/` are
/// module `foo`; `mod.rs`, `lib.rs` and `main.rs` are the parent, not a module).
/// `prefixes(file's module, nested)` gives the path prefixes that name a sibling.
fn graph(dir: &Path, prefixes: impl Fn(bool) -> Vec<&'static str>) -> Graph {
    let mut modules = BTreeSet::new();
    for entry in std::fs::read_dir(dir).expect("dir").flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let name = name.strip_suffix(".rs").unwrap_or(&name).to_string();
        if !["mod", "lib", "main"].contains(&name.as_str()) {
            modules.insert(name);
        }
    }
    let mut out = Graph::new();
    for (path, text) in sources(dir) {
        let rel = path.strip_prefix(dir).expect("under dir");
        let mut parts = rel.components();
        let first = parts
            .next()
            .map(|c| c.as_os_str().to_string_lossy().to_string())
            .unwrap_or_default();
        let module = first.strip_suffix(".rs").unwrap_or(&first).to_string();
        if !modules.contains(&module) {
            continue;
        }
        let nested = rel.components().count() > 1;
        let deps = out.entry(module.clone()).or_default();
        for prefix in prefixes(nested) {
            for name in after(&text, prefix) {
                if name != module && modules.contains(name) {
                    deps.insert(name.to_string());
                }
            }
        }
        assert!(
            !text.contains("crate::{"),
            "{} groups crate paths, which would hide an import here",
            path.display()
        );
    }
    out
}

/// The import cycles of `graph`: its strongly connected components of more than one
/// module (Tarjan), each sorted.
fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    struct State<'g> {
        graph: &'g Graph,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.graph.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.out.push(component);
            }
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out.sort();
    s.out
}

fn src() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The checker itself: a deliberate cycle is found, a chain is not.
#[test]
fn the_cycle_check_finds_a_deliberate_cycle() {
    let g = |edges: &[(&str, &str)]| {
        let mut g = Graph::new();
        for (a, b) in edges {
            g.entry(a.to_string()).or_default().insert(b.to_string());
            g.entry(b.to_string()).or_default();
        }
        g
    };
    let chain = g(&[
        ("engine", "session"),
        ("session", "nemesis"),
        ("nemesis", "host"),
    ]);
    assert!(cycles(&chain).is_empty());
    let looped = g(&[
        ("engine", "session"),
        ("session", "nemesis"),
        ("nemesis", "engine"),
        ("nemesis", "host"),
    ]);
    assert_eq!(cycles(&looped), [["engine", "nemesis", "session"]]);
    // And on real files: a module that imports one importing it is found.
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("a.rs"), "use crate::b::X;").expect("write");
    std::fs::create_dir(dir.path().join("b")).expect("mkdir");
    std::fs::write(dir.path().join("b/mod.rs"), "pub fn f() { crate::a::g() }").expect("write");
    std::fs::write(dir.path().join("c.rs"), "use crate::a::Y;").expect("write");
    let found = cycles(&graph(dir.path(), |_| vec!["crate::"]));
    assert_eq!(found, [["a", "b"]]);
}

/// No import cycle between the top-level modules of `src/`.
#[test]
fn no_import_cycle_between_top_level_modules() {
    let graph = graph(&src(), |_| vec!["crate::"]);
    assert!(graph.len() > 10, "too few modules read: {graph:?}");
    let found = cycles(&graph);
    assert!(
        found.is_empty(),
        "import cycles between top-level modules of src/: {found:?}; each module's imports: {graph:?}"
    );
}

/// No import cycle between the modules inside `engine/`.
#[test]
fn no_import_cycle_inside_the_engine() {
    let graph = graph(&src().join("engine"), |nested| {
        if nested {
            vec!["crate::engine::", "super::super::"]
        } else {
            vec!["crate::engine::", "super::"]
        }
    });
    assert!(graph.contains_key("driver"), "{graph:?}");
    let found = cycles(&graph);
    assert!(
        found.is_empty(),
        "import cycles inside engine/: {found:?}; each module's imports: {graph:?}"
    );
}

/// The layers import downward only: base (sanitize, host, exec, …) ← nemesis ←
/// runspec ← session ← engine ← the readers (report, headless, tui) ← launch /
/// attach. In words: the session (journal, reducer, questions,
/// outcome) knows no engine, UI or command; the engine knows no UI or command; the
/// UI and the documents know no engine. A `crate::<module>` path in a layer's files
/// naming a module above it fails here, with the file.
#[test]
fn engine_session_and_ui_import_no_cycle() {
    let forbidden: &[(&str, &[&str])] = &[
        (
            "session",
            &[
                "engine", "tui", "attach", "launch", "headless", "report", "author",
            ],
        ),
        ("engine", &["tui", "attach", "launch", "headless"]),
        ("tui", &["engine", "launch", "attach", "headless", "report"]),
        ("report", &["engine", "tui", "attach", "launch", "headless"]),
        ("headless", &["engine", "tui", "attach", "launch", "report"]),
        ("author", &["engine", "tui", "attach", "launch", "headless"]),
        // Below the session: base ← nemesis ← runspec ← session (issue 31, item 3).
        (
            "runspec",
            &["session", "engine", "report", "tui", "headless"],
        ),
        (
            "nemesis",
            &["runspec", "session", "engine", "report", "tui", "headless"],
        ),
        (
            "oracle",
            &["session", "engine", "runspec", "nemesis", "report", "tui"],
        ),
        (
            "exec",
            &["nemesis", "runspec", "session", "engine", "oracle"],
        ),
        (
            "host",
            &["exec", "nemesis", "runspec", "session", "engine", "oracle"],
        ),
    ];
    let src = src();
    let mut found = Vec::new();
    for (layer, above) in forbidden {
        let mut stack = vec![src.join(layer), src.join(format!("{layer}.rs"))];
        let mut read = 0;
        while let Some(path) = stack.pop() {
            if path.is_dir() {
                for entry in std::fs::read_dir(&path).expect("dir").flatten() {
                    stack.push(entry.path());
                }
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            read += 1;
            // A grouped `crate::{…}` would hide a path from the check below.
            if text.contains("crate::{") {
                found.push(format!("{} groups crate paths", path.display()));
            }
            for module in *above {
                if text.contains(&format!("crate::{module}::"))
                    || text.contains(&format!("crate::{module};"))
                {
                    found.push(format!("{} uses crate::{module}", path.display()));
                }
            }
        }
        assert!(read > 0, "no source read for the `{layer}` layer");
    }
    assert!(found.is_empty(), "imports against the layering: {found:?}");
}

/// The library without its `app` feature (what the fuzz targets build) compiles
/// only if no module outside `app` names one inside it: the modules `src/lib.rs`
/// puts behind `#[cfg(feature = "app")]` are read from it, and every other
/// module's `crate::` paths are checked against them, tests included.
#[test]
fn the_core_names_no_module_of_the_app_feature() {
    let lib = std::fs::read_to_string(src().join("lib.rs")).expect("lib.rs");
    let mut app = BTreeSet::new();
    let mut gated = false;
    for line in lib.lines().map(str::trim) {
        if line == "#[cfg(feature = \"app\")]" {
            gated = true;
        } else if let Some(name) = line
            .strip_prefix("pub mod ")
            .and_then(|m| m.strip_suffix(';'))
        {
            if gated {
                app.insert(name.to_string());
            }
            gated = false;
        } else if !line.starts_with("#[") {
            gated = false;
        }
    }
    for must in ["session", "engine", "tui", "report", "launch"] {
        assert!(app.contains(must), "{must} is not behind `app`: {app:?}");
    }
    let graph = graph(&src(), |_| vec!["crate::"]);
    let mut found = Vec::new();
    for (module, deps) in &graph {
        if app.contains(module) {
            continue;
        }
        for dep in deps.intersection(&app) {
            found.push(format!("{module} names {dep}"));
        }
    }
    assert!(
        found.is_empty(),
        "core modules name `app` ones (the library without `app` would not build): {found:?}"
    );
}
