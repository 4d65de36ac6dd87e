//! Renders what a session produced (session log, findings, report, verdicts.json)
//! from the templates in `assets/`.
