//! The disk nemesis against a real writer: the engine mounts a small tmpfs, a shell
//! victim writes into it, the fault fills it (statvfs sees 0 bytes free, the victim's
//! own `head` reports ENOSPC), heal removes the filler and the victim writes again.
//! A mis-aimed twin fills a mount the victim does not write; `faultline heal` removes
//! the filler and the mount a killed session left. Needs root (mount): with
//! `FAULTLINE_REQUIRE_MOUNT=1` a missing capability fails, otherwise the test prints
//! `SKIP: <reason>` and returns.

use crate::common;
use crate::common::AppendKind;

use std::path::Path;
use std::process::Command;

use crate::common::Line;
use faultline::engine::iteration::IterationFacts;
use faultline::nemesis::disk;
use faultline::session::journal::{Journal, Scope};

/// Writes a fresh 4 KiB record into `dir` every 50 ms for `secs` seconds, saying on
/// stderr whether it worked; `head` itself names the error (ENOSPC) when it did not.
/// Records are kept: a victim that removed one while the filler was being written
/// would free a record's worth of space under the fault and write again (at most
/// 320 KiB in all, well inside the 1 MiB tmpfs before the fault).
fn victim(dir: &str, secs: u32) -> String {
    format!(
        "end=$(( $(date +%s) + {secs} )); i=0; while [ $(date +%s) -lt $end ]; do \
         i=$((i+1)); if head -c 4096 /dev/zero > {dir}/rec.$i; then echo \"write ok $i\" >&2; \
         else echo \"write failed $i\" >&2; fi; sleep 0.05; done"
    )
}

/// A binding whose victim writes into `writes` while the fault fills `fills`.
fn binding(writes: &str, fills: &str) -> faultline::runspec::Binding {
    let yaml = format!(
        r#"
workload:
  run: {run:?}
  deadline: 30s
faults:
  - id: fill
    after: 1s
    duration: 1s
    disk: {{ path: {fills}, size: 1M }}
    landing:
      - side: victim
        log: {{ service: workload, pattern: "No space left on device" }}
        within: 3s
"#,
        run = victim(writes, 4),
    );
    serde_saphyr::from_str(&yaml).expect("binding")
}

async fn run(dir: &Path, binding: &faultline::runspec::Binding) -> (IterationFacts, Vec<Line>) {
    std::fs::create_dir_all(dir.join("plain")).expect("plain dir");
    common::run_binding(binding, dir).await
}

fn mounted(path: &Path) -> bool {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    let path = path.display().to_string();
    mounts.lines().any(|l| l.split(' ').nth(1) == Some(&path))
}

#[tokio::test]
async fn a_full_disk_lands_on_both_sides_and_heals() {
    if !common::can_mount() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let (facts, records) = run(dir.path(), &binding("data", "data")).await;
    let fault = facts.faults.first().expect("one fault");
    assert!(fault.injected, "{:?}", fault.detail);
    assert!(fault.injector_landed, "{:?}", fault.detail);
    assert!(fault.victim_side_seen, "{:?}", fault.detail);
    assert!(fault.declared_landed, "{:?}", fault.detail);
    assert!(fault.healed, "{:?}", fault.detail);

    let kinds: Vec<&str> = records.iter().map(|r| r.kind.as_str()).collect();
    let at = |kind: &str| kinds.iter().position(|k| *k == kind);
    let order = [
        "mount-created",
        "fault-intent",
        "fault-injected",
        "landing-injector",
        "landing-declared",
        "fault-healed",
        "mount-removed",
    ]
    .map(|k| at(k).unwrap_or_else(|| panic!("no {k} in {kinds:?}")));
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{kinds:?}");
    let injector = &records[order[3]].data;
    assert_eq!(injector["landed"], true);
    assert_eq!(injector["detail"]["free_bytes"], 0);
    // The victim's own words, from its own stderr.
    let declared = &records[order[4]].data;
    let seen = declared["seen"].as_str().expect("victim line");
    assert!(seen.contains("No space left on device"), "{seen}");
    let filler = records[order[2]].data["undo"]["disk"]["filler"]
        .as_str()
        .expect("filler in undo")
        .to_string();
    assert!(filler.contains(disk::FILLER_PREFIX), "{filler}");

    // Healed: the filler went, and the victim wrote again while the mount still stood.
    let healed = records[order[5]].data["result"]["Ok"]
        .as_str()
        .expect("heal ok");
    assert!(healed.contains("removed"), "{healed}");
    let log =
        std::fs::read_to_string(dir.path().join("logs/workload.stderr.log")).expect("victim log");
    let failed = log.rfind("write failed").expect("the victim saw the fault");
    assert!(
        log[failed..].contains("write ok"),
        "the victim never wrote again after heal:\n{log}"
    );
    assert!(!Path::new(&filler).exists());
    assert!(!mounted(&data), "tmpfs still mounted at {}", data.display());
}

