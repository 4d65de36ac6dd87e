//! The `disk` nemesis: fills a filesystem the SUT writes to with a filler file until
//! the kernel answers ENOSPC. The filesystem is normally a tmpfs the session mounts
//! for the iteration ([`Tmpfs`]), so filling it never touches the host's disks.
//! Injector-side evidence is `statvfs` reporting no space available — never the fact
//! that the filler was written.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use nix::mount::{MntFlags, MsFlags};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{Context, HeldFault, InjectorSeen, Nemesis, Resource, UndoRecord, Window};

/// Name prefix of every filler file, so `faultline heal` and people can spot them.
pub const FILLER_PREFIX: &str = ".faultline-filler-";

/// Largest filesystem faultline agrees to fill: a bigger one is almost certainly not
/// the session's own small mount, and filling it would hurt the host.
pub const MAX_FILL_BYTES: u64 = 4 << 30;

#[derive(Debug, thiserror::Error)]
pub enum DiskFaultError {
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    #[error(
        "{path}: the filesystem holds {size} bytes, more than the {MAX_FILL_BYTES} faultline fills; mount a small tmpfs there (`disk.size`)"
    )]
    TooBig { path: String, size: u64 },
}

fn io(path: &Path, e: impl ToString) -> DiskFaultError {
    DiskFaultError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// A tmpfs mounted for one iteration; unmounted (lazily, so a victim still holding
/// files open cannot block it) when healed or dropped.
#[derive(Debug)]
pub struct Tmpfs {
    pub path: PathBuf,
    /// The size it was mounted with, as tmpfs reads it.
    pub size: String,
    mounted: bool,
}

impl Tmpfs {
    /// Creates `path` if needed and mounts a tmpfs of `size` (tmpfs syntax: `1M`,
    /// `512k`, bytes) on it.
    pub fn mount(path: &Path, size: &str) -> Result<Tmpfs, DiskFaultError> {
        std::fs::create_dir_all(path).map_err(|e| io(path, e))?;
        let options = format!("size={size},mode=0777");
        nix::mount::mount(
            Some("tmpfs"),
            path,
            Some("tmpfs"),
            MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
            Some(options.as_str()),
        )
        .map_err(|e| io(path, format!("mount -t tmpfs -o {options}: {e}")))?;
        Ok(Tmpfs {
            path: path.to_path_buf(),
            size: size.to_string(),
            mounted: true,
        })
    }

    pub fn unmount(mut self) -> Result<(), DiskFaultError> {
        self.mounted = false;
        unmount(&self.path)
    }
}

/// Detaches the mount at `path` (used by `faultline heal` too).
pub fn unmount(path: &Path) -> Result<(), DiskFaultError> {
    nix::mount::umount2(path, MntFlags::MNT_DETACH).map_err(|e| io(path, format!("umount: {e}")))
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        if self.mounted {
            let _ = unmount(&self.path);
        }
    }
}

/// Bytes the unprivileged writer can still use on the filesystem holding `dir`, and
/// its total size.
pub fn space(dir: &Path) -> Result<(u64, u64), DiskFaultError> {
    crate::exec::disk_space(dir).map_err(|e| io(dir, format!("statvfs: {e}")))
}

/// Injector-side landing evidence: the filesystem has no space left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    pub landed: bool,
    pub free_bytes: Option<u64>,
    pub detail: String,
}

/// An injected disk fault. Dropping it unhealed removes the filler.
#[derive(Debug)]
pub struct InjectedDisk {
    pub filler: PathBuf,
    /// Bytes the filler holds.
    pub filled: u64,
    healed: bool,
}

/// Writes a filler file into `dir` until the filesystem refuses with ENOSPC (or
/// EDQUOT), halving the chunk down to one byte so no tail of free space is left.
pub fn inject(dir: &Path, fault_id: &str) -> Result<InjectedDisk, DiskFaultError> {
    static N: AtomicU64 = AtomicU64::new(0);
    let (_, total) = space(dir)?;
    if total > MAX_FILL_BYTES {
        return Err(DiskFaultError::TooBig {
            path: dir.display().to_string(),
            size: total,
        });
    }
    let safe: String = fault_id
        .chars()
        .take(64)
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let name = format!(
        "{FILLER_PREFIX}{safe}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    );
    let filler = dir.join(name);
    let mut file = std::fs::File::create(&filler).map_err(|e| io(&filler, e))?;
    // From here on, an error drops `injected`, which removes the filler.
    let mut injected = InjectedDisk {
        filler: filler.clone(),
        filled: 0,
        healed: false,
    };
    let zeros = vec![0u8; 1 << 20];
    let mut chunk = zeros.len();
    while chunk > 0 {
        match file.write(&zeros[..chunk]) {
            Ok(0) => chunk /= 2,
            Ok(n) => injected.filled += n as u64,
            Err(e) if is_full(&e) => chunk /= 2,
            Err(e) => return Err(io(&filler, e)),
        }
    }
    match file.sync_all() {
        Ok(()) => {}
        Err(e) if is_full(&e) => {}
        Err(e) => return Err(io(&filler, e)),
    }
    Ok(injected)
}

fn is_full(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(code) if code == nix::libc::ENOSPC || code == nix::libc::EDQUOT
    )
}

impl InjectedDisk {
    fn dir(&self) -> &Path {
        self.filler.parent().unwrap_or(Path::new("/"))
    }

