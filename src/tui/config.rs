//! The operator's config file: theme, mouse and key bindings. Found at `--config`,
//! else `$FAULTLINE_CONFIG`, else `$XDG_CONFIG_HOME/faultline/config.toml` (or
//! `~/.config/faultline/config.toml`); absent means the compiled-in defaults.
//!
//! ```toml
//! theme = "light"
//! mouse = true
//! [keys]
//! quit = ["q", "ctrl-q"]
//! evidence = ["e", "enter"]
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::keymap::{Action, Chord, Keymap};

/// What the config file decides; `theme` is `None` when the file leaves it alone.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Config {
    pub theme: Option<String>,
    pub mouse: bool,
    pub keymap: Keymap,
}

/// A config file that cannot be used, with the file, line and field at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {field}: {message}")]
pub struct ConfigError {
    pub file: String,
    pub line: usize,
    pub field: String,
    pub message: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    theme: Option<String>,
    mouse: Option<bool>,
    #[serde(default)]
    keys: BTreeMap<Spanned<String>, Spanned<Vec<Spanned<String>>>>,
}

/// Where the config file is looked for, in order; the first that exists is read.
pub fn locate(flag: Option<&Path>) -> Option<PathBuf> {
    if let Some(path) = flag {
        return Some(path.to_path_buf());
    }
    if let Some(path) = std::env::var_os("FAULTLINE_CONFIG").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    let path = base.join("faultline").join("config.toml");
    path.exists().then_some(path)
}

/// Reads and checks the config at `path`.
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
        file: file.clone(),
        line: 0,
        field: "-".into(),
        message: format!("cannot read: {e}"),
    })?;
    parse(&file, &text)
}

/// 1-based line of byte offset `at` in `text`.
fn line_of(text: &str, at: usize) -> usize {
    text.get(..at).map_or(1, |t| t.matches('\n').count() + 1)
}

/// Parses config text; `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<Config, ConfigError> {
    let error = |at: usize, field: &str, message: String| ConfigError {
        file: file.to_string(),
        line: line_of(text, at),
        field: field.to_string(),
        message,
    };
    let raw: Raw = toml::from_str(text).map_err(|e| {
        let at = e.span().map_or(0, |s| s.start);
        // toml names the offending key in its message; keep only its first line.
        let message = e.message().lines().next().unwrap_or_default().to_string();
        error(at, "-", message)
    })?;
    if let Some(theme) = &raw.theme
        && !super::theme::is_builtin(theme)
    {
        let at = text.find("theme").unwrap_or(0);
        return Err(error(
            at,
            "theme",
            format!("unknown theme `{theme}` (dark, light, high-contrast)"),
        ));
    }
    let mut keymap = Keymap::default();
    for (name, keys) in &raw.keys {
        let field = format!("keys.{}", name.get_ref());
        let Some(action) = Action::from_name(name.get_ref()) else {
            let known: Vec<&str> = Action::ALL.iter().map(|a| a.name()).collect();
            return Err(error(
                name.span().start,
                &field,
                format!("unknown action (one of: {})", known.join(", ")),
            ));
        };
        if keys.get_ref().is_empty() {
            return Err(error(
                keys.span().start,
                &field,
                "needs at least one key".into(),
            ));
        }
        let mut chords = Vec::new();
        for key in keys.get_ref() {
            let chord = Chord::parse(key.get_ref()).ok_or_else(|| {
                error(
                    key.span().start,
                    &field,
                    format!(
                        "unknown key `{}` (a character, f1…f12, up, down, left, right, pgup, \
                         pgdn, home, end, tab, backtab, esc, enter, space, with ctrl- / alt- / shift-)",
                        key.get_ref()
                    ),
                )
            })?;
            chords.push(chord);
        }
        keymap.rebind(action, chords);
    }
    Ok(Config {
        theme: raw.theme,
        mouse: raw.mouse.unwrap_or(false),
        keymap,
    })
}
