//! Arm aggregation and session verdict tables (policy §8).

use Verdict::*;
use faultline::verdict::{SessionVerdict, Verdict, aggregate_arms, session_verdict};

#[test]
fn aggregate_arms_table() {
    let table: &[(&[Verdict], Verdict)] = &[
        (&[], NotRun),
        (&[PassHardening], PassHardening),
        (&[PassHardening, PassHardening], PassHardening),
        (&[NotRun, NotRun], NotRun),
        (&[PartialModel, PartialModel], PartialModel),
        (&[InconclusiveEnv, InconclusiveEnv], InconclusiveEnv),
        (
            &[PassHardening, FailReproducible, FailNondeterministic],
            FailReproducible,
        ),
        (
            &[PassHardening, FailNondeterministic, NotRun],
            FailNondeterministic,
        ),
        (&[PassHardening, NotRun], PartialSurface),
        (&[PassHardening, PartialModel], PartialSurface),
        (&[PassSmoke, InconclusiveOracleTooWeak], PartialSurface),
        (
            &[InconclusiveEnv, InconclusiveFaultNotProven],
            PartialSurface,
        ),
        (&[PassHardening, PassSmoke], PassSmoke),
        (&[PassSmoke, PassHardening, PassHardening], PassSmoke),
    ];
    for (arms, want) in table {
        assert_eq!(aggregate_arms(arms), *want, "arms {arms:?}");
    }
}

#[test]
fn session_verdict_table() {
    use SessionVerdict as S;
    let table: &[(&[Verdict], SessionVerdict)] = &[
        (&[], S::Blocked),
        (&[NotRun, NotRun], S::Blocked),
        (&[PassHardening, FailNondeterministic], S::Fail),
        (&[FailReproducible, NotRun], S::Fail),
        (&[PassSmoke, PassHardening], S::Done),
        (&[PassSmoke, NotRun], S::DoneWithConcerns),
        (&[PassSmoke, PartialModel], S::DoneWithConcerns),
        (&[PassHardening, InconclusiveEnv], S::DoneWithConcerns),
        (&[InconclusiveEnv, NotRun], S::Inconclusive),
        (&[PartialSurface], S::Inconclusive),
        (
            &[InconclusiveOracleTooWeak, InconclusiveFaultNotProven],
            S::Inconclusive,
        ),
    ];
    for (vs, want) in table {
        assert_eq!(session_verdict(vs), *want, "verdicts {vs:?}");
    }
    assert_eq!(i32::from(S::Done.exit()), 0);
    assert_eq!(i32::from(S::Blocked.exit()), 4);
}
