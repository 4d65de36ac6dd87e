//! report.md's and session-log.md's long lists (one entry per scenario) laid out as
//! the template reads them, one entry at a time: converting the whole report to one
//! template value held
//! every scenario's several times over at the end of a long session (issue 33's
//! peak). The entries are made from the borrowed plan and outcome, which a template
//! value cannot hold (it must own what it holds), so a thread of the render's own
//! scope makes each list's entries as the template walks it, and hands them over
//! one by one through a channel with room for one.

use std::collections::HashMap;
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex, PoisonError};

use minijinja::value::{Enumerator, Object, ObjectRepr, Serde, Value};

use super::derived::{self, Ran};
use super::view;
use crate::plan::{self, Plan};
use crate::session::outcome::{ScenarioOutcome, SessionOutcome};

/// A list the template may walk.
#[derive(Debug, Clone, Copy)]
pub enum List {
    /// Every scenario of the outcome, as [`view::ScenarioView`].
    Scenarios,
    /// The scenarios closing the plan's hypothesis at this index, as [`Ran`].
    ClosedBy(usize),
    /// The planned scenarios that did not pass, as [`Ran`].
    Because,
    /// The scenarios whose Release budget is not provided.
    Disclosures,
    /// Every scenario of the outcome, as the session log shows its verdict.
    LogScenarios,
    /// Every scenario of the outcome, with the toolbox items its binding used.
    ToolboxUse,
}

/// Plan and outcome with their scenarios found by id (the first of two with one id,
/// as a search from the start finds it), so that each entry is made without a scan.
pub struct Index<'a> {
    pub plan: &'a Plan,
    pub outcome: &'a SessionOutcome,
    planned: HashMap<&'a str, &'a plan::Scenario>,
    outcomes: HashMap<&'a str, &'a ScenarioOutcome>,
}

impl<'a> Index<'a> {
    pub fn new(plan: &'a Plan, outcome: &'a SessionOutcome) -> Index<'a> {
        let planned = plan
            .scenarios
            .iter()
            .rev()
            .map(|s| (s.id.as_str(), s))
            .collect();
        let outcomes = outcome
            .scenarios
            .iter()
            .rev()
            .map(|s| (s.id.as_str(), s))
            .collect();
        Index {
            plan,
            outcome,
            planned,
            outcomes,
        }
    }

    /// Scenario `id`'s outcome in this session, if it holds one.
    pub fn outcome_of(&self, id: &str) -> Option<&'a ScenarioOutcome> {
        self.outcomes.get(id).copied()
    }

    /// How many entries `list` has.
    pub fn len(&self, list: List) -> usize {
        self.entries(list).count()
    }

    /// `list`'s entries, each made as it is reached.
    fn entries(&self, list: List) -> Box<dyn Iterator<Item = Entry<'a>> + '_> {
        let plan = self.plan;
        match list {
            List::Scenarios => Box::new(self.outcome.scenarios.iter().map(Entry::Scenario)),
            List::LogScenarios => Box::new(self.outcome.scenarios.iter().map(Entry::LogScenario)),
            List::ToolboxUse => Box::new(self.outcome.scenarios.iter().map(Entry::ToolboxUse)),
            List::ClosedBy(at) => {
                let Some(h) = plan.hypotheses.get(at) else {
                    return Box::new(std::iter::empty());
                };
                Box::new(
                    plan.scenarios
                        .iter()
                        .filter(move |s| s.closes.contains(&h.id))
                        .map(|s| Entry::Ran(&s.id)),
                )
            }
            List::Because => Box::new(
                plan.scenarios
                    .iter()
                    .filter(|s| !derived::passed(self.outcome_of(&s.id)))
                    .map(|s| Entry::Ran(&s.id)),
            ),
            List::Disclosures => Box::new(
                derived::disclosures(plan)
                    .into_iter()
                    .map(Entry::Disclosure),
            ),
        }
    }

    /// An entry as the template reads it.
    fn value(&self, entry: Entry<'a>) -> Value {
        match entry {
            Entry::Scenario(s) => {
                let planned = self.planned.get(s.id.as_str()).copied();
                Value::from(Serde(view::scenario_of(self.plan, planned, s)))
            }
            Entry::Ran(id) => Value::from(Serde(Ran::of(id, self.outcome_of(id)))),
            Entry::Disclosure(d) => Value::from(Serde(d)),
            Entry::LogScenario(s) => {
                let arms = self
                    .planned
                    .get(s.id.as_str())
                    .is_some_and(|p| !p.arms.is_empty());
                Value::from(Serde(super::log::scenario(arms, s)))
            }
            Entry::ToolboxUse(s) => Value::from(Serde(super::log::toolbox_use(s))),
        }
    }
}

enum Entry<'a> {
    Scenario(&'a ScenarioOutcome),
    Ran(&'a str),
    Disclosure(derived::Disclosure<'a>),
    LogScenario(&'a ScenarioOutcome),
    ToolboxUse(&'a ScenarioOutcome),
}

/// A request for a list's entries, and where to send them.
type Ask = (List, SyncSender<Value>);

/// Where the template asks for lists while it renders; closed once it is done.
pub type Asks = Arc<Mutex<Option<Sender<Ask>>>>;

/// Runs `render` with the lists of `index` made on request: `render` is handed the
/// [`Asks`] to build [`lazy`] values on, and its result is returned once every list
/// it asked for has ended.
pub fn rendering<T>(index: &Index<'_>, render: impl FnOnce(&Asks) -> T) -> T {
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel::<Ask>();
        let asks: Asks = Arc::new(Mutex::new(Some(tx)));
        // Each list on a thread of its own: a list walked inside another's loop
        // then never waits on the other's entry.
        scope.spawn(move || {
            for (list, entries) in rx {
                scope.spawn(move || {
                    for entry in index.entries(list) {
                        if entries.send(index.value(entry)).is_err() {
                            break; // the template stopped reading it
                        }
                    }
                });
            }
        });
        let out = render(&asks);
        // No more lists: the thread waiting for asks ends, and with it the scope.
        asks.lock().unwrap_or_else(PoisonError::into_inner).take();
        out
    })
}

/// `list` as a template value of `len` entries, made on request through `asks`.
pub fn lazy(list: List, len: usize, asks: &Asks) -> Value {
    Value::from_object(Lazy {
        list,
        len,
        asks: asks.clone(),
    })
}

#[derive(Debug)]
struct Lazy {
    list: List,
    len: usize,
    asks: Asks,
}

impl Object for Lazy {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Iterable
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        Some(self.len)
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        let (tx, rx) = mpsc::sync_channel(1);
        let asked = self
            .asks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .is_some_and(|asks| asks.send((self.list, tx)).is_ok());
        if !asked {
            return Enumerator::Empty;
        }
        Enumerator::Iter(Box::new(Entries {
            rx: Mutex::new(rx),
            left: self.len,
        }))
    }
}

/// One walk of a list. Its exact length is known, so `loop.last` holds.
struct Entries {
    rx: Mutex<Receiver<Value>>,
    left: usize,
}

impl Iterator for Entries {
    type Item = Value;

    fn next(&mut self) -> Option<Value> {
        let next = self
            .rx
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .recv()
            .ok()?;
        self.left = self.left.saturating_sub(1);
        Some(next)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}
