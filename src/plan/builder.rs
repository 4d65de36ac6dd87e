//! Builders used by the parser: list items (with their bold label and nested
//! items) and scenarios under construction.

use std::sync::LazyLock;

use regex::Regex;

use super::model::*;
use super::norm::{extract_ids, model_kind};

/// An arm id at the start of a §7.M.S item, e.g. `` `S5/api` — … ``.
pub(super) static ARM_RE: LazyLock<Regex> = LazyLock::new(|| {
    super::parse::re(r"^\s*`?([A-Za-z]+\d+/[A-Za-z0-9_.-]+)`?\s*(?:—|–|-|:)?\s*(?s)(.*)$")
});

/// A list item being collected: its bold leading label, its text and nested items.
#[derive(Default)]
pub(super) struct Item {
    pub(super) line: usize,
    pub(super) label: Option<String>,
    pub(super) in_label: bool,
    pub(super) label_done: bool,
    pub(super) text: String,
    pub(super) children: Vec<Item>,
}

impl Item {
    /// Label and value, also splitting an unbolded `Label: value`.
    pub(super) fn label_value(&self) -> (String, String) {
        let text = self.text.trim();
        if let Some(l) = &self.label {
            let value = text.trim_start_matches(':').trim();
            return (clean_label(l), value.to_string());
        }
        if let Some((l, v)) = text.split_once(':')
            && l.len() <= 40
        {
            return (clean_label(l), v.trim().to_string());
        }
        (String::new(), text.to_string())
    }

    /// Item text (without the label) followed by nested items as `- …` lines.
    pub(super) fn full_value(&self) -> String {
        let (_, value) = self.label_value();
        let mut out = value;
        for child in &self.children {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str("- ");
            out.push_str(&child.whole_text());
        }
        out
    }

    /// Label, text and children as one string.
    pub(super) fn whole_text(&self) -> String {
        let mut s = match &self.label {
            Some(l) => format!("{} {}", l.trim(), self.text.trim()),
            None => self.text.trim().to_string(),
        };
        for child in &self.children {
            s.push_str("\n- ");
            s.push_str(&child.whole_text());
        }
        s
    }
}

pub(super) fn clean_label(label: &str) -> String {
    label
        .trim()
        .trim_end_matches(':')
        .trim()
        .to_lowercase()
        .replace('’', "'")
}

/// What the scenario-level cursor is inside.
#[derive(PartialEq, Clone, Copy)]
pub(super) enum Mode {
    Scenario,
    SevenM,
    SevenMS,
}

/// A scenario under construction.
pub(super) struct ScenarioBuilder {
    pub(super) s: Scenario,
    pub(super) mode: Mode,
    pub(super) seven_m: Option<SevenMBlock>,
    pub(super) not_applicable: Option<(String, usize)>,
    pub(super) skeleton_code: Option<Field>,
}

impl ScenarioBuilder {
    pub(super) fn new(id: String, name: String, line: usize) -> Self {
        ScenarioBuilder {
            s: Scenario {
                id,
                name,
                line,
                falsifies: Vec::new(),
                falsifies_raw: None,
                closes: Vec::new(),
                technique: None,
                workload: None,
                faults: None,
                oracle: None,
                observability: None,
                tiers: BudgetTiers::default(),
                target_test_file: None,
                skeleton_language: None,
                skeleton: None,
                seven_m: SevenM::Missing,
                arms: Vec::new(),
            },
            mode: Mode::Scenario,
            seven_m: None,
            not_applicable: None,
            skeleton_code: None,
        }
    }

    pub(super) fn finish(mut self) -> Scenario {
        let filled = self
            .seven_m
            .filter(|b| !block_is_empty(b) || self.not_applicable.is_none());
        self.s.seven_m = match (self.not_applicable, filled) {
            (_, Some(block)) => SevenM::Filled(block),
            (Some((text, line)), None) => SevenM::NotApplicable { text, line },
            (None, None) => SevenM::Missing,
        };
        if let Some(code) = self.skeleton_code {
            self.s.skeleton = Some(code);
        }
        self.s
    }

