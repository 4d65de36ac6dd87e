//! The run's own network namespace (`isolate: netns` in the run spec).
//!
//! Made with iproute2 (`ip netns add`, so an operator can `ip netns exec` into it while
//! the run goes), loopback up (all of 127.0.0.0/8 and ::1 then answer in it), and
//! entered by this process before its async runtime starts: every thread made after
//! inherits it, so services, the client, probes, faultline's own proxies and every
//! iptables rule of the run live in it and never touch the host's network. The engine
//! journals it; the end of the run, `faultline heal`, resume and the watchdog delete
//! it from that record, and only when the name still holds the namespace recorded.

use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Where iproute2 keeps named network namespaces.
const DIR: &str = "/run/netns";

/// The namespace this process entered, if it did.
static ENTERED: OnceLock<Isolated> = OnceLock::new();

/// A network namespace made for one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Isolated {
    /// Its name under /run/netns (`faultline-<pid>-<suffix>`).
    pub name: String,
    /// Its inode: a name that now holds another namespace is not deleted.
    pub inode: u64,
}

/// The namespace this process runs in when it made one (`None`: the one it was
/// started in).
pub fn entered() -> Option<&'static Isolated> {
    ENTERED.get()
}

/// Makes a namespace with loopback up and moves this process into it. Must run
/// before any other thread exists: only the calling thread (and threads it starts
/// later) change namespace.
pub fn enter() -> Result<&'static Isolated, String> {
    if let Some(entered) = ENTERED.get() {
        return Ok(entered);
    }
    let threads = std::fs::read_dir("/proc/self/task").map_or(0, Iterator::count);
    if threads != 1 {
        return Err(format!(
            "faultline already runs {threads} threads: the namespace would hold only one \
             of them (an internal error)"
        ));
    }
    let name = add_fresh(Path::new(DIR), name_seed(), |name| {
        ip(&["netns", "add", name])
    })?;
    // The name exists from here: a failure deletes it again.
    let entered = (|| {
        ip(&["-n", &name, "link", "set", "lo", "up"])?;
        let file = std::fs::File::open(path(&name))
            .map_err(|e| format!("cannot open {}: {e}", path(&name).display()))?;
        let inode = file
            .metadata()
            .map_err(|e| format!("cannot stat {}: {e}", path(&name).display()))?
            .ino();
        nix::sched::setns(file.as_fd(), nix::sched::CloneFlags::CLONE_NEWNET)
            .map_err(|e| format!("cannot enter network namespace {name}: {e}"))?;
        Ok(inode)
    })();
    match entered {
        Ok(inode) => Ok(ENTERED.get_or_init(|| Isolated { name, inode })),
        Err(why) => {
            let _ = ip(&["netns", "delete", &name]);
            Err(why)
        }
    }
}

/// How many names are tried before the run gives up on a namespace of its own.
const NAME_TRIES: u32 = 8;

/// Where the names tried start: the clock's nanoseconds.
fn name_seed() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos())
}

/// `faultline-<pid>-<4 hex digits>`, the `attempt`th name from `seed` (distinct for
/// each attempt below 65536): a name a crashed run with a reused pid left behind is
/// not taken over (`ip netns add` refuses an existing name).
fn fresh_name(seed: u32, attempt: u32) -> String {
    let suffix = seed.wrapping_add(attempt.wrapping_mul(0x9e3b)) & 0xffff;
    format!("faultline-{}-{suffix:04x}", std::process::id())
}

/// Makes a namespace under a name of ours that nothing in `dir` holds yet, with
/// `add`: a name already there (a crashed run's, or a file or link someone planted)
/// is passed over — never opened, changed or removed — and the next one tried. When
/// every name tried is taken, the error says so and names them.
fn add_fresh(
    dir: &Path,
    seed: u32,
    mut add: impl FnMut(&str) -> Result<(), String>,
) -> Result<String, String> {
    let held = |name: &str| std::fs::symlink_metadata(dir.join(name)).is_ok();
    let mut taken = Vec::new();
    for attempt in 0..NAME_TRIES {
        let name = fresh_name(seed, attempt);
        if held(&name) {
            taken.push(name);
            continue;
        }
        match add(&name) {
            Ok(()) => return Ok(name),
            // Made by someone else between the look and the add.
            Err(_) if held(&name) => taken.push(name),
            Err(why) => return Err(why),
        }
    }
    Err(format!(
        "every name tried for the run's network namespace is already taken in {} ({}): \
         something other than this run holds them (a crashed run's namespaces, or files \
         someone put there); faultline left them alone — remove the stale ones \
         (`ip netns delete NAME`) and run again",
        dir.display(),
        taken.join(", ")
    ))
}

