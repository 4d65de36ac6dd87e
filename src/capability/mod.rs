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
