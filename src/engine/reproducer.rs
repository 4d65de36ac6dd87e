//! The reduced reproducer of a FAIL as something `faultline run` replays: the plan as
//! it was read, and a run spec binding only that scenario (or arm), with the reduced
//! fault schedule (its halved timings applied) and enough seeds to reach the failing
//! one.

use std::path::Path;

use serde_json::json;

use super::request::Request;
use crate::runspec::Binding;
use crate::session::outcome::Reduction;

/// Writes `<session>/artifacts/<id>/reduced/{plan.md,plan.run.yaml}` and returns the
/// command that replays it.
pub fn write(
    req: &Request,
    session: &Path,
    id: &str,
    binding: &Binding,
    reduction: &Reduction,
) -> std::io::Result<String> {
    let stem = crate::session::dir::file_stem_for_id(id);
    let dir = session.join("artifacts").join(stem).join("reduced");
    std::fs::create_dir_all(&dir)?;
    let plan = dir.join("plan.md");
    crate::atomic::write(&plan, req.plan_text.as_bytes())?;
    let mut reduced = binding.clone();
    reduced
        .faults
        .retain(|f| reduction.faults.contains(&f.value.id));
    for step in &mut reduced.faults {
        for cut in &reduction.timing {
            cut.apply(&mut step.value);
        }
    }
    let seeds = u32::try_from(reduction.seed).unwrap_or(u32::MAX);
    for budget in reduced.tiers.values_mut() {
        if let Some(cut) = reduction.workload {
            budget.duration =
                crate::runspec::duration::Dur(std::time::Duration::from_millis(cut.to_ms));
        }
        budget.seeds = budget.seeds.max(seeds);
        budget.faults = budget
            .faults
            .min(u32::try_from(reduction.to).unwrap_or(u32::MAX));
    }
    let requires: Vec<&crate::runspec::Requirement> =
        req.spec.requires.iter().map(|(r, _)| r).collect();
    // JSON is YAML: the run-spec loader reads it as any other sidecar.
    let spec = json!({
        "version": 1,
        "vars": req.spec.vars,
        "requires": requires,
        "scenarios": { id: reduced },
    });
    let text = serde_json::to_string_pretty(&spec).map_err(std::io::Error::other)?;
    crate::atomic::write(&dir.join("plan.run.yaml"), text.as_bytes())?;
    Ok(format!(
        "faultline run {} --only {id} --tier {} --sut {}",
        plan.display(),
        req.tier,
        req.sut_dir.display()
    ))
}
