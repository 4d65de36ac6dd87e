//! What every fuzz target checks beyond "no panic": each error a reader returns names
//! the file it was given and a line that exists in the input. A target is one call
//! into this file, so a new reader is one more small target.

use std::sync::LazyLock;

use faultline::oracle::format::{Format, fold_history, read_history_file};
use faultline::oracle::op_view::{OpSink, OpView};
use faultline::oracle::{History, HistoryError, Op};
use faultline::plan::{Plan, lint, parse_plan};
use faultline::runspec::{SpecError, load};

/// Name the plan under test is given; errors must carry it back.
pub const PLAN_FILE: &str = "fuzz-plan.md";
/// Name the sidecar under test is given.
pub const SIDECAR_FILE: &str = "fuzz-plan.run.yaml";
/// Name the history under test is given.
pub const HISTORY_FILE: &str = "fuzz-history";

/// Arbitrary bytes as text: invalid UTF-8 is replaced, not skipped, so every input
/// reaches the reader.
pub fn text(data: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(data)
}

/// Last line a 1-based line number may point at (one past the end names end of
/// input). YAML and CommonMark also break lines at a lone `\r`, so it counts as one.
fn last_line(text: &str) -> usize {
    let lone_cr = text.matches('\r').count() - text.matches("\r\n").count();
    text.matches('\n').count() + lone_cr + 2
}

fn check_spec_errors(errors: &[SpecError], files: &[(&str, &str)]) {
    for e in errors {
        let Some((_, text)) = files.iter().find(|(name, _)| *name == e.file) else {
            panic!("run-spec error names an unknown file: {e}");
        };
        assert!(
            (1..=last_line(text) as u64).contains(&e.line),
            "run-spec error names line {} outside its file: {e}",
            e.line
        );
    }
}

/// Parses and lints a plan, then loads its embedded run-spec blocks.
pub fn plan(data: &[u8]) {
    let text = text(data);
    let plan = parse_plan(PLAN_FILE, &text);
    for p in lint(&plan) {
        assert!(
            (1..=last_line(&text)).contains(&p.line),
            "lint problem at line {} outside the plan: {p:?}",
            p.line
        );
        assert!(!p.field.is_empty(), "lint problem names no field: {p:?}");
    }
    if let Err(errors) = load(&plan, None) {
        check_spec_errors(&errors, &[(PLAN_FILE, &text)]);
    }
}

/// The demo plan: real scenario ids for an arbitrary sidecar to bind.
static DEMO: LazyLock<(String, Plan)> = LazyLock::new(|| {
    let text = include_str!("../../examples/demo/plan.md").to_string();
    let plan = parse_plan(PLAN_FILE, &text);
    (text, plan)
});

/// Loads an arbitrary sidecar against the demo plan.
pub fn sidecar(data: &[u8]) {
    let text = text(data);
    let (plan_text, plan) = &*DEMO;
    if let Err(errors) = load(plan, Some((SIDECAR_FILE, &text))) {
        check_spec_errors(&errors, &[(PLAN_FILE, plan_text), (SIDECAR_FILE, &text)]);
    }
}

/// A history reader: source name and text in, history or a located error out.
pub type HistoryReader = fn(&str, &str) -> Result<History, HistoryError>;

/// Runs `reader` on arbitrary text.
pub fn history(reader: HistoryReader, data: &[u8]) {
    let text = text(data);
    let Err(e) = reader(HISTORY_FILE, &text) else {
        return;
    };
    let (source, line) = match &e {
        HistoryError::Field {
            source_name, line, ..
        }
        | HistoryError::Line {
            source_name, line, ..
        } => (source_name, *line),
    };
    assert_eq!(source, HISTORY_FILE, "history error names another file: {e}");
    assert!(
        (1..=last_line(&text)).contains(&line),
        "history error names line {line} outside the input: {e}"
    );
}

/// The ops a fold is handed.
struct Ops(Vec<Op>);

impl OpSink for Ops {
    fn op(&mut self, op: &OpView<'_>) {
        self.0.push(op.to_op());
    }
}

/// The raw bytes (not made UTF-8 first) in `format` streamed into a History, and
/// folded as a checker folds them: the same ops, header and error.
pub fn streamed_agrees(format: Format, data: &[u8]) {
    let whole = read_history_file(format, HISTORY_FILE, data);
    let mut ops = Ops(Vec::new());
    let folded = fold_history(format, HISTORY_FILE, data, Some(|| Ok(data)), &mut ops);
    match (whole, folded) {
        (Ok(history), Ok(header)) => {
            assert_eq!(history.header(), header);
            assert_eq!(history.ops, ops.0);
        }
        (Err(a), Err(b)) => {
            assert_eq!(a.to_string(), b.to_string());
            assert!(a.to_string().starts_with(HISTORY_FILE), "{a}");
        }
        (a, b) => panic!("read whole: {a:?}; folded: {b:?}"),
    }
}
