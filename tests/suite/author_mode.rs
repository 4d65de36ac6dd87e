//! Author mode through the real CLI: it writes only declared targets inside the SUT,
//! refuses everything that would escape it (writing nothing at all), asks before it
//! touches an existing file, stages exactly what it wrote in a real git repository and
//! never commits; the provenance header carries the plan's sha-256.

use crate::support::repo;

use std::path::Path;
use std::process::{Command, Output};

use sha2::{Digest, Sha256};

/// A plan whose scenarios declare `targets` (one scenario each, S1…).
fn plan(targets: &[&str]) -> String {
    let mut text = String::from(
        "# Test Plan: authoring\n\n## 1b. Claims under test\n\n\
         | ID | Claim | Category | Source | Inferred? |\n|---|---|---|---|---|\n\
         | C1 | Writes are kept. | liveness | test | no |\n\n\
         ## 4. Failure hypotheses\n\n- H1. **Loss** — a write is lost.\n  - Could falsify: C1\n\n\
         ## 7. Scenarios\n",
    );
    for (i, target) in targets.iter().enumerate() {
        let id = format!("S{}", i + 1);
        text.push_str(&format!(
            "\n### Scenario {id}: writes_are_kept_{n}\n\n\
             - **Falsifies if it FAILs:** C1\n- **Closes:** H1\n\
             - **Workload:** a client writing keys.\n- **Faults:** none.\n\
             - **Oracle:** the external checker over the JSONL history reports no anomaly.\n\
             - **Smoke budget:** 1 seed, 1 s.\n\
             - **Hardening budget:** not applicable — fixture.\n\
             - **Release budget:** not provided — fixture. Revisit when: never.\n\
             - **Target test file:** `{target}` (new)\n\
             - **Skeleton language:** rust\n\
             - **Skeleton:**\n\n\
             ```rust\n// AUTO-GENERATED from test plan: authoring\n// Scenario: {id}\n\
             #[test]\nfn writes_are_kept() {{\n    // TODO workload\n    // TODO faults\n    // TODO oracle\n}}\n```\n",
            n = i + 1
        ));
    }
    text
}

fn author(dir: &Path, sut: &Path, answers: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_faultline"));
    cmd.args(["author", "plan.md", "--sut"])
        .arg(sut)
        .current_dir(dir);
    match answers {
        Some(text) => {
            std::fs::write(dir.join("answers.yaml"), text).expect("answers");
            cmd.args(["--answers", "answers.yaml"]);
        }
        None => {
            cmd.arg("--yes");
        }
    }
    cmd.output().expect("faultline author runs")
}

#[test]
fn targets_escaping_the_sut_are_refused_and_nothing_is_written() {
    let work = tempfile::tempdir().expect("tempdir");
    let sut = work.path().join("sut");
    let outside = work.path().join("outside");
    std::fs::create_dir_all(sut.join("tests")).expect("sut");
    std::fs::create_dir_all(&outside).expect("outside");
    std::os::unix::fs::symlink(&outside, sut.join("linkdir")).expect("dir symlink");
    std::fs::write(outside.join("victim.rs"), "// not yours\n").expect("victim");
    std::os::unix::fs::symlink(outside.join("victim.rs"), sut.join("tests/linked.rs"))
        .expect("file symlink");
    let absolute = outside.join("abs.rs");
    let targets = [
        absolute.to_str().expect("utf-8"),
        "../outside/climb.rs",
        "linkdir/through.rs",
        "tests/linked.rs",
    ];
    std::fs::write(work.path().join("plan.md"), plan(&targets)).expect("plan");
    let before = repo::tree(work.path());

    let out = author(work.path(), &sut, Some("author.S4: overwrite\n"));
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (id, why) in [
        ("S1", "is absolute"),
        ("S2", "climbs out with `..`"),
        ("S3", "resolves outside the SUT root"),
        ("S4", "is a symlink"),
    ] {
        assert!(
            said.lines()
                .any(|l| l.starts_with(&format!("{id}: refused")) && l.contains(why)),
            "{id} not refused for `{why}`:\n{said}"
        );
    }
    let mut after = repo::tree(work.path());
    after.remove(&work.path().join("answers.yaml"));
    assert_eq!(before, after, "something was written");
}

#[test]
fn in_a_real_repository_it_writes_skips_writes_siblings_and_stages_only_those() {
    let work = tempfile::tempdir().expect("tempdir");
    let repo = work.path().join("repo");
    std::fs::create_dir_all(repo.join("tests")).expect("repo");
    repo::git(&repo, &["init", "-q"]);
    repo::git(&repo, &["config", "user.email", "t@example.invalid"]);
    repo::git(&repo, &["config", "user.name", "t"]);
    std::fs::write(repo.join("tests/kept_test.rs"), "// the team's own test\n").expect("kept");
    std::fs::write(repo.join("tests/other_test.rs"), "// another of theirs\n").expect("other");
    repo::git(&repo, &["add", "."]);
    repo::git(&repo, &["commit", "-q", "-m", "base"]);
    let plan_text = plan(&[
        "tests/a_test.rs",
        "tests/b_test.rs",
        "tests/kept_test.rs",
        "tests/other_test.rs",
    ]);
    std::fs::write(work.path().join("plan.md"), &plan_text).expect("plan");

    let out = author(
        work.path(),
        &repo,
        Some("author.S3: skip\nauthor.S4: sibling\n"),
    );
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let staged: Vec<String> = repo::git(&repo, &["diff", "--cached", "--name-only"])
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(
        staged,
        vec![
            "tests/a_test.rs",
            "tests/b_test.rs",
            "tests/other_test.new.rs"
        ]
    );
    assert_eq!(
        repo::git(&repo, &["rev-list", "--count", "HEAD"]).trim(),
        "1",
        "no commit"
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("tests/kept_test.rs")).expect("kept"),
        "// the team's own test\n"
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("tests/other_test.rs")).expect("other"),
        "// another of theirs\n"
    );
    let sha: String = Sha256::digest(plan_text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let written = std::fs::read_to_string(repo.join("tests/a_test.rs")).expect("a");
    assert!(
        written.contains(&format!("plan sha-256 at generation: {sha}")),
        "{written}"
    );
    assert!(written.contains("scenario S1"), "{written}");
    // No binding: every TODO stays and the file says it is incomplete.
    assert!(written.contains("candidate — incomplete"), "{written}");
    assert!(written.contains("TODO workload"), "{written}");
    assert!(said.contains("staged, not committed"), "{said}");
    assert!(said.contains("compare with its sibling"), "{said}");
}
