//! Colours and symbols as data: themes are TOML files under `themes/`, compiled in.
//! `NO_COLOR` gives a monochrome theme; a non-UTF-8 locale gives ASCII symbols.

use std::collections::BTreeMap;
use std::str::FromStr;

use ratatui::style::{Color, Modifier, Style};
use ratatui::symbols::border;
use serde::Deserialize;

use crate::verdict::Verdict;

/// The themes compiled in: (name, file, text).
const THEMES: [(&str, &str, &str); 3] = [
    (
        "dark",
        "themes/dark.toml",
        include_str!("../../themes/dark.toml"),
    ),
    (
        "light",
        "themes/light.toml",
        include_str!("../../themes/light.toml"),
    ),
    (
        "high-contrast",
        "themes/high-contrast.toml",
        include_str!("../../themes/high-contrast.toml"),
    ),
];

/// Whether `name` is one of the compiled-in themes.
pub fn is_builtin(name: &str) -> bool {
    THEMES.iter().any(|(n, _, _)| *n == name)
}

/// A theme that could not be loaded: the file and the field at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {field}: {message}")]
pub struct ThemeError {
    pub file: String,
    pub field: String,
    pub message: String,
}

/// Borders and marks that depend on what the terminal can show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Symbols {
    pub border: border::Set<'static>,
    /// Between steps in the step bar.
    pub step_sep: &'static str,
    /// Marks the selected row.
    pub pointer: &'static str,
    /// Opens an arm under its scenario in a tree.
    pub branch: &'static str,
    /// Marks a problem or mismatch.
    pub warn: &'static str,
    /// The live chart: a bar cell (acknowledged, failed, unknown ops), a shaded (fault window) cell, a proven and a
    /// not-proven window on the timeline, and eight levels for the latency row.
    pub bar: &'static str,
    pub bar_fail: &'static str,
    pub bar_unknown: &'static str,
    pub shade: &'static str,
    pub window: &'static str,
    pub window_unproven: &'static str,
    pub levels: [&'static str; 8],
    /// The arrow keys and the separator between items in a hint line.
    pub arrows: &'static str,
    pub hint_sep: &'static str,
}

impl Symbols {
    /// Unicode symbols on a UTF-8 locale, plain ASCII otherwise.
    pub fn for_locale(locale_is_utf8: bool) -> Symbols {
        if locale_is_utf8 {
            Symbols {
                border: border::ROUNDED,
                step_sep: " › ",
                pointer: "▶ ",
                branch: "└ ",
                warn: "⚠ ",
                bar: "█",
                bar_fail: "▓",
                bar_unknown: "▒",
                shade: "░",
                window: "━",
                window_unproven: "╌",
                levels: ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"],
                arrows: "↑↓",
                hint_sep: " · ",
            }
        } else {
            Symbols {
                border: border::Set {
                    top_left: "+",
                    top_right: "+",
                    bottom_left: "+",
                    bottom_right: "+",
                    vertical_left: "|",
                    vertical_right: "|",
                    horizontal_top: "-",
                    horizontal_bottom: "-",
                },
                step_sep: " > ",
                pointer: "> ",
                branch: "`-",
                warn: "! ",
                bar: "#",
                bar_fail: "x",
                bar_unknown: "?",
                shade: ".",
                window: "=",
                window_unproven: "-",
                levels: ["_", ".", ",", ":", "-", "=", "+", "#"],
                arrows: "Up/Down",
                hint_sep: " | ",
            }
        }
    }
}

impl Symbols {
    /// A hint line written with `↑↓` and ` · ` in these symbols: as it is on a UTF-8
    /// locale, in ASCII otherwise (as the borders are).
    pub fn hint(&self, text: impl AsRef<str>) -> String {
        text.as_ref()
            .replace("↑↓", self.arrows)
            .replace(" · ", self.hint_sep)
    }
}

