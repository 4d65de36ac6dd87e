//! Toolbox discovery over the fixture SUT repository `tests/fixtures/sut-repo/`.

use std::path::{Path, PathBuf};

use faultline::plan::Severity;
use faultline::runspec::Binding;
use faultline::toolbox::{
    ItemKind, Role, Toolbox, ToolboxError, bindings_using, commands_of, discover, reimplemented,
    render_text,
};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sut-repo")
}

fn toolbox() -> Toolbox {
    discover(&fixture()).expect("fixture repo is a directory")
}

fn binding(yaml: &str) -> Binding {
    serde_saphyr::from_str::<Binding>(yaml).expect("binding yaml")
}

/// (kind, role, name, path, line) of every item, in discovery order.
fn summary(t: &Toolbox) -> Vec<(ItemKind, Role, &str, &str, Option<usize>)> {
    t.items
        .iter()
        .map(|i| (i.kind, i.role, i.name.as_str(), i.path.as_str(), i.line))
        .collect()
}

#[test]
fn discovers_exactly_the_items_with_a_role() {
    let t = toolbox();
    use ItemKind::*;
    use Role::*;
    let wf = ".github/workflows/ci.yml";
    let xt = "xtask/src/main.rs";
    assert_eq!(
        summary(&t),
        vec![
            (Folder, Other, "scripts", "scripts", None),
            (Folder, Other, "docs/runbooks", "docs/runbooks", None),
            (
                Doc,
                Other,
                "restart.md",
                "docs/runbooks/restart.md",
                Some(1)
            ),
            (
                Script,
                Chaos,
                "partition.sh",
                "scripts/partition.sh",
                Some(2)
            ),
            (MakeTarget, ClusterUp, "cluster-up", "Makefile", Some(13)),
            (
                MakeTarget,
                ClusterDown,
                "cluster-down",
                "Makefile",
                Some(16)
            ),
            (MakeTarget, Workload, "bench", "Makefile", Some(19)),
            (MakeTarget, Chaos, "chaos-partition", "Makefile", Some(22)),
            (JustRecipe, Smoke, "smoke", "justfile", Some(8)),
            (JustRecipe, Workload, "load-test", "justfile", Some(15)),
            (XtaskCommand, ClusterUp, "up", xt, Some(6)),
            (XtaskCommand, Chaos, "nemesis", xt, Some(7)),
            (CiWorkflow, ClusterUp, "ci.yml", wf, Some(8)),
            (CiWorkflow, Chaos, "ci.yml", wf, Some(9)),
        ]
    );
    assert!(t.skipped.is_empty(), "{:?}", t.skipped);
}

#[test]
fn targets_without_a_role_are_not_items() {
    let t = toolbox();
    for name in [
        "build",
        "fmt",
        "dist",
        "format.sh",
        "%.o",
        ".PHONY",
        "COMPOSE",
        "NODES",
    ] {
        assert!(
            t.items.iter().all(|i| i.name != name),
            "{name} must not be an item"
        );
    }
    // `set`, `alias` and assignments in the justfile are not recipes either.
    for name in ["set", "alias", "s", "nodes"] {
        assert!(t.items.iter().all(|i| i.name != name), "{name}");
    }
}

#[test]
fn evidence_is_the_line_that_decided_with_its_number() {
    let t = toolbox();
    let find = |name: &str| {
        t.items
            .iter()
            .find(|i| i.name == name)
            .unwrap_or_else(|| panic!("{name} discovered"))
    };
    assert_eq!(find("cluster-up").evidence, "cluster-up:");
    assert_eq!(find("load-test").evidence, "load-test n=\"3\":");
    assert_eq!(
        find("up").evidence,
        "\"up\" => run(\"docker compose up -d\"),"
    );
    let script = find("partition.sh");
    assert_eq!(
        script.evidence,
        "Cuts a node off from its peers with iptables (fault injection)."
    );
    assert_eq!(script.tools, vec!["iptables".to_string()]);
    assert_eq!(find("chaos-partition").tools, vec!["iptables".to_string()]);
    assert_eq!(find("cluster-up").tools, vec!["compose up".to_string()]);
    let tc = t
        .items
        .iter()
        .find(|i| i.kind == ItemKind::CiWorkflow && i.role == Role::Chaos)
        .expect("CI tc line");
    assert_eq!(
        tc.evidence,
        "- run: sudo tc qdisc add dev eth0 root netem delay 100ms"
    );
    for i in t.items.iter().filter(|i| i.kind != ItemKind::Folder) {
        assert!(i.line.is_some(), "{} has a line", i.name);
    }
}

