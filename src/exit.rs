//! Process exit codes (method §8, faultline policy).
//!
//! Session verdict codes (0–4) live on [`crate::verdict::SessionVerdict::exit_code`].

/// The command succeeded (lint: the plan is runnable).
pub const OK: i32 = 0;
/// Bad command-line usage.
pub const USAGE: i32 = 64;
/// The plan is handed back to plan design: something it must declare is missing.
pub const HANDED_BACK: i32 = 65;
/// An input file could not be read.
pub const UNREADABLE: i32 = 66;
