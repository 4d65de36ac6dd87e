//! `faultline new`: a minimal plan and run spec for a named system, complete enough
//! that lint accepts it, with every value only the user knows marked `FILL IN`.

use std::io::Write;
use std::path::{Path, PathBuf};

use minijinja::syntax::SyntaxConfig;
use minijinja::{AutoEscape, Environment, UndefinedBehavior, context};

const PLAN: &str = include_str!("../../assets/new/plan.md.j2");
const RUN_SPEC: &str = include_str!("../../assets/new/plan.run.yaml.j2");

/// What `new` wrote.
pub struct Written {
    pub plan: PathBuf,
    pub run_spec: PathBuf,
}

/// A system name becomes a file name and the plan's slug: ASCII letters, digits, `.`,
/// `_` and `-`, starting with a letter or digit, at most 64 bytes.
pub fn check_name(system: &str) -> Result<(), String> {
    let ok = !system.is_empty()
        && system.len() <= 64
        && system.starts_with(|c: char| c.is_ascii_alphanumeric())
        && system
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "system name `{}`: allowed are 1 to 64 ASCII letters, digits, `.`, `_` and `-`, \
             starting with a letter or digit (it names the plan's files and its session directories)",
            crate::sanitize::line(system)
        ))
    }
}

/// Writes `<dir>/<system>.md` and `<dir>/<system>.run.yaml` (`dir` made if missing).
/// Neither file may exist already: nothing is overwritten, and a symlink planted at
/// either name is refused like a file (`create_new` does not follow it).
pub fn write(system: &str, dir: &Path, date: &str) -> Result<Written, String> {
    check_name(system)?;
    std::fs::create_dir_all(dir).map_err(|e| {
        let what = match dir.symlink_metadata() {
            Ok(m) if m.file_type().is_symlink() => "a symlink to no directory",
            Ok(m) if !m.is_dir() => "exists and is not a directory",
            _ => "cannot be made",
        };
        format!("--dir {}: {what} ({e})", dir.display())
    })?;
    let plan = dir.join(format!("{system}.md"));
    let run_spec = dir.join(format!("{system}.run.yaml"));
    for path in [&plan, &run_spec] {
        if path.symlink_metadata().is_ok() {
            return Err(format!(
                "{} exists; nothing was written (remove it, or choose another name or --dir)",
                path.display()
            ));
        }
    }
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    let syntax = SyntaxConfig::builder()
        .keep_trailing_newline(true)
        .build()
        .map_err(|e| format!("the built-in template: {e}"))?;
    env.set_syntax(syntax);
    env.set_auto_escape_callback(|_| AutoEscape::None);
    let values = context! {
        system,
        date,
        path => plan.display().to_string(),
        plan => format!("{system}.md"),
        runspec => format!("{system}.run.yaml"),
    };
    let render = |text: &str| {
        env.render_str(text, &values)
            .map_err(|e| format!("the built-in template: {e}"))
    };
    let (plan_text, spec_text) = (render(PLAN)?, render(RUN_SPEC)?);
    create(&plan, &plan_text)?;
    if let Err(e) = create(&run_spec, &spec_text) {
        // Both or neither: a plan without its run spec would lint as unbound.
        let _ = std::fs::remove_file(&plan);
        return Err(e);
    }
    Ok(Written { plan, run_spec })
}

fn create(path: &Path, text: &str) -> Result<(), String> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| format!("{}: {e}; nothing was written", path.display()))?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_cannot_be_file_names_are_refused() {
        for bad in ["", "../x", "a/b", "-x", ".hidden", "a b", "\u{1b}[2J"] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        for good in ["etcd", "nats-js", "my_db.v2", "3node"] {
            assert!(check_name(good).is_ok(), "{good}");
        }
    }

    #[test]
    fn an_existing_file_is_never_overwritten() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("kv.run.yaml"), "mine").expect("write");
        let err = write("kv", dir.path(), "2026-12-04")
            .err()
            .expect("refused");
        assert!(err.contains("exists"), "{err}");
        assert!(!dir.path().join("kv.md").exists());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("kv.run.yaml")).expect("read"),
            "mine"
        );
    }
}
