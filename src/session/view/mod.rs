//! The reducer: folds journal records, in order, into what a session stands at —
//! what is still injected or mounted, which process groups it started, what was
//! answered, what was decided. `heal`, `resume` and the driver's restart read a
//! session only through it.

use std::collections::BTreeMap;

use super::event::{
    CommandStarted, Event, FaultInjected, MountCreated, OperatorAnswer, Participant, SessionRoles,
    VerdictEvent,
};
use super::journal::{Record, Scope};

/// A record's payload with the scope it was journaled under.
#[derive(Debug, Clone, PartialEq)]
pub struct Scoped<T> {
    pub seq: u64,
    pub scope: Scope,
    pub item: T,
}

/// What a session stands at after the records applied so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct View {
    /// Faults injected and not (yet) healed, in journal order.
    pub open_faults: Vec<Scoped<FaultInjected>>,
    /// tmpfs mounts made and not removed.
    pub open_mounts: Vec<Scoped<MountCreated>>,
    /// Every process group the session started, first record per pgid.
    pub groups: Vec<Scoped<CommandStarted>>,
    /// The last answer to each question, by question id.
    pub answers: BTreeMap<String, OperatorAnswer>,
    /// Questions asked and neither answered nor withdrawn, by id.
    pub pending: BTreeMap<String, crate::engine::operator::Question>,
    /// Operators attached now, in the order they joined.
    pub participants: Vec<Participant>,
    /// Who may attach, once the server said.
    pub roles: Option<SessionRoles>,
    /// Every `verdict` record, in order.
    pub verdicts: Vec<Scoped<VerdictEvent>>,
    /// Records of kinds this build does not read: (seq, kind, why).
    pub unread: Vec<(u64, String, String)>,
    /// The last seq applied.
    pub seq: u64,
}

impl View {
    /// The view of `records`, applied in order.
    pub fn of(records: &[Record]) -> View {
        let mut view = View::default();
        for record in records {
            view.apply(record);
        }
        view
    }

    /// Folds one record in.
    pub fn apply(&mut self, record: &Record) {
        self.seq = record.seq;
        match &record.event {
            Event::FaultInjected(f) => self.open_faults.push(scoped(record, f)),
            Event::FaultHealed(h) => {
                if let Some(i) = self
                    .open_faults
                    .iter()
                    .position(|o| o.scope == record.scope && o.item.fault == h.fault)
                {
                    self.open_faults.remove(i);
                }
            }
            Event::MountCreated(m) => self.open_mounts.push(scoped(record, m)),
            Event::MountRemoved(m) => self.open_mounts.retain(|o| o.item.path != m.path),
            Event::CommandStarted(c) if !self.groups.iter().any(|g| g.item.pgid == c.pgid) => {
                self.groups.push(scoped(record, c));
            }
            Event::OperatorAnswer(a) => {
                self.pending.remove(&a.question);
                self.answers.insert(a.question.clone(), a.clone());
            }
            Event::QuestionAsked(q) => {
                self.pending
                    .insert(q.question.id.clone(), q.question.clone());
            }
            Event::QuestionWithdrawn(w) => {
                self.pending.remove(&w.question);
            }
            Event::ParticipantJoined(p) => self.participants.push(p.clone()),
            Event::ParticipantLeft(p) => {
                if let Some(i) = self.participants.iter().position(|o| o == p) {
                    self.participants.remove(i);
                }
            }
            Event::SessionRoles(r) => self.roles = Some(r.clone()),
            Event::Verdict(v) => self.verdicts.push(scoped(record, v)),
            Event::Unknown(u) => self
                .unread
                .push((record.seq, u.kind.clone(), u.why.clone())),
            _ => {}
        }
    }
}

fn scoped<T: Clone>(record: &Record, item: &T) -> Scoped<T> {
    Scoped {
        seq: record.seq,
        scope: record.scope.clone(),
        item: item.clone(),
    }
}
