//! faultline: executes distributed-system test plans and refuses any green result
//! that nobody proved (workload ran, fault landed, oracle could tell PASS from FAIL).
//!
//! This first slice holds the plan model, parser and lint, the verdict decision tree
//! and the operation-history checkers; the engine that drives a session plugs into
//! these seams.

/// `print!` / `println!` for stdout that a closed pipe (`| head`) cannot turn into a
/// panic: the text is dropped instead. `say!(...)` ends the line, `say!(raw ...)`
/// writes the text as it is.
#[macro_export]
macro_rules! say {
    (raw $($arg:tt)*) => {{
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        let _ = write!(out, $($arg)*);
        let _ = out.flush();
    }};
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, $($arg)*);
        let _ = out.flush();
    }};
}

pub mod atomic;
pub mod attach;
pub mod author;
pub mod capability;
pub mod engine;
pub mod exec;
pub mod exit;
pub mod headless;
pub mod host;
pub mod launch;
pub mod logging;
pub mod nemesis;
pub mod oracle;
pub mod plan;
pub mod report;
pub mod runspec;
pub mod sanitize;
pub mod session;
pub mod toolbox;
pub mod tui;
pub mod verdict;

#[path = "../examples/demo/sut/mod.rs"]
pub mod demo_sut;
