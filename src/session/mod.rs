//! A session's persistence: its directory, the journal of typed events, the one
//! reducer every reader uses, healing after a crash, the watchdog and resume.
//!
//! The engine writes events here; the TUI, headless output, the documents, `heal`
//! and `resume` read them back through [`view::View`]. Nothing in here draws.

pub mod client;
pub mod dir;
pub mod event;
pub mod heal;
pub mod journal;
pub mod label;
pub mod operator;
pub mod outcome;
pub mod resume;
pub mod roles;
pub mod runtime;
pub mod server;
pub mod summary;
pub mod view;
pub mod watchdog;
pub mod wire;
