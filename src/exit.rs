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
/// A file to be written exists or cannot be created (sysexits' EX_CANTCREAT).
pub const CANT_CREATE: i32 = 73;
/// The session root cannot take the session: full, read-only or not writable
/// (sysexits' EX_IOERR). Every fault is healed first.
pub const ENVIRONMENT: i32 = 74;

/// `check`: the history is valid under the checker.
pub const CHECK_VALID: i32 = 0;
/// `check`: the checker found anomalies.
pub const CHECK_INVALID: i32 = 1;
/// `check`: the checker could not tell (missing fields, budget, mismatch).
pub const CHECK_UNKNOWN: i32 = 3;
