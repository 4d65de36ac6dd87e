//! Process exit codes (method §8, faultline policy): [`Exit`], the code a command
//! ends with, and [`Halt`], the error of a step that ends its command early.

use std::process::ExitCode;

/// A process exit code, by name. `main` returns it as the process's [`ExitCode`].
///
/// Some names share a number: each command gives its codes their own meaning
/// (`check`'s 1 is an invalid history, `run`'s a FAIL).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exit(u8);

impl Exit {
    /// The command succeeded (lint: the plan is runnable; heal: everything healed).
    pub const OK: Exit = Exit(0);
    /// The command ran but did not do all it should: a heal action failed, `author`
    /// refused a scenario, a result could not be encoded or written.
    pub const FAILED: Exit = Exit(1);

    /// Session verdict DONE (`run`, `demo`, `resume`, and `attach` / `stop` when the
    /// run ends).
    pub const DONE: Exit = Exit(0);
    /// Session verdict FAIL.
    pub const FAIL: Exit = Exit(1);
    /// Session verdict DONE_WITH_CONCERNS.
    pub const DONE_WITH_CONCERNS: Exit = Exit(2);
    /// Session verdict INCONCLUSIVE.
    pub const INCONCLUSIVE: Exit = Exit(3);
    /// Session verdict BLOCKED.
    pub const BLOCKED: Exit = Exit(4);

    /// `check`: the history is valid under the checker.
    pub const CHECK_VALID: Exit = Exit(0);
    /// `check`: the checker found anomalies.
    pub const CHECK_INVALID: Exit = Exit(1);
    /// `check`: the checker could not tell (missing fields, budget, mismatch).
    pub const CHECK_UNKNOWN: Exit = Exit(3);

    /// Bad command-line usage.
    pub const USAGE: Exit = Exit(64);
    /// The plan is handed back to plan design: something it must declare is missing.
    pub const HANDED_BACK: Exit = Exit(65);
    /// An input file could not be read (or a session or its server could not be).
    pub const UNREADABLE: Exit = Exit(66);
    /// A file to be written exists or cannot be created (sysexits' EX_CANTCREAT).
    pub const CANT_CREATE: Exit = Exit(73);
    /// The machine cannot give what the command needs (sysexits' EX_IOERR): the
    /// session root is full, read-only or not writable, the run's network namespace
    /// or the session server cannot be made, a node's host key is not trusted, a
    /// result cannot be written. Every fault is healed first.
    pub const ENVIRONMENT: Exit = Exit(74);
    /// The session refused this client (not on its list; a viewer that tried to stop
    /// it; another attach protocol version): sysexits' EX_NOPERM.
    pub const REFUSED: Exit = Exit(77);

    /// Stopped by `signal` (after healing every fault): 128 + N, as a shell says it.
    pub fn signal(signal: nix::sys::signal::Signal) -> Exit {
        // Signal numbers are below 64, so the sum stays a byte.
        Exit(128 + signal as u8)
    }

    /// A code read back as a number: the exit a run's ending carries (the attach
    /// protocol's number, made by [`i32::from`]) or the session server's exit status.
    /// A number no exit code has cannot come from faultline: its word is unreadable.
    pub fn relayed(code: i32) -> Exit {
        u8::try_from(code).map_or(Exit::UNREADABLE, Exit)
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> ExitCode {
        ExitCode::from(exit.0)
    }
}

/// The number, as report.md and the attach protocol carry it.
impl From<Exit> for i32 {
    fn from(exit: Exit) -> i32 {
        i32::from(exit.0)
    }
}

/// The error of a step that ends its command early, holding the code the command
/// exits with. The step has said why already (on stderr), where it found the cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Halt(pub Exit);

impl From<Halt> for Exit {
    fn from(halt: Halt) -> Exit {
        halt.0
    }
}

#[cfg(test)]
mod tests {
    use super::Exit;
    use std::process::ExitCode;

    /// The numbers the CLI's help, the README and the tests promise.
    #[test]
    fn each_name_has_its_documented_number() {
        let documented = [
            (Exit::OK, 0),
            (Exit::FAILED, 1),
            (Exit::DONE, 0),
            (Exit::FAIL, 1),
            (Exit::DONE_WITH_CONCERNS, 2),
            (Exit::INCONCLUSIVE, 3),
            (Exit::BLOCKED, 4),
            (Exit::CHECK_VALID, 0),
            (Exit::CHECK_INVALID, 1),
            (Exit::CHECK_UNKNOWN, 3),
            (Exit::USAGE, 64),
            (Exit::HANDED_BACK, 65),
            (Exit::UNREADABLE, 66),
            (Exit::CANT_CREATE, 73),
            (Exit::ENVIRONMENT, 74),
            (Exit::REFUSED, 77),
        ];
        for (exit, number) in documented {
            assert_eq!(i32::from(exit), number, "{exit:?}");
        }
        assert_eq!(ExitCode::from(Exit::OK), ExitCode::SUCCESS);
        assert_eq!(ExitCode::from(Exit::FAILED), ExitCode::FAILURE);
        assert_eq!(
            i32::from(Exit::signal(nix::sys::signal::Signal::SIGINT)),
            130
        );
        assert_eq!(
            i32::from(Exit::signal(nix::sys::signal::Signal::SIGTERM)),
            143
        );
    }

    /// A command's codes never mean two things: the verdicts differ from each other,
    /// the errors from each other and from every verdict, and none is a signal's
    /// 128 + N.
    #[test]
    fn codes_that_must_differ_do() {
        let distinct = [
            Exit::DONE,
            Exit::FAIL,
            Exit::DONE_WITH_CONCERNS,
            Exit::INCONCLUSIVE,
            Exit::BLOCKED,
            Exit::USAGE,
            Exit::HANDED_BACK,
            Exit::UNREADABLE,
            Exit::CANT_CREATE,
            Exit::ENVIRONMENT,
            Exit::REFUSED,
        ];
        for (i, a) in distinct.iter().enumerate() {
            assert!(i32::from(*a) < 128, "{a:?} reads as a signal");
            for b in &distinct[i + 1..] {
                assert_ne!(a, b, "two codes share a number");
            }
        }
        let check = [Exit::CHECK_VALID, Exit::CHECK_INVALID, Exit::CHECK_UNKNOWN];
        assert!(check[0] != check[1] && check[1] != check[2] && check[0] != check[2]);
    }

    #[test]
    fn a_relayed_code_outside_a_byte_is_unreadable() {
        assert_eq!(
            Exit::relayed(143),
            Exit::signal(nix::sys::signal::Signal::SIGTERM)
        );
        assert_eq!(Exit::relayed(-1), Exit::UNREADABLE);
        assert_eq!(Exit::relayed(256), Exit::UNREADABLE);
    }
}
