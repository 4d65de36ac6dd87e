//! The embedded templates and the minijinja environment that renders them.

use minijinja::syntax::SyntaxConfig;
use minijinja::value::Serde;
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
    let env = environment()?;
    let template = env.get_template(name).map_err(fail)?;
    template.render(Serde(view)).map_err(fail)
}

fn environment() -> Result<Environment<'static>, RenderError> {
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
