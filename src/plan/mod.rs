//! Markdown test plans: model, parser and lint.

mod builder;
pub mod checker_pick;
pub mod discover;
pub mod lint;
pub mod model;
mod norm;
pub mod parse;
pub mod render;
pub mod scaffold;

pub use lint::{Problem, Severity, hands_back, lint};
pub use model::*;
pub use parse::parse_plan;
pub use render::{lint_json, lint_text};

/// Reads a text file (a plan, a run spec) whole. Text that is not UTF-8 is refused
/// with where it stops being UTF-8 (line, column, byte offset), so the operator can
/// find the byte; an I/O error keeps its own message.
pub fn read_text(path: &std::path::Path) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let good = &e.as_bytes()[..at];
        let line = good.iter().filter(|b| **b == b'\n').count() + 1;
        let column = at - good.iter().rposition(|b| *b == b'\n').map_or(0, |p| p + 1) + 1;
        format!("not UTF-8 at line {line}, column {column} (byte {at}); plans and run specs are UTF-8 text")
    })
}
