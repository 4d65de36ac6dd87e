//! The `clock` nemesis: libfaketime for services the session starts. A service marked
//! `faketime: true` runs with `LD_PRELOAD=libfaketime` and a control file
//! (`FAKETIME_TIMESTAMP_FILE`, re-read on every clock call) that starts empty (no
//! offset); inject writes the offset there, heal empties it. Programs that bypass the
//! dynamic loader (statically linked ones, Go binaries) ignore all of this, so landing
//! is only ever proven by the offset showing up in the victim's own output.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::signal::LogSignal;
use super::{Context, HeldFault, InjectorSeen, Nemesis, UndoRecord, VictimSeen, Window};

/// Where Debian's `libfaketime` package puts the library; `FAULTLINE_LIBFAKETIME`
/// overrides.
const LIBRARY_PATHS: [&str; 2] = [
    "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
    "/usr/lib/faketime/libfaketime.so.1",
];

/// How far an observed clock may be from real time + offset and still count.
pub const TOLERANCE_S: i64 = 2;

#[derive(Debug, thiserror::Error)]
pub enum ClockFaultError {
    #[error(
        "libfaketime not found (looked at $FAULTLINE_LIBFAKETIME, {LIBRARY_PATHS:?}); install the `libfaketime` package"
    )]
    NoLibrary,
    #[error("{path}: {message}")]
    Io { path: String, message: String },
}

fn io(path: &Path, e: impl ToString) -> ClockFaultError {
    ClockFaultError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// The libfaketime shared object, if installed.
pub fn library() -> Option<PathBuf> {
    std::env::var_os("FAULTLINE_LIBFAKETIME")
        .map(PathBuf::from)
        .into_iter()
        .chain(LIBRARY_PATHS.iter().map(PathBuf::from))
        .find(|p| p.is_file())
}

/// Real time now, in epoch seconds.
pub fn real_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Creates an empty control file and returns the environment a service needs to run
/// under faketime with it.
pub fn prepare(control: &Path) -> Result<Vec<(String, String)>, ClockFaultError> {
    let lib = library().ok_or(ClockFaultError::NoLibrary)?;
    if let Some(dir) = control.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    }
    std::fs::write(control, "").map_err(|e| io(control, e))?;
    Ok(vec![
        ("LD_PRELOAD".into(), lib.display().to_string()),
        (
            "FAKETIME_TIMESTAMP_FILE".into(),
            control.display().to_string(),
        ),
        // Re-read the control file on every call, so inject and heal act at once.
        ("FAKETIME_NO_CACHE".into(), "1".into()),
    ])
}

/// Landing evidence about a clock: the skew seen against real time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    pub landed: bool,
    /// Observed clock minus real time, seconds.
    pub skew: Option<i64>,
    pub detail: String,
}

fn judged(offset: i64, skew: Option<i64>, what: &str) -> Observation {
    let landed = skew.is_some_and(|s| (s - offset).abs() <= TOLERANCE_S);
    let detail = match skew {
        Some(s) => format!("{what} is {s:+} s off real time (fault offset {offset:+} s)"),
        None => format!("{what}: no clock reading"),
    };
    Observation {
        landed,
        skew,
        detail,
    }
}

/// An injected clock offset. Dropping it unhealed empties the control file.
#[derive(Debug)]
pub struct InjectedClock {
    pub control: PathBuf,
    pub offset: i64,
    env: Vec<(String, String)>,
    healed: bool,
}

/// Writes `offset` (seconds) into the control file of a service started under faketime.
pub fn inject(
    control: &Path,
    env: &[(String, String)],
    offset: i64,
) -> Result<InjectedClock, ClockFaultError> {
    std::fs::write(control, format!("{offset:+}\n")).map_err(|e| io(control, e))?;
    Ok(InjectedClock {
        control: control.to_path_buf(),
        offset,
        env: env.to_vec(),
        healed: false,
    })
}

impl InjectedClock {
    /// Injector side: `date +%s` run under the victim's own faketime environment.
    /// This proves the control file reaches libfaketime, not that the victim uses it.
    fn probe(&self) -> Observation {
        let out = std::process::Command::new("date")
            .arg("+%s")
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .output();
        let now = real_now();
        let seen = out.ok().filter(|o| o.status.success()).and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .trim()
                .parse::<i64>()
                .ok()
        });
        judged(
            self.offset,
            seen.map(|s| s - now),
            "`date` under the victim's faketime environment",
        )
    }

    pub async fn await_landing(&self, within: Duration) -> Observation {
        super::poll_until(
            within,
            Duration::from_millis(100),
            || self.probe(),
            |s| s.landed,
        )
        .await
    }

    /// Empties the control file (no offset) and checks it is empty.
    pub fn heal(mut self) -> Result<String, ClockFaultError> {
        self.healed = true;
        clear(&self.control)
    }
}

/// Empties a control file (used by `faultline heal` too); a missing one is fine.
pub fn clear(control: &Path) -> Result<String, ClockFaultError> {
    if !control.exists() {
        return Ok(format!("control file {} already gone", control.display()));
    }
    std::fs::write(control, "").map_err(|e| io(control, e))?;
    let left = std::fs::metadata(control)
        .map_err(|e| io(control, e))?
        .len();
    if left != 0 {
        return Err(io(control, "still holds an offset after heal"));
    }
    Ok(format!("faketime control {} emptied", control.display()))
}

impl Drop for InjectedClock {
    fn drop(&mut self) {
        if !self.healed {
            let _ = std::fs::write(&self.control, "");
        }
    }
}

/// Victim side: reads the clock the victim prints in its own log (the pattern's first
/// group, epoch seconds), looking only at lines appended after [`VictimClock::begin`].
#[derive(Debug)]
pub struct VictimClock {
    pub path: PathBuf,
    pub pattern: Regex,
    cursor: Mutex<u64>,
}

