//! The plan picker `faultline run` opens when no PLAN is named: the plans the SUT
//! holds (see [`crate::plan::discover`]), one to pick with the arrows and Enter.

use std::path::{Path, PathBuf};

use crossterm::event::{Event, KeyCode, KeyEventKind};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::keymap::{Action, Keymap};
use super::theme::Theme;
use crate::plan::discover::Found;

/// The picker's whole state: the plans and which one is selected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picker {
    pub sut: PathBuf,
    pub found: Vec<Found>,
    pub selected: usize,
}

/// What a key did to the picker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Picked {
    Plan(PathBuf),
    Cancelled,
    Pending,
}

impl Picker {
    /// Applies one key: arrows / vim keys move, Enter picks, `q` / Esc cancel.
    pub fn key(&mut self, code: KeyCode, action: Option<Action>) -> Picked {
        let last = self.found.len().saturating_sub(1);
        match (code, action) {
            (KeyCode::Enter, _) => self
                .found
                .get(self.selected)
                .map_or(Picked::Pending, |f| Picked::Plan(f.path.clone())),
            (_, Some(Action::Quit | Action::Close)) => Picked::Cancelled,
            (_, Some(Action::Up)) => {
                self.selected = self.selected.saturating_sub(1);
                Picked::Pending
            }
            (_, Some(Action::Down)) => {
                self.selected = (self.selected + 1).min(last);
                Picked::Pending
            }
            (_, Some(Action::Top)) => {
                self.selected = 0;
                Picked::Pending
            }
            (_, Some(Action::Bottom)) => {
                self.selected = last;
                Picked::Pending
            }
            _ => Picked::Pending,
        }
    }
}

/// Draws the picker (pure: the state and theme in, a frame out).
pub fn draw(frame: &mut Frame, picker: &Picker, theme: &Theme) {
    let [head, body, foot] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    frame.render_widget(
        Paragraph::new(Line::styled(
            format!(" Pick a plan in {}", picker.sut.display()),
            theme.highlight,
        )),
        head,
    );
    let mut lines: Vec<Line> = picker
        .found
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let on = i == picker.selected;
            let rel = f.path.strip_prefix(&picker.sut).unwrap_or(&f.path);
            Line::from(vec![
                Span::styled(
                    format!(
                        "{}{} ",
                        if on { theme.symbols.pointer } else { "  " },
                        rel.display()
                    ),
                    if on { theme.highlight } else { theme.text },
                ),
                Span::styled(crate::sanitize::line(&f.title), theme.dim),
            ])
        })
        .collect();
    if lines.is_empty() {
        lines.push(Line::styled(
            "no plan here: none under docs/testing-plans/ and no markdown file titled \
             \"Test Plan:\"",
            theme.warning,
        ));
    }
    let visible = usize::from(body.height.saturating_sub(2)).max(1);
    let first = picker.selected.saturating_sub(visible - 1);
    frame.render_widget(
        Paragraph::new(lines)
            .scroll((u16::try_from(first).unwrap_or(u16::MAX), 0))
            .block(super::view::block("Plans", theme)),
        body,
    );
    frame.render_widget(
        Paragraph::new(Line::styled(
            theme.symbols.hint(" ↑↓ select  Enter run it  q cancel"),
            theme.dim,
        )),
        foot,
    );
}

/// Runs the picker in the terminal until a plan is picked (`Some`) or the operator
/// cancels (`None`). The terminal is restored before returning.
pub fn pick(sut: &Path, found: Vec<Found>, theme: &Theme, keymap: &Keymap) -> Option<PathBuf> {
    let mut picker = Picker {
        sut: sut.to_path_buf(),
        found,
        selected: 0,
    };
    let mut terminal = ratatui::init();
    let picked = loop {
        let _ = terminal.draw(|frame| draw(frame, &picker, theme));
        let Ok(event) = crossterm::event::read() else {
            break None;
        };
        let Event::Key(key) = event else { continue };
        if key.kind != KeyEventKind::Press {
            continue;
        }
        match picker.key(key.code, keymap.action_for(&key)) {
            Picked::Plan(path) => break Some(path),
            Picked::Cancelled => break None,
            Picked::Pending => {}
        }
    };
    ratatui::restore();
    picked
}
