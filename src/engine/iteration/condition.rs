//! A condition retried until it holds: the cluster's health check before the
//! workload, quiescence after it. Each try is a command run to its end (within what
//! is left of the wait, and never less than one retry interval); a failed try is
//! followed by [`RETRY_EVERY`] of rest, and the wait gives up after the first failed
//! try that ends past `within`. While waiting for health, a service that ends with no
//! fault to explain it ends the wait at once.

use std::time::Duration;

use tokio::time::Instant;

use super::{EngineError, RETRY_EVERY, Runner};
use crate::exec::Outcome;

#[cfg(test)]
mod sim;

/// One try of the condition's command.
pub(super) struct Try {
    pub ok: bool,
    /// Its journal record.
    pub seq: u64,
    /// Records of services that ended, unexplained, while it ran.
    pub ended: Vec<u64>,
}

/// What the retry loop asks of the iteration.
pub(super) trait Condition {
    /// Runs the command once, to end within `deadline`.
    async fn try_once(&mut self, deadline: Duration) -> Result<Try, EngineError>;
    /// Looks at the services, when this wait watches them: the records of those that
    /// ended unexplained.
    fn ended(&mut self) -> Result<Vec<u64>, EngineError>;
    /// Rests `pause` unless the session is interrupted first.
    async fn rest(&mut self, pause: Duration) -> Result<(), EngineError>;
}

/// Retries `condition` until it holds or `within` passes: whether it held, the
/// record of its last try, and the records of services whose end cut the wait short.
pub(super) async fn until_ok<C: Condition>(
    condition: &mut C,
    within: Duration,
) -> Result<(bool, u64, Vec<u64>), EngineError> {
    let start = Instant::now();
    loop {
        let left = within.saturating_sub(start.elapsed());
        let tried = condition.try_once(left.max(RETRY_EVERY)).await?;
        if tried.ok {
            return Ok((true, tried.seq, Vec::new()));
        }
        if !tried.ended.is_empty() {
            return Ok((false, tried.seq, tried.ended));
        }
        let ended = condition.ended()?;
        if !ended.is_empty() {
            return Ok((false, tried.seq, ended));
        }
        if start.elapsed() >= within {
            return Ok((false, tried.seq, Vec::new()));
        }
        condition.rest(RETRY_EVERY).await?;
    }
}

/// The condition's command on a node (`None`: this machine), run by the iteration.
pub(super) struct Command<'r, 'a> {
    pub runner: &'r mut Runner<'a>,
    pub node: Option<&'r str>,
    pub name: &'r str,
    pub command: &'r str,
    /// Services are looked at while each try runs.
    pub watch: bool,
}

impl Condition for Command<'_, '_> {
    async fn try_once(&mut self, deadline: Duration) -> Result<Try, EngineError> {
        let (outcome, seq, ended) = if self.watch {
            self.runner
                .run_watching(self.node, self.name, self.command, deadline)
                .await?
        } else {
            let (outcome, seq) = self
                .runner
                .run_on(self.node, self.name, self.command, deadline)
                .await?;
            (outcome, seq, Vec::new())
        };
        Ok(Try {
            ok: outcome == Outcome::Exited(0),
            seq,
            ended,
        })
    }

    fn ended(&mut self) -> Result<Vec<u64>, EngineError> {
        if self.watch {
            self.runner.watch_services()
        } else {
            Ok(Vec::new())
        }
    }

    async fn rest(&mut self, pause: Duration) -> Result<(), EngineError> {
        self.runner.guard(tokio::time::sleep(pause)).await
    }
}
