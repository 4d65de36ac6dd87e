//! `.config/nextest.toml` names tests by their full names: a renamed or removed test
//! would silently leave its test group (and run beside every other end-to-end test).
//! Every name there is a `#[test]` of the suite, and every test that reads the shared
//! demo run (itself, or through a function of its module that does) is in a group.

use std::collections::BTreeSet;
use std::path::Path;

/// `(group, module::test)` for every exact name in the config's overrides; the group
/// is empty for an override that only sets a priority.
fn grouped() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join(".config/nextest.toml")).expect("config");
    let config: toml::Table = text.parse().expect("nextest.toml is TOML");
    let overrides = config["profile"]["default"]["overrides"]
        .as_array()
        .expect("overrides");
    let name = regex::Regex::new(r"test\(=([a-z0-9_:]+)\)").expect("regex");
    let mut out = Vec::new();
    for o in overrides {
        let group = o
            .get("test-group")
            .map(|g| g.as_str().expect("test-group is a string").to_string())
            .unwrap_or_default();
        let filter = o["filter"].as_str().expect("filter");
        for c in name.captures_iter(filter) {
            out.push((group.clone(), c[1].to_string()));
        }
    }
    out
}

/// One function of a suite module, with its body's text.
struct Function {
    name: String,
    body: String,
    test: bool,
}

/// The functions of `tests/suite/<module>.rs` declared at its top level (`fn` or
/// `async fn` at the start of a line), each marked whether it is a test (`#[test]`
/// or `#[tokio::test…]` among the attribute lines right above it).
fn functions_of(module: &str) -> Vec<Function> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/suite/{module}.rs"));
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(rest) = line
            .strip_prefix("fn ")
            .or_else(|| line.strip_prefix("async fn "))
        else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let end = lines[i..]
            .iter()
            .position(|l| *l == "}")
            .map_or(lines.len(), |e| i + e);
        let test = lines[..i]
            .iter()
            .rev()
            .take_while(|l| l.starts_with("#[") || l.starts_with("//"))
            .any(|l| *l == "#[test]" || l.starts_with("#[tokio::test"));
        out.push(Function {
            name,
            body: lines[i..end].join("\n"),
            test,
        });
    }
    out
}

/// The `#[test]` functions of `tests/suite/<module>.rs`, with their bodies' text.
fn tests_of(module: &str) -> Vec<(String, String)> {
    functions_of(module)
        .into_iter()
        .filter(|f| f.test)
        .map(|f| (f.name, f.body))
        .collect()
}

#[test]
fn every_grouped_name_is_a_test_of_the_suite() {
    let grouped = grouped();
    assert!(grouped.len() > 20, "{grouped:?}");
    for (group, full) in &grouped {
        let (module, test) = full.split_once("::").expect("module::test");
        assert!(
            tests_of(module).iter().any(|(name, _)| name == test),
            "{full} (group {group}) in .config/nextest.toml is not a #[test] of tests/suite/{module}.rs"
        );
    }
}

#[test]
fn every_test_reading_the_shared_demo_run_is_in_a_group() {
    let grouped: BTreeSet<String> = grouped()
        .into_iter()
        .filter(|(group, _)| !group.is_empty())
        .map(|(_, n)| n)
        .collect();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suite");
    let mut readers = 0;
    for entry in std::fs::read_dir(dir).expect("suite").flatten() {
        let path = entry.path();
        let Some(module) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        if path.extension().is_none_or(|e| e != "rs") || module == "nextest_groups" {
            continue;
        }
        // A test reads the run itself or through a helper of its module that does.
        let functions = functions_of(module);
        let helpers: Vec<String> = functions
            .iter()
            .filter(|f| !f.test && f.body.contains("demo_run()"))
            .map(|f| format!("{}(", f.name))
            .collect();
        for f in functions.iter().filter(|f| f.test) {
            let reads = f.body.contains("demo_run()")
                || helpers.iter().any(|h| f.body.contains(h.as_str()));
            if reads {
                readers += 1;
                assert!(
                    grouped.contains(&format!("{module}::{}", f.name)),
                    "{module}::{} reads the shared demo run but is in no test group of \
                     .config/nextest.toml",
                    f.name
                );
            }
        }
    }
    assert!(readers >= 5, "found only {readers} readers of the demo run");
}
