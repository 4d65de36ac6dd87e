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

/// What any uid may plant in a seed's shared (1777) artifacts directory is never
/// followed: a symlink where faultline writes is replaced, one where it reads is
/// refused, as are a fifo and a file over the limit.
#[test]
fn what_others_plant_under_artifacts_is_never_followed() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let root = tempfile::tempdir().expect("tempdir");
    let secret = root.path().join("secret");
    std::fs::write(&secret, "root's").expect("write");
    let seed = root.path().join("artifacts/S1/seed-1");
    session::dir::make_shared(&seed).expect("shared");
    let meta = std::fs::metadata(&seed).expect("stat");
    assert_eq!(meta.permissions().mode() & 0o7777, 0o1777);

    std::os::unix::fs::symlink(&secret, seed.join("fault_epoch")).expect("plant");
    session::dir::write_untrusted(&seed, "fault_epoch", b"3").expect("write");
    assert_eq!(std::fs::read_to_string(&secret).expect("read"), "root's");
    let epoch = seed.join("fault_epoch");
    assert!(!epoch.is_symlink());
    assert_eq!(std::fs::read_to_string(&epoch).expect("read"), "3");

    std::os::unix::fs::symlink(&secret, seed.join("final.json")).expect("plant");
    assert!(faultline::untrusted::read_untrusted(&seed.join("final.json"), 1 << 20).is_err());
    nix::unistd::mkfifo(&seed.join("history.jsonl"), nix::sys::stat::Mode::S_IRWXU)
        .expect("mkfifo");
    assert!(faultline::untrusted::read_untrusted(&seed.join("history.jsonl"), 1 << 20).is_err());
    assert_eq!(
        faultline::untrusted::read_untrusted(&epoch, 1).expect("within the limit"),
        "3"
    );
    std::fs::write(&epoch, "34").expect("write");
    assert!(faultline::untrusted::read_untrusted(&epoch, 1).is_err());

    // A symlink in place of the seed's directory is refused, not made 1777.
    let elsewhere = root.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).expect("mkdir");
    let planted = root.path().join("artifacts/S1/seed-2");
    std::os::unix::fs::symlink(&elsewhere, &planted).expect("plant");
    assert!(session::dir::make_shared(&planted).is_err());
    let mode = std::fs::metadata(&elsewhere).expect("stat").mode() & 0o7777;
    assert_ne!(mode, 0o1777);

    // A service's own directory: made for its uid; a name another uid took is refused.
    if nix::unistd::geteuid().is_root() {
        let own = session::dir::make_owned(&seed, "m1", 65534, 65534).expect("made");
        assert_eq!(std::fs::metadata(&own).expect("stat").uid(), 65534);
        let taken = seed.join("m2");
        std::fs::create_dir(&taken).expect("mkdir");
        nix::unistd::chown(&taken, Some(nix::unistd::Uid::from_raw(65533)), None).expect("chown");
        assert!(session::dir::make_owned(&seed, "m2", 65534, 65534).is_err());
        std::os::unix::fs::symlink(&elsewhere, seed.join("m3")).expect("plant");
        assert!(session::dir::make_owned(&seed, "m3", 65534, 65534).is_err());
        assert_ne!(std::fs::metadata(&elsewhere).expect("stat").uid(), 65534);
    }
}