#[test]
fn json_uses_kebab_case() {
    let t = toolbox();
    let json = serde_json::to_value(&t).expect("toolbox serializes");
    let items = json["items"].as_array().expect("items array");
    let up = items
        .iter()
        .find(|i| i["name"] == "cluster-up")
        .expect("cluster-up in json");
    assert_eq!(up["kind"], "make-target");
    assert_eq!(up["role"], "cluster-up");
    assert_eq!(up["line"], 13);
    assert_eq!(up["path"], "Makefile");
}

#[test]
fn text_table_has_one_row_per_item() {
    let t = toolbox();
    let text = render_text(&t);
    assert!(text.starts_with("Toolbox discovered in "), "{text}");
    assert_eq!(text.lines().count(), 2 + t.items.len(), "{text}");
    let row = text
        .lines()
        .find(|l| l.contains("chaos-partition"))
        .expect("row");
    for cell in ["chaos", "make-target", "Makefile:22", "chaos-partition:"] {
        assert!(row.contains(cell), "{row}");
    }
}

#[test]
fn bindings_using_finds_invoked_targets_and_scripts() {
    let t = toolbox();
    let b = binding(
        r#"
cluster:
  services: []
  health: { run: "make cluster-up && curl -sf localhost:8080/health" }
workload: { run: "cargo xtask up" }
faults:
  - id: cut
    after: 1s
    command: { inject: "./scripts/partition.sh 10.0.0.2", heal: "iptables -F" }
arms:
  api:
    workload: { run: "just load-test 5" }
"#,
    );
    let commands = commands_of(&b);
    assert_eq!(commands.len(), 5, "{commands:?}");
    let used: Vec<(&str, &str)> = bindings_using(&t, &commands)
        .iter()
        .map(|i| (i.path.as_str(), i.name.as_str()))
        .collect();
    assert_eq!(
        used,
        vec![
            ("scripts", "scripts"),
            ("scripts/partition.sh", "partition.sh"),
            ("Makefile", "cluster-up"),
            ("justfile", "load-test"),
            ("xtask/src/main.rs", "up"),
        ]
    );
    let plain = bindings_using(&t, &["scripts/partition.sh".to_string()]);
    assert!(plain.iter().any(|i| i.name == "partition.sh"));
    assert!(bindings_using(&t, &["make build".to_string()]).is_empty());
}

#[test]
fn reimplementing_a_fault_driver_is_warned() {
    let t = toolbox();
    let b = binding(
        r#"
workload: { run: "./client --ops 1000" }
faults:
  - id: cut
    after: 1s
    command: { inject: "iptables -A INPUT -s 10.0.0.2 -j DROP", heal: "iptables -D INPUT -s 10.0.0.2 -j DROP" }
"#,
    );
    let problems = reimplemented(&t, "S2", &b, 40);
    assert_eq!(problems.len(), 2, "{problems:?}");
    let p = &problems[0];
    assert_eq!(p.severity, Severity::Warning);
    assert_eq!(p.line, 40);
    assert_eq!(p.scenario.as_deref(), Some("S2"));
    assert_eq!(p.field, "faults.cut.command.inject");
    assert!(
        p.message.contains("Makefile:22 chaos-partition"),
        "{}",
        p.message
    );
    assert!(
        p.message.contains("scripts/partition.sh:2 partition.sh"),
        "{}",
        p.message
    );
    assert!(p.message.contains("iptables"), "{}", p.message);
}

#[test]
fn using_the_driver_is_not_warned() {
    let t = toolbox();
    let b = binding(
        r#"
workload: { run: "./client --ops 1000" }
faults:
  - id: cut
    after: 1s
    command: { inject: "make chaos-partition NODE=10.0.0.2", heal: "iptables -F INPUT" }
"#,
    );
    assert_eq!(reimplemented(&t, "S2", &b, 40), vec![]);
}

#[test]
fn calling_compose_directly_names_the_cluster_up_target() {
    let t = toolbox();
    let b = binding(
        r#"
cluster:
  health: { run: "docker compose -f deploy/compose.yml up -d --wait" }
workload: { run: "./client" }
"#,
    );
    let problems = reimplemented(&t, "S1", &b, 7);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].field, "cluster.health.run");
    assert!(problems[0].message.contains("Makefile:13 cluster-up"));
}

