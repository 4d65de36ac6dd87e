//! Verdicts: taxonomy, decision tree, arm aggregation, session verdict.

pub mod model;

pub use model::*;