/// Whether the locale (the first set of `LC_ALL`, `LC_CTYPE`, `LANG`) is UTF-8.
pub fn locale_is_utf8(lc_all: Option<&str>, lc_ctype: Option<&str>, lang: Option<&str>) -> bool {
    [lc_all, lc_ctype, lang]
        .into_iter()
        .flatten()
        .find(|v| !v.is_empty())
        .is_some_and(|v| {
            let v = v.to_ascii_lowercase();
            v.contains("utf-8") || v.contains("utf8")
        })
}

/// Every style the screens use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Theme {
    pub name: String,
    pub text: Style,
    pub dim: Style,
    pub border: Style,
    /// The current step, the selected row, search matches.
    pub highlight: Style,
    /// A checklist row where the operator and the probe disagree.
    pub mismatch: Style,
    /// Lint problems and not-proven landings.
    pub warning: Style,
    /// One style per verdict, in [`Verdict::ALL`] order.
    verdicts: [Style; 10],
    pub symbols: Symbols,
}

#[derive(Deserialize)]
struct RawTheme {
    colors: BTreeMap<String, String>,
    verdicts: BTreeMap<String, String>,
}

impl Theme {
    /// The style of a verdict badge.
    pub fn verdict(&self, verdict: Verdict) -> Style {
        let index = Verdict::ALL.iter().position(|v| *v == verdict).unwrap_or(0);
        self.verdicts[index]
    }

    /// Parses a theme file's text; errors name `file` and the field.
    pub fn parse(name: &str, file: &str, text: &str) -> Result<Theme, ThemeError> {
        let err = |field: &str, message: String| ThemeError {
            file: file.to_string(),
            field: field.to_string(),
            message,
        };
        let raw: RawTheme =
            toml::from_str(text).map_err(|e| err("(syntax)", e.message().to_string()))?;
        let color = |table: &BTreeMap<String, String>, section: &str, key: &str| {
            let field = format!("{section}.{key}");
            let value = table
                .get(key)
                .ok_or_else(|| err(&field, "missing".to_string()))?;
            Color::from_str(value).map_err(|_| err(&field, format!("`{value}` is not a colour")))
        };
        let c = |key: &str| color(&raw.colors, "colors", key);
        let mut verdicts = [Style::default(); 10];
        for (slot, v) in verdicts.iter_mut().zip(Verdict::ALL) {
            *slot = Style::default()
                .fg(color(&raw.verdicts, "verdicts", v.as_str())?)
                .add_modifier(Modifier::BOLD);
        }
        Ok(Theme {
            name: name.to_string(),
            text: Style::default().fg(c("text")?),
            dim: Style::default().fg(c("dim")?),
            border: Style::default().fg(c("border")?),
            highlight: Style::default()
                .fg(c("highlight_fg")?)
                .bg(c("highlight_bg")?)
                .add_modifier(Modifier::BOLD),
            mismatch: Style::default()
                .fg(c("mismatch_fg")?)
                .bg(c("mismatch_bg")?)
                .add_modifier(Modifier::BOLD),
            warning: Style::default().fg(c("warning")?),
            verdicts,
            symbols: Symbols::for_locale(true),
        })
    }

    /// A compiled-in theme: `dark`, `light` or `high-contrast`.
    pub fn by_name(name: &str) -> Result<Theme, ThemeError> {
        let (name, file, text) =
            THEMES
                .iter()
                .find(|(n, _, _)| *n == name)
                .ok_or_else(|| ThemeError {
                    file: format!("themes/{name}.toml"),
                    field: "name".to_string(),
                    message: format!(
                        "no such theme (have: {})",
                        THEMES.map(|(n, _, _)| n).join(", ")
                    ),
                })?;
        Theme::parse(name, file, text)
    }

