//! Verdicts: taxonomy, decision tree, arm aggregation, session verdict.

pub mod aggregate;
pub mod model;
pub mod tree;
pub mod words;

pub use aggregate::{aggregate_arms, session_verdict};
pub use model::*;
pub use tree::decide;
