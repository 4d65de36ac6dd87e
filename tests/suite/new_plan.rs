//! `faultline new` (issue 30): what it writes lints clean as written, and with its
//! FILL IN values filled for the demo store, both scenarios run to PASS-smoke.

use std::path::Path;
use std::process::{Command, Output};

const EXE: &str = env!("CARGO_BIN_EXE_faultline");

fn faultline(cwd: &Path, args: &[&str]) -> Output {
    Command::new(EXE)
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("faultline runs")
}

fn said(out: &Output) -> String {
    format!(
        "exit {:?}\n{}{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Each `vars:` entry the template leaves to the user, as the demo store answers it.
fn demo_values() -> Vec<(&'static str, String)> {
    let store = format!("{EXE} demo-sut");
    let targets = "127.0.0.1:${port:n1},127.0.0.1:${port:n2},127.0.0.1:${port:n3}";
    vec![
        (
            "start_n1",
            format!(
                "exec {store} node --name n1 --listen 127.0.0.1:${{port:n1}} \
                 --followers n2=127.0.0.1:${{port:n2}},n3=127.0.0.1:${{port:n3}}"
            ),
        ),
        (
            "start_n2",
            format!("exec {store} node --name n2 --listen 127.0.0.1:${{port:n2}}"),
        ),
        (
            "start_n3",
            format!("exec {store} node --name n3 --listen 127.0.0.1:${{port:n3}}"),
        ),
        ("healthy", format!("{store} ready --targets {targets}")),
        (
            "workload",
            format!(
                "{store} client --target 127.0.0.1:${{port:n1}} --seed ${{seed}} \
                 --duration-ms ${{duration_ms}} --rate 50 --out ${{artifacts}}/history.jsonl \
                 --fault-epoch-file ${{artifacts}}/fault_epoch"
            ),
        ),
        (
            "quiet",
            format!("{store} ready --targets 127.0.0.1:${{port:n2}}"),
        ),
        (
            "dump",
            format!("{store} dump --target 127.0.0.1:${{port:n2}} --out ${{final_state}}"),
        ),
    ]
}

/// The run spec `faultline new` wrote (`written`) with every FILL IN filled for the
/// demo store, and the declarations a user makes once true.
pub(crate) fn filled_for_demo(written: &str) -> String {
    let mut filled = Vec::new();
    for line in written.lines() {
        let key = line.trim_start().split(':').next().unwrap_or_default();
        match demo_values().into_iter().find(|(k, _)| *k == key) {
            Some((k, v)) if line.starts_with("  ") && line.contains("FILL IN") => {
                filled.push(format!("  {k}: \"{v}\""));
            }
            _ => filled.push(line.replace(PLACEHOLDER_PATTERN, DEMO_PATTERN)),
        }
    }
    // The declarations a user makes once true: the demo client retries nothing.
    let filled = (filled.join("\n") + "\n").replace(
        "    # declare:\n",
        "    declare:\n      \
           gbb-9-baseline: \"n/a: correctness only\"\n      \
           weak-retries-visible: \"n/a: the demo client never retries\"\n      \
           weak-fault-variant: \"n/a: one follower pause is the fault space here\"\n",
    );
    assert!(
        !filled
            .lines()
            .any(|l| !l.trim_start().starts_with('#') && l.contains("FILL IN")),
        "a FILL IN the test does not know: {filled}"
    );
    filled
}

/// The plan `faultline new` wrote, its landing pattern the demo store's.
pub(crate) fn plan_for_demo(written: &str) -> String {
    assert!(
        written.contains(PLACEHOLDER_PATTERN),
        "the plan names the landing pattern"
    );
    written.replace(PLACEHOLDER_PATTERN, DEMO_PATTERN)
}

const PLACEHOLDER_PATTERN: &str = "FILL IN: a line n1 logs when n3 stops answering";
const DEMO_PATTERN: &str = "replication to n3 timed out";

#[test]
fn a_new_plan_lints_clean_and_filled_for_the_demo_store_passes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = faultline(dir.path(), &["new", "kv"]);
    assert!(out.status.success(), "{}", said(&out));
    let plan = dir.path().join("docs/testing-plans/kv.md");
    let spec = dir.path().join("docs/testing-plans/kv.run.yaml");
    let plan_arg = plan.to_str().expect("utf-8");
    let lint = |what: &str| {
        let out = faultline(dir.path(), &["lint", plan_arg]);
        let text = said(&out);
        assert!(out.status.success(), "{what}: {text}");
        assert!(text.contains("bindings: S1, S2"), "{what}: {text}");
        assert!(
            text.contains("Result: runnable (0 warning(s))"),
            "{what}: {text}"
        );
    };
    lint("as written");

    // Its declarations uncommented as written: handed back, each a placeholder.
    let written = std::fs::read_to_string(&spec).expect("run spec");
    let uncommented = written
        .replace("    # declare:", "    declare:")
        .replace("    #   ", "      ");
    std::fs::write(&spec, &uncommented).expect("write run spec");
    let out = faultline(dir.path(), &["lint", plan_arg]);
    let text = said(&out);
    assert_eq!(out.status.code(), Some(65), "{text}");
    assert!(
        text.contains("declare.weak-fault-variant")
            && text.contains("still holds the template's placeholder"),
        "{text}"
    );
    std::fs::write(&spec, &written).expect("write run spec");

    // Written again: refused, and the first files are kept as they are.
    let before = std::fs::read_to_string(&spec).expect("run spec");
    let again = faultline(dir.path(), &["new", "kv"]);
    assert_eq!(again.status.code(), Some(73), "{}", said(&again));
    assert_eq!(std::fs::read_to_string(&spec).expect("run spec"), before);

    let filled = filled_for_demo(&before);
    std::fs::write(&spec, filled).expect("write run spec");
    let text = std::fs::read_to_string(&plan).expect("plan");
    std::fs::write(&plan, plan_for_demo(&text)).expect("write plan");
    lint("filled for the demo store");

    let run = Command::new(EXE)
        .args(["run", plan_arg, "--headless"])
        .current_dir(dir.path())
        .output()
        .expect("faultline run");
    let session = crate::common::session_of(&run);
    let verdicts = crate::common::verdicts_by_id(&session);
    assert_eq!(
        verdicts.get("S1").map(String::as_str),
        Some("PASS-smoke"),
        "{verdicts:?}\n{}",
        said(&run)
    );
    assert_eq!(
        verdicts.get("S2").map(String::as_str),
        Some("PASS-smoke"),
        "{verdicts:?}\n{}",
        said(&run)
    );
}
