//! Session directory layout and SUT revision on real files and a real git repository.

use std::process::Command;

use chrono::TimeZone;
use faultline::session;

#[test]
fn layout_follows_policy_and_never_reuses_a_directory() {
    let root = tempfile::tempdir().expect("tempdir");
    let now = chrono::Utc
        .with_ymd_and_hms(2026, 12, 1, 2, 3, 4)
        .single()
        .expect("valid time");
    let a = session::dir::create(root.path(), "demo-kv", now).expect("create");
    let b = session::dir::create(root.path(), "demo-kv", now).expect("create again");
    assert_eq!(a.path, root.path().join("demo-kv/20261201T020304Z"));
    assert_eq!(b.path, root.path().join("demo-kv/20261201T020304Z-2"));
    // Private from the first mkdir, whatever the umask: restricting opens it later.
    use std::os::unix::fs::PermissionsExt;
    let mode =
        |p: &std::path::Path| std::fs::metadata(p).expect("stat").permissions().mode() & 0o7777;
    assert_eq!(mode(&a.path), 0o700);
    for sub in session::dir::SUBDIRS {
        assert!(a.path.join(sub).is_dir(), "{sub} missing");
        assert_eq!(mode(&a.path.join(sub)), 0o700, "{sub}");
    }
    // The plan's directory faultline made above it lets others traverse, not list.
    assert_eq!(mode(&root.path().join("demo-kv")), 0o711);
    assert_eq!(a.findings_file("S5/api"), a.path.join("findings/S5-api.md"));
}

#[test]
fn slugs_cannot_escape_the_root() {
    assert_eq!(session::dir::safe_slug("../../etc"), "etc");
    assert_eq!(session::dir::safe_slug("a b/c"), "a-b-c");
    assert_eq!(session::dir::safe_slug("///"), "plan");
}

#[test]
fn revision_reports_commit_and_dirty_flag() {
    let dir = tempfile::tempdir().expect("tempdir");
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .arg("-C")
            .arg(dir.path())
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .status()
            .expect("git runs")
            .success();
        assert!(ok, "git {args:?}");
    };
    assert!(session::dir::sut_revision(dir.path()).is_none());
    git(&["init", "-q"]);
    std::fs::write(dir.path().join("f"), "1").expect("write");
    git(&["add", "f"]);
    git(&["commit", "-qm", "one"]);
    let clean = session::dir::sut_revision(dir.path()).expect("revision");
    assert_eq!(clean.commit.len(), 40);
    assert!(!clean.dirty);
    std::fs::write(dir.path().join("f"), "2").expect("write");
    let dirty = session::dir::sut_revision(dir.path()).expect("revision");
    assert_eq!(dirty.commit, clean.commit);
    assert!(dirty.dirty);
}
