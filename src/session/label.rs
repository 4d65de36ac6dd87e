//! Typed sub-kinds of journal records: which pass of a seed an iteration is
//! ([`IterationLabel`]) and which of the run spec's roles a command plays
//! ([`CommandRole`]). Both are written as the strings journals always held
//! (`seed-3`, `seed-3-rerun`, `seed-3-reduce-2`; `workload`, `quiesce`, …), so older
//! journals read unchanged; every builder and reader goes through these types instead
//! of formatting or matching the strings itself.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Which pass of a seed an iteration is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Pass {
    /// The seed's own iteration.
    #[default]
    Seed,
    /// The same-seed re-run of a failure.
    Rerun,
    /// Reduction candidate `n` (1-based).
    Reduce(u32),
}

/// An iteration's label: its seed and pass. Ordered as they run: a seed, its re-run,
/// then its reduction candidates by number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct IterationLabel {
    pub seed: u64,
    pub pass: Pass,
}

impl IterationLabel {
    pub fn seed(seed: u64) -> Self {
        IterationLabel {
            seed,
            pass: Pass::Seed,
        }
    }

    pub fn rerun(seed: u64) -> Self {
        IterationLabel {
            seed,
            pass: Pass::Rerun,
        }
    }

    pub fn reduce(seed: u64, run: u32) -> Self {
        IterationLabel {
            seed,
            pass: Pass::Reduce(run),
        }
    }

    /// The seed's own iteration (not a re-run or a reduction candidate).
    pub fn is_seed(&self) -> bool {
        self.pass == Pass::Seed
    }

    pub fn is_rerun(&self) -> bool {
        self.pass == Pass::Rerun
    }

    /// What the iteration is, in words: `seed 3`, `re-run of seed 3`,
    /// `reduction run 2 (seed 3)`.
    pub fn words(&self) -> String {
        match self.pass {
            Pass::Seed => format!("seed {}", self.seed),
            Pass::Rerun => format!("re-run of seed {}", self.seed),
            Pass::Reduce(n) => format!("reduction run {n} (seed {})", self.seed),
        }
    }

    /// Splits a file stem that starts with a label (`seed-3-rerun-latency` →
    /// (`seed-3-rerun`, `latency`)); the rest must not be empty.
    pub fn split_prefix(stem: &str) -> Option<(IterationLabel, &str)> {
        let digits = |s: &str| s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        let rest = stem.strip_prefix("seed-")?;
        let n = digits(rest);
        let seed = rest[..n].parse().ok()?;
        let after = &rest[n..];
        let (pass, tail) = if let Some(t) = after.strip_prefix("-rerun") {
            (Pass::Rerun, t)
        } else if let Some(r) = after.strip_prefix("-reduce-")
            && digits(r) > 0
            && let Ok(k) = r[..digits(r)].parse()
        {
            (Pass::Reduce(k), &r[digits(r)..])
        } else {
            (Pass::Seed, after)
        };
        // A pass must end where the name starts (`seed-1-rerunx-…` is seed 1's
        // `rerunx-…`), and one with no name after it is itself a seed's figure name
        // (`seed-1-rerun` is seed 1's figure `rerun`).
        let (pass, tail) = if pass == Pass::Seed || tail.starts_with('-') {
            (pass, tail)
        } else {
            (Pass::Seed, after)
        };
        let name = tail.strip_prefix('-').filter(|t| !t.is_empty())?;
        Some((IterationLabel { seed, pass }, name))
    }
}

impl fmt::Display for IterationLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.pass {
            Pass::Seed => write!(f, "seed-{}", self.seed),
            Pass::Rerun => write!(f, "seed-{}-rerun", self.seed),
            Pass::Reduce(n) => write!(f, "seed-{}-reduce-{n}", self.seed),
        }
    }
}

/// A label that is not `seed-N`, `seed-N-rerun` or `seed-N-reduce-K`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotALabel(pub String);

impl fmt::Display for NotALabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is not an iteration label (seed-N, seed-N-rerun or seed-N-reduce-K)",
            crate::sanitize::line(&self.0)
        )
    }
}

impl std::error::Error for NotALabel {}

