//! faultline: executes distributed-system test plans and refuses any green result
//! that nobody proved (workload ran, fault landed, oracle could tell PASS from FAIL).
//!
//! This first slice holds the plan model, parser and lint, the verdict decision tree
//! and the operation-history checkers; the engine that drives a session plugs into
//! these seams.

/// `print!` / `println!` for stdout through the one terminal writer
/// ([`term_out`]): every line sanitized, and a closed pipe (`| head`) drops the text
/// instead of panicking. `say!(...)` ends the line, `say!(raw ...)` writes the text
/// as it is (line ends included).
#[macro_export]
macro_rules! say {
    (raw $($arg:tt)*) => {
        $crate::term_out::stdout(&format!($($arg)*))
    };
    ($($arg:tt)*) => {
        $crate::term_out::stdout(&format!("{}\n", format_args!($($arg)*)))
    };
}

/// [`say!`] for stderr (`eprint!` / `eprintln!`): sanitized, never a panic.
#[macro_export]
macro_rules! say_err {
    (raw $($arg:tt)*) => {
        $crate::term_out::stderr(&format!($($arg)*))
    };
    ($($arg:tt)*) => {
        $crate::term_out::stderr(&format!("{}\n", format_args!($($arg)*)))
    };
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
pub mod term_out;
pub mod toolbox;
pub mod tui;
pub mod verdict;

#[path = "../examples/demo/sut/mod.rs"]
pub mod demo_sut;
