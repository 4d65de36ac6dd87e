//! `faultline lint` end to end: the real binary on real files.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

fn faultline(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("the faultline binary runs")
}

/// A plan in the newer template whose one scenario has every field lint needs.
fn plan_with_oracle(oracle: &str) -> String {
    format!(
        "# Test Plan: tiny\n\n\
         **Date:** 2026-12-01\n**Plan mode:** change-scoped\n\n\
         ## 1b. Claims under test\n\n\
         | ID | Claim | Category | Source | Inferred? |\n|---|---|---|---|---|\n\
         | C1 | Acked writes survive a crash. | durability | store.rs | no |\n\n\
         ## 7. Scenarios\n\n\
         ### Scenario S1: acked_writes_survive_primary_kill\n\n\
         - **Falsifies if it FAILs:** C1\n\
         - **Workload:** one client writing unique keys for 5 s.\n\
         - **Faults:** SIGKILL the primary at 2 s.\n\
         - **Oracle:** {oracle}\n\
         - **Smoke budget:** 1 seed, 3 s.\n\
         - **Hardening budget:** 3 seeds, 5 s each, one kill per seed.\n\
         - **Release budget:** not provided — no release gate yet. Revisit when: the store ships.\n\n\
         #### §7.M\n\
         - **Model under test:** register\n\
         - **Operation history:** default 11 fields, in-process recorder.\n\
         - **Checker:** no-lost-ack over the history and a follower dump.\n\
         - **Nemesis + landing evidence:** SIGKILL of the primary; landing = follower logs \
         `no contact from primary`.\n\
         - **Ambiguous outcomes:** default.\n\
         - **Reduction plan:** bisect the schedule.\n"
    )
}

#[test]
fn corpus_plan_is_handed_back_with_all_17_scenarios() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(plan) = common::corpus_path() else {
        return;
    };
    let out = faultline(
        &["lint", plan.to_str().expect("utf-8 path"), "--json"],
        dir.path(),
    );
    assert_eq!(
        out.status.code(),
        Some(65),
        "the corpus plan declares no budget tiers"
    );
    let json: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("lint --json prints JSON");
    let scenarios = json["scenarios"].as_array().expect("scenarios array");
    let ids: Vec<&str> = scenarios.iter().filter_map(|s| s["id"].as_str()).collect();
    let expected: Vec<String> = (1..=17).map(|n| format!("S{n:02}")).collect();
    assert_eq!(ids, expected);
    for s in scenarios {
        let state = s["seven_m"]["state"].as_str().unwrap_or("");
        assert!(
            ["filled", "not-applicable", "missing"].contains(&state),
            "{} has §7.M state {state:?}",
            s["id"]
        );
    }
    assert_eq!(json["runnable"], serde_json::Value::Bool(false));
    let problems = json["problems"].to_string();
    for id in &expected {
        assert!(problems.contains(id.as_str()), "no problem names {id}");
    }
    // S11 falsifies an ordering claim (C39) yet writes §7.M "not applicable".
    let s11_flagged = json["problems"]
        .as_array()
        .expect("problems array")
        .iter()
        .any(|p| p["scenario"] == "S11" && p.to_string().contains("7.M"));
    assert!(
        s11_flagged,
        "S11's gated-but-not-applicable §7.M is not flagged"
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).expect("read tempdir").count(),
        0,
        "lint must not create anything"
    );
}

#[test]
fn corpus_plan_text_output_names_file_and_line() {
    let Some(plan) = common::corpus_path() else {
        return;
    };
    let out = faultline(
        &["lint", plan.to_str().expect("utf-8 path")],
        Path::new("."),
    );
    assert_eq!(out.status.code(), Some(65));
    let text = String::from_utf8_lossy(&out.stdout);
    let located = format!("{}:", plan.display());
    assert!(
        text.contains(&located),
        "problems are not located as file:line:\n{text}"
    );
}

