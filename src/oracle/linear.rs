//! The checkers that judge a history in one pass (no-lost-ack, exactly-once,
//! prefix-order, monotonic-reads), folded over a JSONL history while it is read:
//! no `History` is built, each op is dropped once its checker took what it keeps.

use super::checker::{CheckerReport, Refusal, mismatch};
use super::history::HistoryError;
use super::jsonl_read::{Header, read_jsonl};
use super::op_view::{OpSink, OpView};
use super::params::Params;
use super::session::monotonic_reads;
use super::{exactly_once, no_lost_ack, prefix_order};
use std::collections::BTreeMap;
use std::io::BufRead;

/// The checkers [`Linear`] folds.
pub const NAMES: [&str; 4] = [
    "no-lost-ack",
    exactly_once::NAME,
    prefix_order::NAME,
    monotonic_reads::NAME,
];

/// One of the folding checkers, ready for ops; or what it will report whatever
/// the ops are (decided when the history has been read, so an unreadable history
/// is reported as such first, as when it was parsed whole).
pub enum Linear {
    NoLostAck(no_lost_ack::Fold),
    ExactlyOnce(exactly_once::Fold),
    PrefixOrder(prefix_order::Fold),
    MonotonicReads(monotonic_reads::Fold),
    Report(CheckerReport),
    Refused(String),
}

impl Linear {
    /// The fold of `checker` with `params`; `None` for a checker that does not fold.
    /// `misfit`: why the plan's model or claim does not fit the checker.
    pub fn new(checker: &str, params: &Params, misfit: Option<String>) -> Option<Linear> {
        if !NAMES.contains(&checker) {
            return None;
        }
        if let Some(reason) = misfit {
            return Some(Linear::Report(mismatch(checker, "", reason)));
        }
        let made = match checker {
            "no-lost-ack" => params
                .only(checker, &[])
                .map(|()| Linear::NoLostAck(no_lost_ack::Fold::default())),
            exactly_once::NAME => exactly_once::Fold::new(params).map(|f| match f {
                Ok(fold) => Linear::ExactlyOnce(fold),
                Err(report) => Linear::Report(report),
            }),
            prefix_order::NAME => prefix_order::Fold::new(params).map(Linear::PrefixOrder),
            _ => monotonic_reads::Fold::new(params).map(Linear::MonotonicReads),
        };
        Some(made.unwrap_or_else(Linear::Refused))
    }

    /// Read a JSONL history from `reader` into the fold.
    pub fn read(&mut self, source: &str, reader: impl BufRead) -> Result<Header, HistoryError> {
        read_jsonl(source, reader, &BTreeMap::new(), self)
    }

    /// The report on the history read (`header`); `final_state` is the JSON text
    /// of the dump no-lost-ack and exactly-once judge against (exactly-once reads
    /// it where it lies). `Err`: a usage problem (bad parameters, no or a
    /// malformed dump).
    pub fn finish(
        self,
        header: &Header,
        final_state: Option<&str>,
    ) -> Result<CheckerReport, Refusal> {
        let dump = |name: &str| {
            final_state
                .ok_or_else(|| Refusal::Usage(format!("checker `{name}` needs a final-state dump")))
        };
        match self {
            Linear::NoLostAck(fold) => {
                let map =
                    no_lost_ack::parse_final_state(dump("no-lost-ack")?).map_err(Refusal::Dump)?;
                Ok(fold.finish(header, &map))
            }
            Linear::ExactlyOnce(fold) => fold.finish(
                header,
                exactly_once::Effects::Text(dump(exactly_once::NAME)?),
            ),
            Linear::PrefixOrder(fold) => Ok(fold.finish(header)),
            Linear::MonotonicReads(fold) => Ok(fold.finish(header)),
            Linear::Report(report) => Ok(report),
            Linear::Refused(why) => Err(Refusal::Usage(why)),
        }
    }
}

impl OpSink for Linear {
    fn op(&mut self, op: &OpView<'_>) {
        match self {
            Linear::NoLostAck(fold) => fold.op(op),
            Linear::ExactlyOnce(fold) => fold.op(op),
            Linear::PrefixOrder(fold) => fold.op(op),
            Linear::MonotonicReads(fold) => fold.op(op),
            Linear::Report(_) | Linear::Refused(_) => {}
        }
    }

    fn input_field(&self) -> Option<&str> {
        match self {
            Linear::ExactlyOnce(fold) => fold.input_field(),
            _ => None,
        }
    }
}