impl VictimClock {
    pub fn begin(path: &Path, pattern: Regex) -> VictimClock {
        VictimClock {
            path: path.to_path_buf(),
            cursor: Mutex::new(std::fs::metadata(path).map_or(0, |m| m.len())),
            pattern,
        }
    }

    /// The skew of the victim's newest complete clock line since the last read.
    fn newest_skew(&self) -> Option<i64> {
        let mut file = std::fs::File::open(&self.path).ok()?;
        let mut cursor = self.cursor.lock().unwrap_or_else(PoisonError::into_inner);
        file.seek(SeekFrom::Start(*cursor)).ok()?;
        let mut bytes = Vec::new();
        file.take(1 << 20).read_to_end(&mut bytes).ok()?;
        let complete = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        *cursor += complete as u64;
        let now = real_now();
        crate::sanitize::decode(&bytes[..complete])
            .lines()
            .filter_map(|l| {
                self.pattern
                    .captures(l)?
                    .get(1)?
                    .as_str()
                    .parse::<i64>()
                    .ok()
            })
            .last()
            .map(|seen| seen - now)
    }

    /// Polls the victim's log until a clock line shows `offset` or `within` passes.
    pub async fn await_offset(&self, offset: i64, within: Duration) -> Observation {
        let mut last = None;
        super::poll_until(
            within,
            Duration::from_millis(100),
            || {
                last = self.newest_skew().or(last);
                judged(offset, last, "the victim's own clock")
            },
            |s| s.landed,
        )
        .await
    }
}

/// Move the clock of a service started with `faketime: true`
/// (`references/nemesis.md`, `### clock`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ClockFaultSpec {
    /// The service whose clock moves.
    pub service: String,
    /// Seconds the clock moves; negative moves it back.
    pub offset: i64,
    /// Where the victim prints its own clock: the pattern's first group is epoch seconds.
    pub victim_clock: LogSignal,
}

impl Nemesis for ClockFaultSpec {
    type Held = HeldClock;

    fn check(&self, of: &str, fault: &str) -> Vec<(String, String)> {
        // An offset inside the landing tolerance could never be told from no offset.
        if self.offset.abs() >= 10 {
            return Vec::new();
        }
        vec![(
            "clock.offset".into(),
            format!(
                "fault `{fault}` of {of}: offset {} s is too small to observe; use at least 10 s either way",
                self.offset
            ),
        )]
    }

    /// Injects the offset into a faketime service, watching the victim's own clock
    /// from before the injection.
    async fn inject<C: Context>(
        &self,
        fault: &str,
        cx: &mut C,
    ) -> Result<Result<HeldClock, String>, C::Error> {
        let Some((control, env)) = cx.service(&self.service).and_then(|s| s.faketime) else {
            return Ok(Err(format!(
                "fault {fault} clock.service: `{}` is not a service started with `faketime: true`",
                self.service
            )));
        };
        // The victim's clock lines are on its stderr (one file: it reads the newest).
        let clock_log = &self.victim_clock;
        let file = match (&clock_log.service, &clock_log.file) {
            (Some(service), _) => Some(cx.logs().join(format!("{service}.stderr.log"))),
            (None, Some(file)) => {
                let file = cx.expand(file)?;
                Some(cx.cwd().join(file))
            }
            (None, None) => None,
        };
        let Some(file) = file else {
            return Ok(Err(format!(
                "fault {fault} clock.victim_clock names neither a service nor a file"
            )));
        };
        let pattern = Regex::new(&clock_log.pattern)
            .map_err(|e| cx.fail(format!("fault {fault} clock.victim_clock.pattern: {e}")))?;
        let victim = VictimClock::begin(&file, pattern);
        Ok(inject(&control, &env, self.offset)
            .map(|injected| HeldClock { injected, victim })
            .map_err(|e| e.to_string()))
    }
}

/// An injected offset and the victim's clock watched since just before it.
#[derive(Debug)]
pub struct HeldClock {
    pub injected: InjectedClock,
    pub victim: VictimClock,
}

impl HeldFault for HeldClock {
    type Undo = ClockUndo;

    fn undo(&self) -> ClockUndo {
        ClockUndo {
            control: self.injected.control.display().to_string(),
        }
    }

    async fn probe<C: Context>(
        &self,
        window: Window,
        cx: &C,
    ) -> Result<Option<InjectorSeen>, C::Error> {
        let s = cx.guard(self.injected.await_landing(window.within)).await?;
        Ok(Some(InjectorSeen {
            landed: s.landed,
            text: s.detail,
            detail: json!({"skew_s": s.skew}),
        }))
    }

    async fn victim<C: Context>(
        &self,
        window: Window,
        cx: &C,
    ) -> Result<Option<VictimSeen>, C::Error> {
        let offset = self.injected.offset;
        let s = cx
            .guard(self.victim.await_offset(offset, window.within))
            .await?;
        Ok(Some(VictimSeen {
            landed: s.landed,
            detail: s.detail,
            pattern: self.victim.pattern.as_str().to_string(),
            skew: s.skew,
        }))
    }

    async fn heal<C: Context>(self, _cx: &C) -> Result<String, String> {
        self.injected.heal().map_err(|e| e.to_string())
    }
}

/// The control file to empty.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ClockUndo {
    pub control: String,
}

impl UndoRecord for ClockUndo {
    fn heal(&self, fault: &str, _reach: &crate::host::Reach) -> Result<String, String> {
        clear(Path::new(&self.control))
            .map(|line| format!("{fault}: {line}"))
            .map_err(|e| format!("{fault}: {e}"))
    }
}
