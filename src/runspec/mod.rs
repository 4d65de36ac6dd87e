//! The YAML run spec that binds plan scenarios and arms to commands, faults, landing
//! probes, quiesce conditions, histories, checkers and budget tiers as numbers.

pub mod history_fields;
pub mod landing_lint;
pub mod load;
pub mod model;
pub mod nodes;
pub mod traps;
pub mod vars;
pub mod yaml;

/// Durations live in the base layer ([`crate::duration`]); the run spec names them here too.
pub use crate::duration;

pub use load::{RunSpec, SpecError, load, sidecar_path};
pub use model::*;