fn path(name: &str) -> PathBuf {
    Path::new(DIR).join(name)
}

/// Runs `ip args…`, its stderr as the error.
fn ip(args: &[&str]) -> Result<(), String> {
    let out = std::process::Command::new("ip")
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot run `ip` (iproute2): {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    Err(format!(
        "`ip {}`: {}",
        args.join(" "),
        crate::sanitize::line(String::from_utf8_lossy(&out.stderr).trim())
    ))
}

/// Deletes the namespace `name` if it still is the one recorded (`inode`); what was
/// done, for the journal and the operator. A namespace already gone (a reboot, an
/// earlier heal) is not an error.
pub fn delete(name: &str, inode: u64) -> Result<String, String> {
    // A name is one path component of ours: anything else is not looked up at all.
    if name.is_empty() || name.contains('/') || !name.starts_with("faultline-") {
        return Err(format!("`{name}` is not a namespace faultline names"));
    }
    let place = path(name);
    match std::fs::symlink_metadata(&place) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(format!("network namespace {name} was already gone"));
        }
        Err(e) => return Err(format!("cannot stat {}: {e}", place.display())),
        Ok(meta) if meta.ino() != inode => {
            return Ok(format!(
                "network namespace {name} now names another namespace (inode {}, not {inode}): \
                 left alone",
                meta.ino()
            ));
        }
        Ok(_) => {}
    }
    ip(&["netns", "delete", name])?;
    Ok(format!("network namespace {name} deleted"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_names_of_ours_are_deleted() {
        for name in ["", "../etc", "a/b", "ns1", "faultline-1/../x"] {
            assert!(delete(name, 1).is_err(), "{name}");
        }
    }

    #[test]
    fn fresh_names_are_ours_and_carry_the_pid() {
        let name = fresh_name(name_seed(), 0);
        assert!(name.starts_with(&format!("faultline-{}-", std::process::id())));
        assert!(!name.contains('/'));
        let names: std::collections::BTreeSet<String> =
            (0..NAME_TRIES).map(|a| fresh_name(0xfff0, a)).collect();
        assert_eq!(names.len(), NAME_TRIES as usize, "{names:?}");
    }

    /// A name someone planted (a file, a link) is passed over untouched and the next
    /// one is made; when every name is taken the error says the names were taken.
    #[test]
    fn a_planted_name_is_passed_over_and_left_alone() {
        let dir = tempfile::tempdir().expect("tempdir");
        let seed = 0x1234;
        let first = fresh_name(seed, 0);
        std::fs::write(dir.path().join(&first), "planted").expect("plant a file");
        std::os::unix::fs::symlink("/proc/self/ns/net", dir.path().join(fresh_name(seed, 1)))
            .expect("plant a link");
        let mut added = Vec::new();
        let name = add_fresh(dir.path(), seed, |n| {
            added.push(n.to_string());
            Ok(())
        })
        .expect("a free name");
        assert_eq!(name, fresh_name(seed, 2));
        assert_eq!(added.len(), 1, "taken names are never handed to `ip`");
        assert_eq!(added[0], name);
        assert_eq!(
            std::fs::read_to_string(dir.path().join(&first)).expect("still there"),
            "planted"
        );
        // Every name taken: said in words, nothing touched, `ip` never run.
        for attempt in 2..NAME_TRIES {
            std::fs::write(dir.path().join(fresh_name(seed, attempt)), "").expect("plant");
        }
        let why =
            add_fresh(dir.path(), seed, |_| panic!("no name is free")).expect_err("all taken");
        assert!(
            why.contains("already taken") && why.contains(&first),
            "{why}"
        );
        assert!(!why.contains("needs root"), "{why}");
        assert!(dir.path().join(fresh_name(seed, 1)).is_symlink());
        // A name made by someone else between the look and the add is passed over too.
        let other = tempfile::tempdir().expect("tempdir");
        let name = add_fresh(other.path(), seed, |n| {
            if n == first {
                std::fs::write(other.path().join(n), "").expect("race");
                return Err("File exists".into());
            }
            Ok(())
        })
        .expect("the next name");
        assert_eq!(name, fresh_name(seed, 1));
        // Any other failure is the error as it is.
        let why =
            add_fresh(other.path(), 7, |_| Err("Permission denied".into())).expect_err("no root");
        assert_eq!(why, "Permission denied");
    }
}
