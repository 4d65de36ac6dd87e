//! The retry loop of health and quiescence on tokio's paused clock, against an
//! in-process SUT: a store whose replication backlog drains at a known time, whose
//! check takes 50 ms, and one of whose members may die. The real commands it stands
//! in for run in every end-to-end test with a `health:` or `quiesce:` (the demo among
//! them).

use std::time::Duration;

use tokio::time::Instant;

use super::{Condition, Try, until_ok};
use crate::engine::iteration::EngineError;

/// The record a dead member's `service-exited` would have.
const DEATH: u64 = 999;

struct Store {
    t0: Instant,
    /// The backlog is drained (the check passes) from this time on.
    quiet_at: Duration,
    check_takes: Duration,
    /// A member dies then, with no fault to explain it.
    dies_at: Option<Duration>,
    /// The services are looked at between tries (the health wait).
    watch: bool,
    /// The check's own run sees a death during it (a health check that watches).
    sees_death: bool,
    /// Each try: when it started and the deadline it was given, in ms.
    tries: Vec<(u128, u128)>,
}

impl Store {
    fn new(quiet_at: Duration) -> Store {
        Store {
            t0: Instant::now(),
            quiet_at,
            check_takes: Duration::from_millis(50),
            dies_at: None,
            watch: false,
            sees_death: false,
            tries: Vec::new(),
        }
    }

    fn dead(&self) -> Vec<u64> {
        let dead = self.dies_at.is_some_and(|at| self.t0.elapsed() >= at);
        if dead { vec![DEATH] } else { Vec::new() }
    }

    fn starts(&self) -> Vec<u128> {
        self.tries.iter().map(|(start, _)| *start).collect()
    }
}

impl Condition for Store {
    async fn try_once(&mut self, deadline: Duration) -> Result<Try, EngineError> {
        self.tries
            .push((self.t0.elapsed().as_millis(), deadline.as_millis()));
        tokio::time::sleep(self.check_takes.min(deadline)).await;
        let ended = if self.sees_death {
            self.dead()
        } else {
            Vec::new()
        };
        Ok(Try {
            ok: self.t0.elapsed() >= self.quiet_at,
            seq: self.tries.len() as u64,
            ended,
        })
    }

    fn ended(&mut self) -> Result<Vec<u64>, EngineError> {
        Ok(if self.watch { self.dead() } else { Vec::new() })
    }

    async fn rest(&mut self, pause: Duration) -> Result<(), EngineError> {
        tokio::time::sleep(pause).await;
        Ok(())
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Tries every 250 ms (a 50 ms check, 200 ms of rest) until the one that ends after
/// the backlog drained; that try's record is cited.
#[tokio::test(start_paused = true)]
async fn quiescence_is_reached_at_the_first_try_after_the_backlog_drains() {
    let mut store = Store::new(ms(1310));
    let reached = until_ok(&mut store, ms(5000)).await.expect("waited");
    assert_eq!(reached, (true, 7, Vec::new()));
    assert_eq!(store.starts(), [0, 250, 500, 750, 1000, 1250, 1500]);
    assert_eq!(store.t0.elapsed(), ms(1550));
}

/// A backlog that never drains: the wait gives up after the first failed try that
/// ends past `within`, each try given what is left (never less than the 200 ms
/// retry interval), and cites its last try.
#[tokio::test(start_paused = true)]
async fn quiescence_not_reached_gives_up_after_the_try_that_ends_past_its_timeout() {
    let mut store = Store::new(ms(60_000));
    let reached = until_ok(&mut store, ms(1000)).await.expect("waited");
    assert_eq!(reached, (false, 5, Vec::new()));
    assert_eq!(
        store.tries,
        [(0, 1000), (250, 750), (500, 500), (750, 250), (1000, 200)]
    );
    assert_eq!(store.t0.elapsed(), ms(1050));
}

/// Waiting for health, a member that dies ends the wait at the next look, with its
/// record; waiting for quiescence, services are not looked at, so the wait goes on.
#[tokio::test(start_paused = true)]
async fn a_member_that_dies_ends_the_health_wait_at_once_but_not_quiescence() {
    let mut store = Store::new(ms(60_000));
    store.dies_at = Some(ms(600));
    store.watch = true;
    let health = until_ok(&mut store, ms(5000)).await.expect("waited");
    assert_eq!(health, (false, 4, vec![DEATH]));
    assert_eq!(store.t0.elapsed(), ms(800));

    // A death the try itself saw ends the wait with that try, before any look.
    let mut store = Store::new(ms(60_000));
    store.dies_at = Some(ms(520));
    store.sees_death = true;
    let health = until_ok(&mut store, ms(5000)).await.expect("waited");
    assert_eq!(health, (false, 3, vec![DEATH]));
    assert_eq!(store.t0.elapsed(), ms(550));

    let mut store = Store::new(ms(60_000));
    store.dies_at = Some(ms(600));
    let quiet = until_ok(&mut store, ms(2000)).await.expect("waited");
    assert_eq!(quiet, (false, 9, Vec::new()));
    assert_eq!(store.t0.elapsed(), ms(2050));
}
