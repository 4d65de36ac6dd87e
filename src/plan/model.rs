//! The parsed shape of a markdown test plan (method §1).
//!
//! Every item keeps the 1-based line it came from so lint and the engine can point the
//! operator at the exact place in the file.

use serde::Serialize;

/// A whole plan file.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Plan {
    /// Path (or `<embedded>/…` name) the plan was read from.
    pub source: String,
    /// `# Test Plan: <slug>` title, if present.
    pub title: Option<String>,
    /// Slug used for the session directory: the title, else the file stem.
    pub slug: String,
    pub header: Header,
    pub claims: Vec<Claim>,
    pub missing_claims: Vec<Claim>,
    pub hypotheses: Vec<Hypothesis>,
    pub requirements: Vec<Requirement>,
    pub scenarios: Vec<Scenario>,
    /// §7b coverage adequacy rows.
    pub adequacy: Vec<AdequacyRow>,
    /// §7c residual uncertainty rows, each cell as written.
    pub residual: Vec<Vec<String>>,
    /// §7d confidence statement paragraph(s).
    pub confidence: Option<String>,
    /// Run-spec fenced blocks found in the plan (info string `faultline`), by scenario id.
    pub embedded_run_specs: Vec<EmbeddedRunSpec>,
    /// The line of a code fence that is never closed: markdown reads everything after
    /// it as code, so whatever scenarios follow are not seen.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unclosed_fence: Option<usize>,
    /// Rows written as a table that markdown reads as a paragraph (no `|---|` row
    /// under the header): none of their cells reach the plan.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub broken_tables: Vec<BrokenTable>,
}

/// Lines that look like a table but are not one: its header lacks the delimiter row
/// (`|---|---|`, one cell per column) markdown needs to read a table.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct BrokenTable {
    /// 1-based line of its first row.
    pub line: usize,
    /// The section key it sits in (`1b`, `6b`; empty before the first numbered one).
    pub section: String,
    /// How many of its lines are rows.
    pub rows: usize,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Header {
    pub date: Option<String>,
    pub plan_mode: Option<String>,
    pub sut: Option<String>,
    pub change_under_test: Option<String>,
    pub plan_author: Option<String>,
    pub status: Option<String>,
}

/// Normalised claim category (method §1b, policy §8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    Safety,
    Liveness,
    Durability,
    PerformanceSlo,
    Operational,
    Idempotency,
    Isolation,
    Ordering,
    Membership,
    Boundary,
    Fairness,
}

impl Category {
    /// Categories whose falsifying scenarios must carry a filled §7.M block.
    pub fn is_gated(self) -> bool {
        matches!(
            self,
            Category::Safety
                | Category::Durability
                | Category::Idempotency
                | Category::Isolation
                | Category::Ordering
                | Category::Membership
        )
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Claim {
    pub id: String,
    pub text: String,
    /// The category cell exactly as written.
    pub category_raw: String,
    /// Every category recognised in the cell ("safety / liveness" gives both).
    pub categories: Vec<Category>,
    /// Words of the cell that named no known category (kept and reported).
    pub unknown_categories: Vec<String>,
    pub source: String,
    pub inferred: String,
    pub line: usize,
}

impl Claim {
    pub fn is_gated(&self) -> bool {
        self.categories.iter().any(|c| c.is_gated())
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Hypothesis {
    pub id: String,
    pub title: String,
    pub statement: String,
    pub could_falsify: Vec<String>,
    pub suspected_because: Option<String>,
    pub subsystem: Option<String>,
    pub line: usize,
}

/// A §6b environment requirement row.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Requirement {
    pub requirement: String,
    pub version_floor: String,
    pub used_by: String,
    pub install_hint: String,
    pub brought_up_by_sut: bool,
    pub line: usize,
}

/// A field value with the line it was written on.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Field {
    pub text: String,
    pub line: usize,
}

/// The budget-tier fields of a scenario (newer template) or its "Exit criteria" (older).
#[derive(Debug, Clone, Default, Serialize)]
pub struct BudgetTiers {
    pub smoke: Option<Field>,
    pub hardening: Option<Field>,
    pub release: Option<Field>,
    pub exit_criteria: Option<Field>,
}

/// State of a scenario's §7.M block.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum SevenM {
    Filled(SevenMBlock),
    NotApplicable { text: String, line: usize },
    Missing,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct SevenMBlock {
    pub line: usize,
    pub model: Option<Field>,
    /// The model name normalised (register, map, queue, … or `other(name)`).
    pub model_kind: Option<String>,
    pub history: Option<Field>,
    pub checker: Option<Field>,
    pub nemesis: Option<Field>,
    pub ambiguous_outcomes: Option<Field>,
    pub reduction_plan: Option<Field>,
}

/// A §7.M.S surface arm, e.g. `S5/api`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Arm {
    /// Full id including the scenario, e.g. `S5/api`.
    pub id: String,
    pub description: String,
    pub line: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Scenario {
    /// Normalised id, e.g. `S1`, `S01`, `D3` — as written after "Scenario".
    pub id: String,
    pub name: String,
    pub line: usize,
    pub falsifies: Vec<String>,
    pub falsifies_raw: Option<Field>,
    pub closes: Vec<String>,
    pub technique: Option<Field>,
    pub workload: Option<Field>,
    pub faults: Option<Field>,
    pub oracle: Option<Field>,
    pub observability: Option<Field>,
    pub tiers: BudgetTiers,
    pub target_test_file: Option<Field>,
    pub skeleton_language: Option<Field>,
    pub skeleton: Option<Field>,
    pub seven_m: SevenM,
    pub arms: Vec<Arm>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct AdequacyRow {
    pub claim: String,
    pub threat_model: String,
    pub scenarios: String,
    pub why_sufficient: String,
    pub line: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct EmbeddedRunSpec {
    pub scenario_id: String,
    /// Line of the first YAML line inside the fence.
    pub line: usize,
    pub yaml: String,
}
