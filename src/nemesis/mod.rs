//! Fault kinds. Each fault is a resource with a lifetime: injected, observed from the
//! injector side, healed — and healed on drop if nobody healed it explicitly.

pub mod command;
pub mod landing;
pub mod process;