#[test]
fn look_at_it_oracles_are_handed_back_and_nothing_is_created() {
    let weak = [
        "logs look fine",
        "no errors observed in the logs",
        "visually confirm recovery",
        "dashboards stay green",
    ];
    for oracle in weak {
        let dir = tempfile::tempdir().expect("tempdir");
        let plan = dir.path().join("plan.md");
        std::fs::write(&plan, plan_with_oracle(oracle)).expect("write plan");
        let out = faultline(&["lint", "plan.md"], dir.path());
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(65),
            "oracle {oracle:?} was accepted:\n{text}"
        );
        assert!(
            text.contains("S1"),
            "hand-back does not name the scenario:\n{text}"
        );
        assert!(
            text.to_lowercase().contains("oracle"),
            "hand-back does not name the field:\n{text}"
        );
        // `run` hands it back too, before any session directory or child process:
        // the sidecar's workload would leave a marker file if it ever started.
        let spec = "version: 1\nscenarios:\n  S1:\n    workload: { run: \"touch started\" }\n";
        std::fs::write(dir.path().join("plan.run.yaml"), spec).expect("write spec");
        let run = faultline(&["run", "plan.md", "--headless", "--yes"], dir.path());
        assert_eq!(
            run.status.code(),
            Some(65),
            "`run` accepted oracle {oracle:?}"
        );
        let mut entries: Vec<_> = std::fs::read_dir(dir.path())
            .expect("read tempdir")
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        entries.sort();
        assert_eq!(entries, vec!["plan.md", "plan.run.yaml"]);
    }
}

/// A directory holding `plan.md`, a plan whose one scenario's oracle a built-in
/// checker can judge.
fn machine_checkable_plan() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("plan.md"),
        plan_with_oracle(
            "no-lost-ack: every acknowledged write is present in the follower dump at quiescence.",
        ),
    )
    .expect("write plan");
    dir
}

/// `faultline lint plan.md` in `dir` exits 0 (runnable).
fn assert_runnable(dir: &Path) {
    let out = faultline(&["lint", "plan.md"], dir);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn a_machine_checkable_plan_is_runnable() {
    let dir = machine_checkable_plan();
    assert_runnable(dir.path());
}

#[test]
fn unreadable_plan_exits_66_naming_the_path() {
    let out = faultline(&["lint", "no-such-plan.md"], Path::new("."));
    assert_eq!(out.status.code(), Some(66));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-plan.md"));
}

/// `--version` alone is answered before clap builds its command tree; it must say
/// what clap says (clap answers it when anything else is on the line).
#[test]
fn version_alone_says_what_clap_says() {
    let dir = std::env::temp_dir();
    let want = format!("faultline {}\n", env!("CARGO_PKG_VERSION"));
    for args in [&["--version"][..], &["-V"], &["-V", "--version"]] {
        let out = faultline(args, &dir);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), want, "{args:?}");
    }
    // Anything else on the line goes to clap, which answers as before.
    let after = faultline(&["--version", "lint"], &dir);
    assert_eq!(String::from_utf8_lossy(&after.stdout), want);
    assert_eq!(
        faultline(&["lint", "--version"], &dir).status.code(),
        Some(64)
    );
}

#[test]
fn usage_error_exits_64() {
    let out = faultline(&["lint"], Path::new("."));
    assert_eq!(out.status.code(), Some(64));
}

/// Did-you-mean offers only what `--help` lists: never `demo-sut` or `watchdog`,
/// which are for faultline's own use.
#[test]
fn a_mistyped_subcommand_is_never_offered_a_hidden_one() {
    let out = faultline(&["demo-st"], Path::new("."));
    assert_eq!(out.status.code(), Some(64));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("unrecognized subcommand 'demo-st'"), "{said}");
    assert!(
        said.contains("a similar subcommand exists: 'demo'"),
        "{said}"
    );
    assert!(!said.contains("demo-sut"), "{said}");
    assert!(said.contains("Usage: faultline"), "{said}");

    let out = faultline(&["watchdg"], Path::new("."));
    assert_eq!(out.status.code(), Some(64));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("unrecognized subcommand 'watchdg'"), "{said}");
    assert!(!said.contains("watchdog"), "{said}");

    // A visible one is still offered.
    let out = faultline(&["lnt"], Path::new("."));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("'lint'"), "{said}");
}