    /// The same theme with `f` applied to every style.
    pub fn map_styles(mut self, f: impl Fn(Style) -> Style) -> Theme {
        for s in [
            &mut self.text,
            &mut self.dim,
            &mut self.border,
            &mut self.highlight,
            &mut self.mismatch,
            &mut self.warning,
        ] {
            *s = f(*s);
        }
        for s in &mut self.verdicts {
            *s = f(*s);
        }
        self
    }

    /// No colour at all: bold and reverse video carry the meaning.
    pub fn monochrome() -> Theme {
        let plain = Style::default();
        let bold = plain.add_modifier(Modifier::BOLD);
        let mut verdicts = [bold; 10];
        for (slot, v) in verdicts.iter_mut().zip(Verdict::ALL) {
            if v.is_fail() {
                *slot = bold.add_modifier(Modifier::REVERSED);
            } else if !v.is_pass() {
                *slot = bold.add_modifier(Modifier::UNDERLINED);
            }
        }
        Theme {
            name: "monochrome".to_string(),
            text: plain,
            dim: plain.add_modifier(Modifier::DIM),
            border: plain,
            highlight: plain.add_modifier(Modifier::REVERSED),
            mismatch: bold.add_modifier(Modifier::REVERSED),
            warning: bold,
            verdicts,
            symbols: Symbols::for_locale(true),
        }
    }

    /// The theme for this terminal: `name`, or monochrome when `no_color`
    /// (`NO_COLOR` set and non-empty); ASCII symbols unless the locale is UTF-8.
    pub fn select(name: &str, no_color: bool, locale_is_utf8: bool) -> Result<Theme, ThemeError> {
        let mut theme = if no_color {
            Theme::monochrome()
        } else {
            Theme::by_name(name)?
        };
        theme.symbols = Symbols::for_locale(locale_is_utf8);
        Ok(theme)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_theme_parses_and_colours_all_ten_verdicts() {
        for (name, _, _) in THEMES {
            let theme = Theme::by_name(name).unwrap_or_else(|e| panic!("{e}"));
            for v in Verdict::ALL {
                assert!(theme.verdict(v).fg.is_some(), "{name}: {v}");
            }
        }
    }

    #[test]
    fn errors_name_the_file_and_the_field() {
        let text = include_str!("../../themes/dark.toml").replace("\"NOT-RUN\" = \"gray\"", "");
        let err = Theme::parse("x", "themes/x.toml", &text).err();
        assert_eq!(
            err.map(|e| e.to_string()),
            Some("themes/x.toml: verdicts.NOT-RUN: missing".into())
        );
        let bad = include_str!("../../themes/dark.toml")
            .replace("text = \"white\"", "text = \"chartreuse-ish\"");
        let err = Theme::parse("x", "themes/x.toml", &bad)
            .err()
            .map(|e| e.field);
        assert_eq!(err.as_deref(), Some("colors.text"));
        assert_eq!(
            Theme::by_name("neon").err().map(|e| e.field).as_deref(),
            Some("name")
        );
    }

    #[test]
    fn no_color_and_ascii() {
        let t = Theme::select("dark", true, false).unwrap_or_else(|e| panic!("{e}"));
        assert!(Verdict::ALL.iter().all(|v| t.verdict(*v).fg.is_none()));
        assert!(t.symbols.step_sep.is_ascii() && t.symbols.border.top_left.is_ascii());
        assert!(locale_is_utf8(None, None, Some("C.UTF-8")));
        assert!(!locale_is_utf8(Some("C"), None, Some("en_US.UTF-8")));
    }

    /// The hint line under a question follows the borders: ASCII without UTF-8.
    #[test]
    fn a_hint_line_follows_the_locale() {
        let hint = "↑↓ pick · Enter send · or type · ? help";
        let ascii = Symbols::for_locale(false).hint(hint);
        assert_eq!(ascii, "Up/Down pick | Enter send | or type | ? help");
        assert!(ascii.is_ascii(), "{ascii}");
        assert_eq!(Symbols::for_locale(true).hint(hint), hint);
    }
}