#[test]
fn a_non_directory_root_is_an_error_naming_it() {
    let file = fixture().join("Makefile");
    let err = discover(&file).expect_err("a file is not a repo");
    assert!(matches!(err, ToolboxError::NotADirectory { .. }), "{err:?}");
    assert!(
        err.to_string().contains(&file.display().to_string()),
        "{err}"
    );
    assert!(err.to_string().contains("not a directory"), "{err}");
    let missing = fixture().join("no-such-dir");
    let err = discover(&missing).expect_err("missing root");
    assert!(matches!(err, ToolboxError::Unreadable { .. }), "{err:?}");
    assert!(err.to_string().contains("no-such-dir"), "{err}");
}

fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for (rel, text) in files {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    dir
}

fn names(t: &Toolbox) -> Vec<(&str, Role)> {
    t.items.iter().map(|i| (i.name.as_str(), i.role)).collect()
}

#[test]
fn make_parsing_edge_cases() {
    let dir = repo(&[(
        "Makefile",
        "X ?= a:b\nexport Y := z\ndefine HELP\nstart: nothing\nendef\n\
         soak stress:: deps ; ./load.sh\n.c.o:\n\tcc $<\n$(OUT)/up: x\n\
         teardown:\n\tdocker-compose down\nprovision:\n\tkubectl apply -f k8s/\n",
    )]);
    let t = discover(dir.path()).expect("repo");
    assert_eq!(
        names(&t),
        vec![
            ("soak", Role::Workload),
            ("stress", Role::Workload),
            ("teardown", Role::ClusterDown),
            ("provision", Role::ClusterUp),
        ]
    );
    let provision = &t.items[3];
    assert_eq!(
        (provision.line, provision.evidence.as_str()),
        (Some(12), "kubectl apply -f k8s/")
    );
}

#[test]
fn just_and_clap_edge_cases() {
    let dir = repo(&[
        (
            "justfile",
            "url := \"http://x:1\"\n[private]\n@chaos-net target=\"a:b\":\n  tc qdisc add dev lo root netem loss 5%\nexport K := \"v\"\nfmt:\n  cargo fmt\n",
        ),
        (
            "xtask/src/main.rs",
            "#[derive(Subcommand)]\nenum Cmd {\n    /// Start the cluster\n    ClusterUp { nodes: u8 },\n    #[command(name = \"soak-test\")]\n    Long,\n    Dist,\n}\nfn f() {\n    match x {\n        Some(\"kill-node\") | Some(\"x\") => {}\n        _ => {}\n    }\n}\n",
        ),
    ]);
    let t = discover(dir.path()).expect("repo");
    assert_eq!(
        names(&t),
        vec![
            ("chaos-net", Role::Chaos),
            ("cluster-up", Role::ClusterUp),
            ("soak-test", Role::Workload),
            ("kill-node", Role::Chaos),
        ]
    );
    assert_eq!(
        t.items[0].tools,
        vec!["tc".to_string(), "netem".to_string()]
    );
}

#[test]
fn reference_documents_every_role() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("references/toolbox.md"),
    )
    .expect("references/toolbox.md");
    let roles = [
        Role::ClusterUp,
        Role::ClusterDown,
        Role::Workload,
        Role::Chaos,
        Role::Smoke,
        Role::Observability,
        Role::Other,
    ];
    for role in roles {
        let name = serde_json::to_value(role).expect("role serializes");
        let name = name.as_str().expect("role is a string");
        assert!(
            text.contains(&format!("| {name} |")),
            "{name} missing from the role table"
        );
    }
}

