//! Anomaly kinds (Adya's, as Elle names them), isolation levels, and which level
//! each kind violates.

/// An isolation level the `consistency` parameter names, weakest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    ReadUncommitted,
    ReadCommitted,
    SnapshotIsolation,
    Serializable,
    StrictSerializable,
}

impl Level {
    pub const NAMES: &'static str = "read-uncommitted, read-committed, snapshot-isolation, \
                                     serializable, strict-serializable";

    pub fn from_name(name: &str) -> Option<Level> {
        Some(match name {
            "read-uncommitted" => Level::ReadUncommitted,
            "read-committed" => Level::ReadCommitted,
            "snapshot-isolation" => Level::SnapshotIsolation,
            "serializable" => Level::Serializable,
            "strict-serializable" => Level::StrictSerializable,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Level::ReadUncommitted => "read-uncommitted",
            Level::ReadCommitted => "read-committed",
            Level::SnapshotIsolation => "snapshot-isolation",
            Level::Serializable => "serializable",
            Level::StrictSerializable => "strict-serializable",
        }
    }
}

/// The dependency cycle classes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CycleClass {
    /// Write cycle: ww edges only.
    G0,
    /// ww and wr edges.
    G1c,
    /// Exactly one rw edge.
    GSingle,
    /// Two or more rw edges.
    G2Item,
}

/// Which order edges a cycle needs besides the data dependencies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Order {
    None,
    Process,
    Realtime,
}

/// An anomaly kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Cycle(CycleClass, Order),
    /// Aborted read: a read saw a failed txn's write.
    G1a,
    /// Intermediate read: a read saw a write its txn later overwrote.
    G1b,
    /// A txn's read disagrees with its own earlier reads / writes.
    Internal,
    /// A value twice in one read of a list.
    Duplicate,
    /// Two reads of a key that are not prefixes of one order.
    IncompatibleOrder,
    /// A read of a value no txn wrote.
    GarbageRead,
    /// Two or more committed txns read one version of a key and each wrote it.
    LostUpdate,
}

impl Kind {
    pub fn name(self) -> String {
        match self {
            Kind::Cycle(class, order) => {
                let base = match class {
                    CycleClass::G0 => "G0",
                    CycleClass::G1c => "G1c",
                    CycleClass::GSingle => "G-single",
                    CycleClass::G2Item => "G2-item",
                };
                match order {
                    Order::None => base.to_string(),
                    Order::Process => format!("{base}-process"),
                    Order::Realtime => format!("{base}-realtime"),
                }
            }
            Kind::G1a => "G1a".into(),
            Kind::G1b => "G1b".into(),
            Kind::Internal => "internal".into(),
            Kind::Duplicate => "duplicate-elements".into(),
            Kind::IncompatibleOrder => "incompatible-order".into(),
            Kind::GarbageRead => "garbage-read".into(),
            Kind::LostUpdate => "lost-update".into(),
        }
    }

    /// The weakest level this kind violates; `None`: every level (the history
    /// itself is impossible).
    pub fn weakest(self) -> Option<Level> {
        match self {
            Kind::Cycle(_, Order::Process | Order::Realtime) => Some(Level::StrictSerializable),
            Kind::Cycle(CycleClass::G0, _) => Some(Level::ReadUncommitted),
            Kind::Cycle(CycleClass::G1c, _) | Kind::G1a | Kind::G1b => Some(Level::ReadCommitted),
            Kind::Cycle(CycleClass::GSingle, _) | Kind::LostUpdate => {
                Some(Level::SnapshotIsolation)
            }
            Kind::Cycle(CycleClass::G2Item, _) => Some(Level::Serializable),
            Kind::Internal | Kind::Duplicate | Kind::IncompatibleOrder | Kind::GarbageRead => None,
        }
    }

    /// Does this kind fail a check at `level`?
    pub fn fails(self, level: Level) -> bool {
        self.weakest().is_none_or(|w| w <= level)
    }

    /// "violates read-committed" / "violates every level".
    pub fn violates(self) -> String {
        match self.weakest() {
            Some(l) => format!("violates {} and stronger", l.name()),
            None => "violates every level".into(),
        }
    }
}

use crate::oracle::checker::Cycle;

/// One anomaly found: its kind, the txns' op ids and the explanation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub kind: Kind,
    pub ops: Vec<String>,
    pub why: String,
    /// The cycle, for its figure (cycle anomalies only).
    pub cycle: Option<Cycle>,
}
