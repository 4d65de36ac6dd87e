//! faultline: executes distributed-system test plans and refuses any green result
//! that nobody proved (workload ran, fault landed, oracle could tell PASS from FAIL).
//!
//! This first slice holds the plan model, parser and lint, the verdict decision tree
//! and the operation-history checkers; the engine that drives a session plugs into
//! these seams.

pub mod attach;
pub mod author;
pub mod capability;
pub mod engine;
pub mod exec;
pub mod exit;
pub mod headless;
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