/// The traps a real run spec hit, each caught by lint before a cluster is spent on
/// it: a misspelled built-in checker, a `${var}` nothing sets, a hardening tier with
/// too few seeds. Each is named with the sidecar's own file and line and the field;
/// lint also says which run spec it read and what it binds.
#[test]
fn run_spec_traps_are_handed_back_with_file_line_and_field() {
    let dir = machine_checkable_plan();
    let sidecar = "version: 1\n\
                   vars: { final_state: \"dump --all\" }\n\
                   scenarios:\n  \
                     S1:\n    \
                       workload: { run: \"client --dir ${log_dir}\" }\n    \
                       checker: { builtin: no-lost-acks }\n    \
                       tiers:\n      \
                         hardening: { duration: 10s, seeds: 2 }\n";
    std::fs::write(dir.path().join("plan.run.yaml"), sidecar).expect("write sidecar");
    let out = faultline(&["lint", "plan.md"], dir.path());
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(65), "{text}");
    assert!(
        text.contains("Run spec: plan.run.yaml (read), 0 block(s) in the plan; bindings: S1"),
        "{text}"
    );
    // Each trap is placed at its binding in the sidecar (not at a plan line) and
    // names its field.
    for (field, says) in [
        ("run spec checker.builtin", "did you mean `no-lost-ack`?"),
        ("run spec workload.run", "`${log_dir}` is set by nothing"),
        (
            "run spec tiers.hardening.seeds",
            "2 seed(s) can never earn PASS-hardening",
        ),
    ] {
        let line = text
            .lines()
            .find(|l| l.contains(field))
            .unwrap_or_else(|| panic!("no problem for {field}: {text}"));
        assert!(
            line.starts_with("plan.run.yaml:")
                && line.contains("[hand-back] S1 ")
                && line.contains(says),
            "{line}"
        );
    }
    // A var named like one faultline sets would never be used.
    assert!(
        text.lines().any(|l| l.contains("vars.final_state")
            && l.contains("[hand-back]")
            && l.contains("is set by faultline for every run")),
        "{text}"
    );
    // Fixed, the same plan is runnable.
    let fixed = sidecar
        .replace("final_state: ", "dump: ")
        .replace("${log_dir}", "${artifacts}")
        .replace("no-lost-acks", "no-lost-ack")
        .replace("seeds: 2", "seeds: 3");
    std::fs::write(dir.path().join("plan.run.yaml"), fixed).expect("write sidecar");
    assert_runnable(dir.path());
}

/// A value written once under an anchor and used by other bindings through a merge
/// key and an alias is one problem at the anchor's own line and column, naming each
/// use, filed under the binding that writes it; a plain value is at its exact line and
/// column.
#[test]
fn run_spec_traps_under_anchors_aliases_and_merge_keys_are_placed_where_written() {
    let dir = machine_checkable_plan();
    let sidecar = "\
version: 1
scenarios:
  S1: &base
    workload: { run: \"client ${nope}\" }
    checker: { builtin: no-lost-acks }
  S2:
    <<: *base
    tiers: { hardening: { duration: 10s, seeds: 2 } }
  S3: *base
  S4:
    workload: { run: \"client\" }
    checker: &chk
      builtin: no-lost-ak
  S5:
    workload: { run: \"client\" }
    checker: *chk
";
    std::fs::write(dir.path().join("plan.run.yaml"), sidecar).expect("write sidecar");
    let out = faultline(&["lint", "plan.md"], dir.path());
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(65), "{text}");
    let anchored: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("`no-lost-acks`"))
        .collect();
    assert_eq!(anchored.len(), 1, "once, not once per binding: {text}");
    assert!(
        anchored[0].starts_with("plan.run.yaml:5:25: [hand-back] S1 run spec checker.builtin: "),
        "{}",
        anchored[0]
    );
    assert!(
        anchored[0].ends_with("(written here once, used through aliases by S2 at 7:9, S3 at 9:7)"),
        "{}",
        anchored[0]
    );
    // A `${var}` in the anchored workload likewise, at its string.
    let unset: Vec<&str> = text.lines().filter(|l| l.contains("`${nope}`")).collect();
    assert_eq!(unset.len(), 1, "{text}");
    assert!(
        unset[0].starts_with("plan.run.yaml:4:22: [hand-back] S1 run spec workload.run: ")
            && unset[0].ends_with("used through aliases by S2 at 7:9, S3 at 9:7)"),
        "{}",
        unset[0]
    );
    // A plain value, written by the one binding that has it: its exact line and column.
    let seeds: Vec<&str> = text.lines().filter(|l| l.contains("2 seed(s)")).collect();
    assert_eq!(seeds.len(), 1, "{text}");
    assert!(
        seeds[0].starts_with("plan.run.yaml:8:49: [hand-back] S2 run spec tiers.hardening.seeds: ")
            && !seeds[0].contains("aliases"),
        "{}",
        seeds[0]
    );
    // Anchored on a mapping in S4 and used by S5: at the value's own line.
    let plain: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("`no-lost-ak`"))
        .collect();
    assert_eq!(plain.len(), 1, "{text}");
    assert!(
        plain[0].starts_with("plan.run.yaml:13:16: [hand-back] S4 run spec checker.builtin: ")
            && plain[0].ends_with("used through aliases by S5 at 16:14)"),
        "{}",
        plain[0]
    );
    // Machine-readable too: the column beside the line.
    let out = faultline(&["lint", "--json", "plan.md"], dir.path());
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let problem = json["problems"]
        .as_array()
        .and_then(|ps| {
            ps.iter().find(|p| {
                p["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("`no-lost-ak`"))
            })
        })
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        (&problem["line"], &problem["column"]),
        (&13.into(), &16.into()),
        "{json}"
    );
}

