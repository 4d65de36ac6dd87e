//! Markdown test plans: model, parser and lint.

mod builder;
pub mod checker_pick;
pub mod discover;
pub mod lint;
pub mod model;
mod norm;
pub mod parse;
pub mod render;

pub use lint::{Problem, Severity, hands_back, lint};
pub use model::*;
pub use parse::parse_plan;
pub use render::{lint_json, lint_text};
