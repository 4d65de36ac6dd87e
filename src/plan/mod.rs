//! Markdown test plans: model, parser and lint.

pub mod model;

pub use model::*;