    pub(super) fn field(&mut self, item: &Item) {
        let (label, _) = item.label_value();
        let field = Field {
            text: item.full_value(),
            line: item.line,
        };
        match self.mode {
            Mode::SevenMS => self.arm(item),
            Mode::SevenM => self.seven_m_field(&label, field),
            Mode::Scenario => self.scenario_field(&label, field, item),
        }
    }

    pub(super) fn arm(&mut self, item: &Item) {
        let text = item.whole_text();
        if let Some(c) = ARM_RE.captures(&text) {
            let id = c.get(1).map(|m| m.as_str()).unwrap_or_default().to_string();
            let description = c.get(2).map(|m| m.as_str().trim()).unwrap_or_default();
            self.s.arms.push(Arm {
                id,
                description: description.to_string(),
                line: item.line,
            });
        }
    }

    fn seven_m_field(&mut self, label: &str, field: Field) {
        let block = self.seven_m.get_or_insert_with(SevenMBlock::default);
        if label.starts_with("model") {
            block.model_kind = model_kind(&field.text);
            block.model = Some(field);
        } else if label.contains("history") {
            block.history = Some(field);
        } else if label.starts_with("checker") {
            block.checker = Some(field);
        } else if label.starts_with("nemesis") || label.contains("landing") {
            block.nemesis = Some(field);
        } else if label.starts_with("ambiguous") {
            block.ambiguous_outcomes = Some(field);
        } else if label.starts_with("reduction") {
            block.reduction_plan = Some(field);
        }
    }

    fn scenario_field(&mut self, label: &str, field: Field, item: &Item) {
        let s = &mut self.s;
        let tier = |l: &str| -> Option<&'static str> {
            ["smoke", "hardening", "release"]
                .into_iter()
                .find(|t| l == *t || l == format!("{t} budget") || l == format!("{t} tier"))
        };
        if label.starts_with("falsifies") {
            s.falsifies = extract_ids(&field.text, 'C');
            s.falsifies_raw = Some(field);
        } else if label.starts_with("closes") {
            s.closes = extract_ids(&field.text, 'H');
        } else if label.starts_with("technique") {
            s.technique = Some(field);
        } else if label.starts_with("workload") {
            s.workload = Some(field);
        } else if label.starts_with("fault") {
            s.faults = Some(field);
        } else if label.starts_with("oracle") {
            s.oracle = Some(field);
        } else if label.starts_with("observability") {
            s.observability = Some(field);
        } else if label.starts_with("exit criteria") {
            s.tiers.exit_criteria = Some(field);
        } else if let Some(t) = tier(label) {
            set_tier(&mut s.tiers, t, field);
        } else if label.starts_with("budget") {
            for child in &item.children {
                let (cl, cv) = child.label_value();
                if let Some(t) = tier(&cl) {
                    let text = child.full_value();
                    let text = if text.is_empty() { cv } else { text };
                    set_tier(
                        &mut s.tiers,
                        t,
                        Field {
                            text,
                            line: child.line,
                        },
                    );
                }
            }
        } else if label.starts_with("target test file") {
            s.target_test_file = Some(field);
        } else if label.starts_with("skeleton language") {
            s.skeleton_language = Some(field);
        } else if label == "skeleton" {
            s.skeleton = Some(field);
        }
    }
}

fn block_is_empty(b: &SevenMBlock) -> bool {
    b.model.is_none()
        && b.history.is_none()
        && b.checker.is_none()
        && b.nemesis.is_none()
        && b.ambiguous_outcomes.is_none()
        && b.reduction_plan.is_none()
}

fn set_tier(tiers: &mut BudgetTiers, tier: &str, field: Field) {
    match tier {
        "smoke" => tiers.smoke = Some(field),
        "hardening" => tiers.hardening = Some(field),
        _ => tiers.release = Some(field),
    }
}
