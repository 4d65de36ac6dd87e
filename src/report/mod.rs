//! Renders what a session produced (session log, findings, report, verdicts.json)
//! from the templates in `assets/`.
use crate::engine::outcome::{ScenarioOutcome, SessionOutcome};
use crate::journal::Record;
use crate::plan::Plan;
#[derive(Debug, thiserror::Error)]
#[error("x")]
pub struct RenderError;
pub fn session_log(_: &Plan, o: &SessionOutcome, r: &[Record]) -> Result<String, RenderError> {
    Ok(format!("{o:#?}\n{r:#?}"))
}
pub fn finding(_: &Plan, _: &SessionOutcome, s: &ScenarioOutcome) -> Result<String, RenderError> {
    Ok(format!("{s:#?}"))
}
pub fn report(_: &Plan, o: &SessionOutcome) -> Result<String, RenderError> {
    Ok(format!("{o:#?}"))
}
pub fn verdicts_json(o: &SessionOutcome) -> serde_json::Value {
    serde_json::to_value(o).unwrap_or_default()
}
pub fn write_report(
    p: &std::path::Path,
    t: &str,
    _: &mut dyn std::io::Write,
) -> std::io::Result<bool> {
    std::fs::write(p, t)?;
    Ok(true)
}