#[tokio::test]
async fn a_mis_aimed_twin_fills_a_mount_the_victim_does_not_write() {
    if !common::can_mount() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let (facts, records) = run(dir.path(), &binding("plain", "data")).await;
    let fault = facts.faults.first().expect("one fault");
    assert!(fault.injected, "{:?}", fault.detail);
    // The injector filled *a* filesystem …
    assert!(fault.injector_landed, "{:?}", fault.detail);
    // … but not the victim's: its declared signal never came, so landing is not proven.
    assert!(!fault.victim_side_seen, "{:?}", fault.detail);
    assert!(!fault.declared_landed, "{:?}", fault.detail);
    assert!(fault.healed, "{:?}", fault.detail);
    assert!(
        records
            .iter()
            .any(|r| r.kind == "landing-declared" && r.data["seen"].is_null())
    );
    let log =
        std::fs::read_to_string(dir.path().join("logs/workload.stderr.log")).expect("victim log");
    assert!(!log.contains("write failed"), "{log}");
}

#[test]
fn faultline_heal_removes_the_filler_and_mount_a_killed_session_left() {
    if !common::can_mount() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let mnt = dir.path().join("mnt");
    let mount = disk::Tmpfs::mount(&mnt, "512k").expect("tmpfs");
    let injected = disk::inject(&mnt, "left").expect("fill");
    let filler = injected.filler.clone();
    assert_eq!(disk::space(&mnt).expect("statvfs").0, 0);
    // What SIGKILL leaves: neither the filler nor the mount is undone.
    std::mem::forget(injected);
    std::mem::forget(mount);

    let scope = Scope {
        scenario: Some("X1".into()),
        arm: None,
    };
    let mut journal = Journal::open(&dir.path().join("journal.jsonl")).expect("journal");
    journal
        .append_kind(
            scope.clone(),
            "mount-created",
            &serde_json::json!({"path": mnt.display().to_string(), "fstype": "tmpfs", "size": "512k"}),
        )
        .expect("append");
    journal
        .append_kind(
            scope,
            "fault-injected",
            &serde_json::json!({"fault": "fill", "pid": null,
                "undo": {"disk": {"filler": filler.display().to_string()}}}),
        )
        .expect("append");
    drop(journal);

    let out = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .arg("heal")
        .arg(dir.path())
        .output()
        .expect("faultline heal runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("removed"), "{stdout}");
    assert!(stdout.contains("unmounted"), "{stdout}");
    assert!(!filler.exists());
    assert!(!mounted(&mnt), "{} still mounted", mnt.display());
}

#[test]
fn a_filler_is_refused_outside_its_name_and_on_a_big_filesystem() {
    let err = disk::remove_filler(Path::new("/etc/passwd")).expect_err("refused");
    assert!(err.to_string().contains("not a faultline filler"), "{err}");
    let (_, total) = disk::space(Path::new("/")).expect("statvfs /");
    if total > disk::MAX_FILL_BYTES {
        let err = disk::inject(Path::new("/"), "x").expect_err("too big");
        assert!(err.to_string().contains("disk.size"), "{err}");
    }
}

#[test]
fn the_mis_aimed_twin_ends_inconclusive_fault_not_proven() {
    if !common::can_mount() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let run = common::run_scenario(&common::twins_plan(), "T1", dir.path());
    assert_eq!(
        run.verdict, "INCONCLUSIVE-fault-not-proven",
        "{}",
        run.stderr
    );
    assert!(!mounted(&dir.path().join("data")));
}
