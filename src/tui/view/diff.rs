//! The staged diff author mode saved in this run (`artifacts/author/staged.diff`),
//! as a scrollable view over the body: hunk headers, added and removed lines styled
//! from the theme, every line sanitized like the other panes.

use std::io::Read;
use std::path::Path;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Clear, Paragraph};

use super::block;
use crate::tui::state::AppState;
use crate::tui::theme::Theme;
use crate::verdict::Verdict;

/// At most this much of the diff is read; the view says when it is cut.
const CAP: u64 = 1 << 20;

/// The first [`CAP`] bytes of `path` (as journaled: a replay's under the directory
/// replayed, never through a symlink, a regular file only), sanitized line by line.
fn head(state: &AppState, path: &Path) -> Vec<String> {
    let path = match state.place(path) {
        Ok(path) => path,
        Err(why) => return vec![format!("(not shown: {why})")],
    };
    let path = path.as_path();
    let read = || -> std::io::Result<(Vec<u8>, bool)> {
        let file = crate::tui::files::open_placed(state.rebase.as_ref(), path)?;
        let cut = file.metadata()?.len() > CAP;
        let mut bytes = Vec::new();
        file.take(CAP).read_to_end(&mut bytes)?;
        Ok((bytes, cut))
    };
    match read() {
        Ok((bytes, cut)) => {
            let mut lines: Vec<String> = crate::sanitize::decode(&bytes)
                .lines()
                .map(crate::sanitize::line)
                .collect();
            if cut {
                lines.push(format!(
                    "(cut at {} KiB; the whole diff is {})",
                    CAP / 1024,
                    path.display()
                ));
            }
            lines
        }
        Err(e) => vec![crate::sanitize::line(&format!(
            "(cannot read: {e}: {})",
            path.display()
        ))],
    }
}

/// The theme style of one diff line.
fn style(line: &str, theme: &Theme) -> Style {
    let plain = |verdict| theme.verdict(verdict).remove_modifier(Modifier::BOLD);
    if line.starts_with("diff --git") {
        theme.text.add_modifier(Modifier::BOLD)
    } else if line.starts_with("+++") || line.starts_with("---") || line.starts_with("index ") {
        theme.dim
    } else if line.starts_with("@@") {
        theme.warning
    } else if line.starts_with('+') {
        plain(Verdict::PassHardening)
    } else if line.starts_with('-') {
        plain(Verdict::FailReproducible)
    } else {
        theme.text
    }
}

/// Draws the staged diff over `area`, from line `ui.scroll`.
pub(super) fn staged(frame: &mut Frame, area: Rect, state: &AppState, theme: &Theme) {
    let Some(path) = &state.view.staged_diff else {
        return;
    };
    let lines = head(state, path);
    let last = u16::try_from(lines.len().saturating_sub(1)).unwrap_or(u16::MAX);
    let text: Vec<Line> = lines
        .into_iter()
        .map(|l| {
            let style = style(&l, theme);
            Line::styled(l, style)
        })
        .collect();
    let title = theme
        .symbols
        .hint("Staged by author mode, not committed · ↑↓ PgUp PgDn scroll · d / Esc close");
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(text)
            .scroll((state.ui.scroll.min(last), 0))
            .block(block(&title, theme)),
        area,
    );
}