/// A stray fence line hides every scenario after it: lint hands the plan back naming
/// the fence's line, instead of calling a plan with no scenario runnable.
#[test]
fn a_stray_code_fence_is_handed_back_at_its_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = plan_with_oracle(
        "no-lost-ack: every acknowledged write is present in the follower dump at quiescence.",
    )
    .replace("## 7. Scenarios", "```\n## 7. Scenarios");
    let fence = text
        .lines()
        .position(|l| l == "```")
        .expect("the stray fence")
        + 1;
    std::fs::write(dir.path().join("plan.md"), &text).expect("write plan");
    let out = faultline(&["lint", "plan.md"], dir.path());
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(65), "{said}");
    assert!(
        said.contains(&format!(
            "plan.md:{fence}: [hand-back] code fence: this code fence is never closed"
        )),
        "{said}"
    );
    assert!(said.contains("the plan has no scenario"), "{said}");
}

/// Bytes that are not UTF-8, in the plan or in its sidecar, are refused with where
/// they are — never read as an absent sidecar.
#[test]
fn text_that_is_not_utf8_is_refused_with_its_line_and_byte() {
    let dir = machine_checkable_plan();
    let mut bytes = std::fs::read(dir.path().join("plan.md")).expect("plan");
    let third = bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .nth(1)
        .map(|(i, _)| i + 1)
        .expect("a third line");
    bytes.insert(third + 2, 0xff);
    std::fs::write(dir.path().join("bad.md"), &bytes).expect("bad plan");
    let out = faultline(&["lint", "bad.md"], dir.path());
    assert_eq!(out.status.code(), Some(66));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(&format!(
            "not UTF-8 at line 3, column 3 (byte {})",
            third + 2
        )),
        "{said}"
    );
    std::fs::write(dir.path().join("plan.run.yaml"), b"version: 1\n\xfe\n").expect("sidecar");
    let out = faultline(&["lint", "plan.md"], dir.path());
    assert_eq!(out.status.code(), Some(66));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("plan.run.yaml") && said.contains("not UTF-8 at line 2, column 1"),
        "{said}"
    );
}

/// The `|---|` row under a table's header is what makes markdown read it as a table.
/// Without it the claims are plain text: the plan read as "Claims: 0", and a scenario
/// handed back for its gated claim's missing §7.M became runnable. Both are handed
/// back now, at the table's line.
#[test]
fn a_table_without_its_delimiter_row_is_handed_back() {
    let dir = machine_checkable_plan();
    let text = std::fs::read_to_string(dir.path().join("plan.md")).expect("plan");
    let header = text
        .lines()
        .position(|l| l.starts_with("| ID | Claim"))
        .expect("claims header")
        + 1;
    let no_seven_m = text.split("#### §7.M").next().expect("head").to_string();
    for (plan, handed_back_before) in [(text.clone(), false), (no_seven_m, true)] {
        std::fs::write(dir.path().join("plan.md"), &plan).expect("plan");
        let out = faultline(&["lint", "plan.md"], dir.path());
        let said = String::from_utf8_lossy(&out.stdout);
        let code = if handed_back_before { 65 } else { 0 };
        assert_eq!(out.status.code(), Some(code), "{said}");
        let broken = plan.replace("|---|---|---|---|---|\n", "");
        std::fs::write(dir.path().join("plan.md"), &broken).expect("plan");
        let out = faultline(&["lint", "plan.md"], dir.path());
        let said = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(65), "{said}");
        assert!(said.contains("Claims: 0 (0 gated)"), "{said}");
        assert!(
            said.contains(&format!(
                "plan.md:{header}: [hand-back] §1b Claims table: these 2 line(s) are written \
                 as a table but are not one"
            )),
            "{said}"
        );
        assert!(
            said.contains("[hand-back] S1 §1b Claims: no claim is read from §1b, yet S1"),
            "{said}"
        );
    }
    // A requirements table that lost its row is named for what it is.
    let broken = text.replace(
        "## 7. Scenarios",
        "## 6b. Environment requirements\n\n| Requirement | Version floor |\n| tc/netem | - |\n\n## 7. Scenarios",
    );
    std::fs::write(dir.path().join("plan.md"), &broken).expect("plan");
    let out = faultline(&["lint", "plan.md"], dir.path());
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(65), "{said}");
    assert!(
        said.contains("§6b Environment requirements table"),
        "{said}"
    );
}

