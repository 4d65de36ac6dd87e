//! Environment capabilities (method §2 step 3): what a plan needs, normalised from free
//! text; probes that check the machine for real; install plans offered to the operator;
//! and the matrix rows the session log records.

pub mod install;
pub mod matrix;
pub mod probe;
pub mod registry;

pub use install::{Blast, InstallPlan, PackageManager, display, install_plan};
pub use matrix::MatrixRow;
pub use probe::{Probe, ProbeEnv, probe, qdisc_kinds};
pub use registry::{Capability, Need, NeedSource, from_technique, normalise};

/// How often a capability the operator chose to `wait` for is probed again.
pub const WAIT_EVERY: std::time::Duration = std::time::Duration::from_secs(1);
/// How long such a wait lasts at most.
pub const WAIT_LIMIT: std::time::Duration = std::time::Duration::from_secs(600);

/// A re-probe interval (or limit) in the words the question and the status line both
/// use: `1 s`, `10 min`.
pub fn interval_words(ms: u64) -> String {
    let secs = ms.div_ceil(1000);
    if secs >= 60 && secs.is_multiple_of(60) {
        format!("{} min", secs / 60)
    } else {
        format!("{secs} s")
    }
}