impl FromStr for IterationLabel {
    type Err = NotALabel;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || NotALabel(s.to_string());
        let number = |t: &str| {
            (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
                .then(|| t.parse().ok())
                .flatten()
        };
        let rest = s.strip_prefix("seed-").ok_or_else(bad)?;
        if let Some(seed) = rest.strip_suffix("-rerun") {
            return Ok(IterationLabel::rerun(number(seed).ok_or_else(bad)?));
        }
        if let Some((seed, run)) = rest.split_once("-reduce-") {
            let run = number(run).and_then(|n: u64| u32::try_from(n).ok());
            return Ok(IterationLabel::reduce(
                number(seed).ok_or_else(bad)?,
                run.ok_or_else(bad)?,
            ));
        }
        Ok(IterationLabel::seed(number(rest).ok_or_else(bad)?))
    }
}

impl Serialize for IterationLabel {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for IterationLabel {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// The role a command plays in an iteration, as the run spec names it; services are
/// named by their own names and have no role here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CommandRole {
    Workload,
    Quiesce,
    FinalState,
    Checker,
}

impl CommandRole {
    /// The name a command of this role is journaled and logged under.
    pub const fn as_str(self) -> &'static str {
        match self {
            CommandRole::Workload => "workload",
            CommandRole::Quiesce => "quiesce",
            CommandRole::FinalState => "final-state",
            CommandRole::Checker => "checker",
        }
    }

    /// The role a journaled command name stands for; `None` for a service.
    pub fn of(name: &str) -> Option<CommandRole> {
        [
            CommandRole::Workload,
            CommandRole::Quiesce,
            CommandRole::FinalState,
            CommandRole::Checker,
        ]
        .into_iter()
        .find(|r| r.as_str() == name)
    }

    /// Whether the command judges the history (the oracle phase).
    pub fn judges(self) -> bool {
        matches!(self, CommandRole::FinalState | CommandRole::Checker)
    }
}

impl fmt::Display for CommandRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_round_trip_as_the_strings_journals_hold() {
        for (text, label) in [
            ("seed-1", IterationLabel::seed(1)),
            ("seed-12-rerun", IterationLabel::rerun(12)),
            ("seed-3-reduce-10", IterationLabel::reduce(3, 10)),
        ] {
            assert_eq!(text.parse::<IterationLabel>(), Ok(label));
            assert_eq!(label.to_string(), text);
            let json = serde_json::to_string(&label).expect("serialize");
            assert_eq!(json, format!("\"{text}\""));
            let back: IterationLabel = serde_json::from_str(&json).expect("deserialize");
            assert_eq!(back, label);
        }
        for bad in [
            "",
            "seed-",
            "seed-x",
            "seed-1-",
            "seed-1-rerun-2",
            "seed--1",
            "1",
            "seed-1-reduce-",
        ] {
            assert!(bad.parse::<IterationLabel>().is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn labels_order_as_they_run() {
        let mut labels = [
            IterationLabel::reduce(1, 10),
            IterationLabel::seed(2),
            IterationLabel::reduce(1, 2),
            IterationLabel::rerun(1),
            IterationLabel::seed(1),
        ];
        labels.sort();
        let texts: Vec<String> = labels.iter().map(ToString::to_string).collect();
        assert_eq!(
            texts,
            [
                "seed-1",
                "seed-1-rerun",
                "seed-1-reduce-2",
                "seed-1-reduce-10",
                "seed-2"
            ]
        );
    }

    #[test]
    fn a_pass_ends_where_the_figure_name_starts() {
        // The common shapes are in report::view's figure-file test.
        fn split(s: &str) -> Option<(String, &str)> {
            IterationLabel::split_prefix(s).map(|(l, n)| (l.to_string(), n))
        }
        assert_eq!(
            split("seed-1-rerunx-latency"),
            Some(("seed-1".into(), "rerunx-latency"))
        );
        assert_eq!(split("seed-1-rerun"), Some(("seed-1".into(), "rerun")));
        assert_eq!(
            split("seed-1-reduce-3x-a"),
            Some(("seed-1".into(), "reduce-3x-a"))
        );
    }

    #[test]
    fn roles_are_the_journaled_names() {
        for role in [
            CommandRole::Workload,
            CommandRole::Quiesce,
            CommandRole::FinalState,
            CommandRole::Checker,
        ] {
            assert_eq!(CommandRole::of(role.as_str()), Some(role));
        }
        assert_eq!(CommandRole::of("n1"), None);
    }
}