/// A run-spec value of the wrong type names the field path (not the value) and what
/// the field takes, at the sidecar's own line and the value's column — never a plan
/// line.
#[test]
fn run_spec_yaml_errors_name_the_field_path_at_the_sidecar_line() {
    let dir = machine_checkable_plan();
    let cases = [
        (
            "    faults:\n      - id: cut\n        after: true\n",
            (6, 16),
            "S1 run spec field `scenarios.S1.faults[0].after`: expected a duration such as \
             300ms, 5s or 2m, got boolean `true`",
        ),
        (
            "    tiers:\n      hardening: { duration: 10s, seeds: many }\n",
            (5, 42),
            "S1 run spec field `scenarios.S1.tiers.hardening.seeds`: expected a whole number",
        ),
        (
            "    workload: { deadline: 5s }\n",
            (4, 0),
            "S1 run spec field `scenarios.S1.workload.run`: `run` is required here and missing",
        ),
        (
            "    history: { path: h.jsonl, format: jsnl }\n",
            (4, 39),
            "`scenarios.S1.history.format`: `jsnl` is not allowed here; use one of: jsonl, edn, \
             porcupine",
        ),
    ];
    for (body, line, says) in cases {
        let sidecar = format!("version: 1\nscenarios:\n  S1:\n{body}");
        std::fs::write(dir.path().join("plan.run.yaml"), &sidecar).expect("sidecar");
        let out = faultline(&["lint", "plan.md"], dir.path());
        let said = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(65), "{said}");
        let problem = said
            .lines()
            .find(|l| l.contains("run spec field"))
            .unwrap_or_else(|| panic!("no run-spec problem: {said}"));
        // `file:line:column:`, the column of the value itself.
        let (line, column) = line;
        let at = if column == 0 {
            format!("plan.run.yaml:{line}:")
        } else {
            format!("plan.run.yaml:{line}:{column}: [hand-back] ")
        };
        assert!(problem.starts_with(&at), "{problem}");
        assert!(problem.contains(says), "{problem}");
    }
}

/// A billion-laughs run spec (each level ten aliases of the one before) is refused in a
/// sentence naming the file, the limit and that aliases are expanded.
#[test]
fn an_alias_bomb_is_refused_in_a_sentence() {
    let dir = machine_checkable_plan();
    let mut spec = format!(
        "version: 1\nscenarios:\n  L0: &l0 {{ workload: {{ run: \"{}\" }} }}\n",
        "lol".repeat(100)
    );
    for level in 1..10 {
        let arms: Vec<String> = (0..10).map(|k| format!("a{k}: *l{}", level - 1)).collect();
        spec.push_str(&format!(
            "  L{level}: &l{level} {{ arms: {{ {} }} }}\n",
            arms.join(", ")
        ));
    }
    std::fs::write(dir.path().join("plan.run.yaml"), &spec).expect("sidecar");
    let out = faultline(&["lint", "plan.md"], dir.path());
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(65), "{said}");
    let problem = said
        .lines()
        .find(|l| l.contains("aliases"))
        .unwrap_or_else(|| panic!("no alias refusal: {said}"));
    assert!(problem.starts_with("plan.run.yaml:"), "{problem}");
    assert!(
        problem.contains("safety limit (more than ")
            && problem.contains("once its aliases are expanded"),
        "{problem}"
    );
    assert!(!said.contains("budget breached"), "{said}");
    // `run` refuses it the same way.
    let run = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(["run", "plan.md", "--headless", "--yes"])
        .current_dir(dir.path())
        .output()
        .expect("run");
    assert_eq!(run.status.code(), Some(65));
    assert!(
        String::from_utf8_lossy(&run.stderr).contains("once its aliases are expanded"),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
}

