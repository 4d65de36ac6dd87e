//! `.config/nextest.toml` names tests by their full names: a renamed or removed test
//! would silently leave its test group (and run beside every other end-to-end test).
//! Every name there is a `#[test]` of the suite, and every test that reads the shared
//! demo run is in a group.

use std::collections::BTreeSet;
use std::path::Path;

/// `(group, module::test)` for every exact name in the config's overrides.
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
        let group = o["test-group"].as_str().expect("test-group").to_string();
        let filter = o["filter"].as_str().expect("filter");
        for c in name.captures_iter(filter) {
            out.push((group.clone(), c[1].to_string()));
        }
    }
    out
}

/// The `#[test]` functions of `tests/suite/<module>.rs`, with their bodies' text.
fn tests_of(module: &str) -> Vec<(String, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/suite/{module}.rs"));
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let mut out = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("#[test]") {
        rest = &rest[at + "#[test]".len()..];
        let Some(f) = rest.find("fn ") else { break };
        let name: String = rest[f + 3..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let body = &rest[f..rest[f..].find("\n}\n").map_or(rest.len(), |e| f + e)];
        out.push((name, body.to_string()));
    }
    out
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
    let grouped: BTreeSet<String> = grouped().into_iter().map(|(_, n)| n).collect();
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
        for (name, body) in tests_of(module) {
            if body.contains("demo_run()") || body.contains("demo_findings()") {
                readers += 1;
                assert!(
                    grouped.contains(&format!("{module}::{name}")),
                    "{module}::{name} reads the shared demo run but is in no test group of \
                     .config/nextest.toml"
                );
            }
        }
    }
    assert!(readers >= 5, "found only {readers} readers of the demo run");
}
