//! The embedded templates and the minijinja environment that renders them, compiled
//! once per process (the session log is rendered again every second or so).

use minijinja::syntax::SyntaxConfig;
use std::sync::OnceLock;

use minijinja::value::{Serde, Value};
use minijinja::{AutoEscape, Environment, UndefinedBehavior};
use serde::Serialize;

use super::{RenderError, cells};

/// Every template, by the name other templates import it under.
const TEMPLATES: [(&str, &str); 4] = [
    ("macros.md.j2", include_str!("../../assets/macros.md.j2")),
    (
        "session-log.md.j2",
        include_str!("../../assets/session-log.md.j2"),
    ),
    ("finding.md.j2", include_str!("../../assets/finding.md.j2")),
    ("report.md.j2", include_str!("../../assets/report.md.j2")),
];

/// Renders template `name` with `view` as its context.
pub fn render<T: Serialize>(name: &'static str, view: &T) -> Result<String, RenderError> {
    let fail = |source| RenderError {
        template: name,
        source,
    };
    let template = environment()?.get_template(name).map_err(fail)?;
    template.render(Serde(view)).map_err(fail)
}

/// Renders template `name` with `context` straight to `out`, as it goes.
pub fn render_to(
    name: &'static str,
    context: Value,
    out: &mut dyn std::io::Write,
) -> Result<(), RenderError> {
    let fail = |source| RenderError {
        template: name,
        source,
    };
    let template = environment()?.get_template(name).map_err(fail)?;
    template.render_captured_to(context, out).map_err(fail)?;
    Ok(())
}

/// The environment, built at its first use. A failure to build it (a template that
/// does not compile) is returned each time and nothing is kept.
fn environment() -> Result<&'static Environment<'static>, RenderError> {
    static ENVIRONMENT: OnceLock<Environment<'static>> = OnceLock::new();
    if let Some(env) = ENVIRONMENT.get() {
        return Ok(env);
    }
    let env = build()?;
    Ok(ENVIRONMENT.get_or_init(|| env))
}

fn build() -> Result<Environment<'static>, RenderError> {
    let mut env = Environment::new();
    let syntax = SyntaxConfig::builder()
        .trim_blocks(true)
        .lstrip_blocks(true)
        .keep_trailing_newline(true)
        .build()
        .map_err(|source| RenderError {
            template: "syntax",
            source,
        })?;
    env.set_syntax(syntax);
    env.set_undefined_behavior(UndefinedBehavior::SemiStrict);
    env.set_auto_escape_callback(|_| AutoEscape::None);
    env.add_filter("cell", cells::cell);
    env.add_filter("oneline", cells::oneline);
    env.add_filter("cites", cells::cites);
    env.add_filter("summary", cells::summary);
    env.add_filter("beyond_counts", cells::beyond_counts);
    env.add_filter("quote", cells::quote);
    env.add_filter("finding_file", cells::finding_file);
    for (name, source) in TEMPLATES {
        env.add_template(name, source)
            .map_err(|source| RenderError {
                template: name,
                source,
            })?;
    }
    Ok(env)
}