/// The CLI: `faultline toolbox DIR --json`, and `lint --sut DIR` warning about a
/// binding that calls iptables itself while the repo has a chaos target for it.
#[test]
fn cli_toolbox_and_lint_warn_about_a_reimplemented_driver() {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sut-repo");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(["toolbox", "--json"])
        .arg(&repo)
        .output()
        .expect("faultline runs");
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let names: Vec<&str> = v["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|i| i["name"].as_str())
        .collect();
    assert!(
        names.contains(&"cluster-up") && !names.contains(&"build"),
        "{names:?}"
    );

    let dir = tempfile::tempdir().expect("tempdir");
    let plan = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/runs/engine-paths.md"),
    )
    .expect("plan");
    // Drop the embedded blocks: the sidecar binds E3 instead.
    let plan: String = plan
        .split("```faultline")
        .next()
        .unwrap_or_default()
        .to_string()
        + "\n### Scenario E3: never_bound\n\n- **Falsifies if it FAILs:** C1\n- **Closes:** H1\n- **Workload:** none.\n- **Faults:** none.\n- **Oracle:** the external checker over the JSONL history reports no anomaly.\n- **Smoke budget:** 1 seed, 1 s.\n- **Hardening budget:** not applicable — no fault.\n- **Release budget:** not provided — test fixture. Revisit when: never.\n";
    std::fs::write(dir.path().join("plan.md"), plan).expect("plan");
    std::fs::write(
        dir.path().join("plan.run.yaml"),
        "version: 1\nscenarios:\n  E3:\n    workload: { run: \"sleep 1\" }\n    faults:\n      - id: cut\n        after: 1s\n        command: { inject: \"iptables -A INPUT -s 10.0.0.2 -j DROP\", heal: \"iptables -D INPUT -s 10.0.0.2 -j DROP\" }\n",
    )
    .expect("spec");
    let lint = std::process::Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(["lint", "plan.md", "--sut"])
        .arg(&repo)
        .current_dir(dir.path())
        .output()
        .expect("faultline runs");
    let text = String::from_utf8_lossy(&lint.stdout);
    assert!(text.contains("chaos-partition"), "{text}");
    assert!(text.contains("Makefile:"), "{text}");
    // Placed at the binding in the sidecar, not at that line number of the plan.
    let warning = text
        .lines()
        .find(|l| l.contains("chaos-partition"))
        .unwrap_or_default();
    assert!(
        warning.starts_with("plan.run.yaml:4: [warning] E3 "),
        "{warning}"
    );
}

/// A driver kept in a folder of its own (`tools/loadgen/main.rs`, the usual shape of a
/// Go or Rust load generator) is one tool named for the folder; a sub-folder with no
/// program in it, or a program whose name and comments say nothing, is not.
#[test]
fn a_driver_in_its_own_folder_is_one_tool() {
    let dir = repo(&[
        ("tools/loadgen/main.rs", "fn main() {}\n"),
        (
            "scripts/netsplit/main.go",
            "package main\n\n// Cuts the cluster in two with iptables.\nfunc main() {}\n",
        ),
        ("scripts/netsplit/go.mod", "module netsplit\n"),
        ("tools/soak/Cargo.toml", "[package]\nname = \"soak\"\n"),
        ("tools/soak/src/main.rs", "fn main() {}\n"),
        ("tools/notes/readme.txt", "load tests live elsewhere\n"),
        ("tools/codegen/go.mod", "module codegen\n"),
        ("bin/.cache/main.go", "// chaos\n"),
    ]);
    let t = discover(dir.path()).expect("repo");
    let tools: Vec<(&str, &str, Role)> = t
        .items
        .iter()
        .filter(|i| i.kind == ItemKind::Tool)
        .map(|i| (i.name.as_str(), i.path.as_str(), i.role))
        .collect();
    assert_eq!(
        tools,
        vec![
            ("netsplit", "scripts/netsplit", Role::Chaos),
            ("loadgen", "tools/loadgen", Role::Workload),
            ("soak", "tools/soak", Role::Workload),
        ]
    );
    let netsplit = t
        .items
        .iter()
        .find(|i| i.name == "netsplit")
        .expect("netsplit");
    assert_eq!(
        netsplit.evidence,
        "scripts/netsplit/main.go:3: Cuts the cluster in two with iptables."
    );
    assert!(
        netsplit.tools.iter().any(|t| t == "iptables"),
        "{netsplit:?}"
    );
    // A binding that runs the tool uses it; one that retypes its iptables rule is
    // pointed at it.
    let using = binding("workload: { run: \"go run ./tools/loadgen --rate 50\" }\n");
    let used: Vec<&str> = bindings_using(&t, &commands_of(&using))
        .iter()
        .map(|i| i.name.as_str())
        .collect();
    // The folder it sits in is used too (as for any file inside a discovered folder).
    assert_eq!(used, vec!["tools", "loadgen"]);
    let retyped = binding(
        "faults:\n  - id: cut\n    command: { inject: \"iptables -A INPUT -s 10.0.0.2 -j DROP\", heal: \"iptables -F\" }\n",
    );
    let warned = reimplemented(&t, "S1", &retyped, 4);
    assert!(
        warned
            .iter()
            .any(|p| p.message.contains("scripts/netsplit")),
        "{warned:?}"
    );
}