/// Every field the §7.M history names that the JSONL reader would drop is warned
/// about, when the run spec has the reader parse that scenario's history.
#[test]
fn history_fields_the_reader_would_drop_are_warned() {
    let dir = machine_checkable_plan();
    let text = std::fs::read_to_string(dir.path().join("plan.md")).expect("plan");
    let plan = text.replace(
        "default 11 fields, in-process recorder.",
        "`(op_id, process_id, invoke_ts, complete_ts, op_type, leader_term)` per op.",
    );
    let line = plan
        .lines()
        .position(|l| l.contains("process_id"))
        .expect("history line")
        + 1;
    std::fs::write(dir.path().join("plan.md"), &plan).expect("plan");
    assert_runnable(dir.path());
    let sidecar = "version: 1\nscenarios:\n  S1:\n    workload: { run: client }\n    \
                   history: { path: \"${artifacts}/history.jsonl\", format: jsonl }\n";
    std::fs::write(dir.path().join("plan.run.yaml"), sidecar).expect("sidecar");
    let out = faultline(&["lint", "plan.md"], dir.path());
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "a warning, not a hand-back: {said}"
    );
    let warned: Vec<&str> = said
        .lines()
        .filter(|l| l.contains("history reader reads"))
        .collect();
    assert_eq!(warned.len(), 2, "{said}");
    for (field, l) in ["process_id", "leader_term"].iter().zip(&warned) {
        assert!(
            l.starts_with(&format!(
                "plan.md:{line}: [warning] S1 §7.M Operation history: `{field}` is not a field"
            )) && l.contains("plan.run.yaml:4"),
            "{l}"
        );
    }
}

/// A run spec's `history.fields` renames what the recorder calls a field; a mapping
/// onto a field the reader does not read, or on a history that is not JSONL, is lost
/// and warned about at the sidecar's own file and line.
#[test]
fn history_field_mappings_the_reader_would_drop_are_warned() {
    let dir = machine_checkable_plan();
    let sidecar = "version: 1\nscenarios:\n  S1:\n    workload: { run: client }\n    \
                   history:\n      path: \"${artifacts}/history.jsonl\"\n      format: jsonl\n      \
                   fields: { process: process_id, node_seen: seen_by }\n";
    std::fs::write(dir.path().join("plan.run.yaml"), sidecar).expect("sidecar");
    let out = faultline(&["lint", "plan.md"], dir.path());
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "a warning: {said}");
    let warned: Vec<&str> = said
        .lines()
        .filter(|l| l.contains("history.fields"))
        .collect();
    assert_eq!(warned.len(), 1, "process is read; node_seen is not: {said}");
    assert!(
        warned[0].starts_with("plan.run.yaml:4: [warning] S1 run spec history.fields.node_seen:")
            && warned[0].contains("maps `seen_by` to `node_seen`")
            && warned[0].contains("op_id, process"),
        "{}",
        warned[0]
    );
    let edn = sidecar.replace("format: jsonl", "format: edn");
    std::fs::write(dir.path().join("plan.run.yaml"), edn).expect("sidecar");
    let out = faultline(&["lint", "plan.md"], dir.path());
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        said.lines().filter(|l| l.contains("never applied")).count(),
        2,
        "{said}"
    );
}

/// The checker a scenario's §7.M names is quoted in backticks without the plan's
/// sentence punctuation, so nothing after the name reads as part of it: in the
/// summary (`checker `no-lost-ack`;`, never `checker no-lost-ack.;`) and in the
/// picker's warning (`checker `no-lost-ack` does not match`).
#[test]
fn the_checker_quoted_drops_the_plans_full_stop() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = plan_with_oracle("no-lost-ack over the history.").replace(
        "- **Checker:** no-lost-ack over the history and a follower dump.",
        "- **Checker:** no-lost-ack.",
    );
    std::fs::write(dir.path().join("plan.md"), &plan).expect("plan");
    let out = faultline(&["lint", "plan.md"], dir.path());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("checker `no-lost-ack`;"), "{text}");
    assert!(!text.contains("no-lost-ack."), "{text}");

    // A checker the model does not fit is warned about, named the same way.
    let misfit = plan.replace(
        "- **Model under test:** register",
        "- **Model under test:** session",
    );
    assert_ne!(misfit, plan);
    std::fs::write(dir.path().join("plan.md"), misfit).expect("plan");
    let out = faultline(&["lint", "plan.md"], dir.path());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("checker `no-lost-ack` does not match model `session`"),
        "{text}"
    );
    assert!(!text.contains("no-lost-ack."), "{text}");
}