    fn observe(&self) -> Observation {
        match space(self.dir()) {
            Ok((free, _)) => Observation {
                landed: free == 0,
                free_bytes: Some(free),
                detail: format!(
                    "statvfs {}: {free} byte(s) available after a {} byte filler",
                    self.dir().display(),
                    self.filled
                ),
            },
            Err(e) => Observation {
                landed: false,
                free_bytes: None,
                detail: e.to_string(),
            },
        }
    }

    /// Polls `statvfs` until no space is available or `within` passes.
    pub async fn await_landing(&self, within: Duration) -> Observation {
        super::poll_until(
            within,
            Duration::from_millis(50),
            || self.observe(),
            |s| s.landed,
        )
        .await
    }

    /// Removes the filler and checks it is gone.
    pub fn heal(mut self) -> Result<String, DiskFaultError> {
        self.healed = true;
        remove_filler(&self.filler)
    }
}

/// Removes a filler file (used by `faultline heal` too); a filler already gone is fine.
/// Refuses any file whose name does not carry the filler prefix.
pub fn remove_filler(filler: &Path) -> Result<String, DiskFaultError> {
    let ours = filler
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with(FILLER_PREFIX));
    if !ours {
        return Err(io(filler, "not a faultline filler; left alone"));
    }
    match std::fs::remove_file(filler) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(format!("filler {} already gone", filler.display()));
        }
        Err(e) => return Err(io(filler, e)),
    }
    if filler.exists() {
        return Err(io(filler, "still present after removal"));
    }
    let free = filler
        .parent()
        .and_then(|d| space(d).ok())
        .map_or(String::new(), |(free, _)| {
            format!("; {free} byte(s) available")
        });
    Ok(format!("filler {} removed{free}", filler.display()))
}

impl Drop for InjectedDisk {
    fn drop(&mut self) {
        if !self.healed {
            let _ = std::fs::remove_file(&self.filler);
        }
    }
}

/// Fill the filesystem holding `path` (`references/nemesis.md`, `### disk`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DiskFaultSpec {
    /// A directory on the filesystem to fill (the SUT's data directory, or a mount
    /// point under it). `${var}`s are expanded; relative paths are the SUT's.
    pub path: String,
    /// When given, the session mounts a tmpfs of this size (`1M`, `512k`) on `path`
    /// for the iteration, before the cluster starts, and unmounts it afterwards.
    pub size: Option<String>,
}

impl DiskFaultSpec {
    /// The directory to fill, `${var}`s expanded, relative to the SUT.
    fn dir<C: Context>(&self, cx: &mut C) -> Result<PathBuf, C::Error> {
        let path = cx.expand(&self.path)?;
        // Absolute, so `faultline heal` run from anywhere finds the same filler.
        std::path::absolute(cx.cwd().join(path)).map_err(|e| cx.fail(e.to_string()))
    }
}

impl Nemesis for DiskFaultSpec {
    type Held = InjectedDisk;

    fn privileged(&self, fault: &str) -> Option<String> {
        let size = self.size.as_ref()?;
        Some(format!(
            "{fault}: mount a {size} tmpfs on `{}` for the iteration, then fill it",
            self.path
        ))
    }

    /// Mounts the tmpfs a `size` asks for, before anything starts writing there; the
    /// engine journals it (so `faultline heal` can undo it) and unmounts it after the
    /// iteration.
    async fn prepare<C: Context>(
        &self,
        fault: &str,
        cx: &mut C,
    ) -> Result<Option<Resource>, C::Error> {
        let Some(size) = &self.size else {
            return Ok(None);
        };
        cx.approval(fault).map_err(|e| cx.fail(e))?;
        let size = cx.expand(size)?;
        let path = self.dir(cx)?;
        let mount = Tmpfs::mount(&path, &size)
            .map_err(|e| cx.fail(format!("fault {fault} (disk.path / disk.size): {e}")))?;
        Ok(Some(Resource::Mount(mount)))
    }

    async fn inject<C: Context>(
        &self,
        fault: &str,
        cx: &mut C,
    ) -> Result<Result<InjectedDisk, String>, C::Error> {
        let dir = self.dir(cx)?;
        Ok(inject(&dir, fault).map_err(|e| e.to_string()))
    }
}

impl HeldFault for InjectedDisk {
    type Undo = DiskUndo;

    fn undo(&self) -> DiskUndo {
        DiskUndo {
            filler: self.filler.display().to_string(),
        }
    }

    async fn probe<C: Context>(
        &self,
        window: Window,
        cx: &C,
    ) -> Result<Option<InjectorSeen>, C::Error> {
        let s = cx.guard(self.await_landing(window.within)).await?;
        Ok(Some(InjectorSeen {
            landed: s.landed,
            text: s.detail,
            detail: json!({"free_bytes": s.free_bytes}),
        }))
    }

    async fn heal<C: Context>(self, _cx: &C) -> Result<String, String> {
        InjectedDisk::heal(self).map_err(|e| e.to_string())
    }
}

/// The filler to remove.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DiskUndo {
    pub filler: String,
}

impl UndoRecord for DiskUndo {
    fn heal(&self, fault: &str, _reach: &crate::host::Reach) -> Result<String, String> {
        remove_filler(Path::new(&self.filler))
            .map(|line| format!("{fault}: {line}"))
            .map_err(|e| format!("{fault}: {e}"))
    }
}
