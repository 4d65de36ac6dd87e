//! faultline: executes distributed-system test plans and refuses any green result
//! that nobody proved (workload ran, fault landed, oracle could tell PASS from FAIL).
//!
//! The crate is layered one way: a module imports only the layers below its own, and
//! the layering test (`tests/suite/session_robust.rs`) fails on an import against
//! them. From the top (see `references/development.md` for the picture):
//!
//! - **entry points** — [`launch`] (`run`, `demo`, `resume`, `report`, `author`; a
//!   run starts its session's server process) and [`attach`] (`attach`, `sessions`, `stop`: clients of
//!   a running session over its Unix socket, in the protocol of [`session::wire`]).
//! - **readers** — [`report`] (report.md / .html, findings, junit.xml, metrics and
//!   figures), [`headless`] (one line per record) and [`tui`] (the terminal UI). They
//!   draw from [`session::view::View`], the one reducer of the journal, and never
//!   derive a fact of their own.
//! - **[`engine`]** — drives a session: preflight, scenarios, seeds, faults, checkers,
//!   re-runs and reduction. It never knows a terminal exists: it journals typed events
//!   and asks an [`session::operator::Operator`] whatever needs a human.
//! - **[`session`]** — the session directory, the append-only journal of typed events
//!   (the source of truth), the reducer, the attach server and runtime registry, heal,
//!   the watchdog and resume. [`author`] (author mode) sits beside it.
//! - **[`runspec`]** — loads the YAML binding of a plan's scenarios into typed specs;
//!   [`toolbox`] finds a SUT's own tools.
//! - **domain** — [`nemesis`] (fault kinds: a held fault returns its undo records and
//!   resources, and never journals), [`oracle`] (histories and checkers), [`verdict`]
//!   (the pure decision tree), [`plan`] (the markdown plan model, parser and lint),
//!   [`capability`] (requirements, probes, installs).
//! - **base** — [`host`] (where a command runs: this machine or an SSH node),
//!   [`exec`] (child processes), [`untrusted`] (reading what the system under test
//!   wrote where any uid may make names), [`sanitize`] and [`term_out`] (every byte
//!   from outside reaches a terminal cleaned), [`duration`] (durations as people write
//!   them), [`atomic`], [`exit`], [`logging`].

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

#[cfg(feature = "app")]
pub mod atomic;
#[cfg(feature = "app")]
pub mod attach;
#[cfg(feature = "app")]
pub mod author;
#[cfg(feature = "app")]
pub mod capability;
pub mod duration;
#[cfg(feature = "app")]
pub mod engine;
pub mod exec;
pub mod exit;
#[cfg(feature = "app")]
pub mod headless;
pub mod host;
#[cfg(feature = "app")]
pub mod launch;
#[cfg(feature = "app")]
pub mod logging;
pub mod nemesis;
pub mod oracle;
pub mod plan;
#[cfg(feature = "app")]
pub mod report;
pub mod runspec;
pub mod sanitize;
#[cfg(feature = "app")]
pub mod session;
pub mod term_out;
#[cfg(feature = "app")]
pub mod toolbox;
#[cfg(feature = "app")]
pub mod tui;
pub mod untrusted;
pub mod verdict;

#[cfg(feature = "app")]
#[path = "../examples/demo/sut/mod.rs"]
pub mod demo_sut;
