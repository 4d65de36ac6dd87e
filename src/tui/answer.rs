//! Typing an answer to the pending question in its editor (ratatui-textarea). Pure
//! over [`AppState`], so the keys' effects are unit-tested without a terminal.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui_textarea::{CursorMove, TextArea};

use super::state::AppState;
use super::view::choices;
use crate::session::operator::QuestionKind;

/// Feeds `key` to the answer editor; `Some(text)` when the key sends the answer
/// (Enter for one-line answers, Ctrl-S or Alt-Enter for prose).
pub fn key(state: &mut AppState, key: KeyEvent) -> Option<String> {
    let question = state.pending.clone()?;
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    let prose = question.kind == QuestionKind::Describe;
    match key.code {
        KeyCode::Enter if !prose || alt || ctrl => return Some(state.typed()),
        KeyCode::Char('s') if ctrl => return Some(state.typed()),
        KeyCode::Esc => state.editor = TextArea::default(),
        KeyCode::Tab | KeyCode::BackTab if !prose => {
            let options = choices(&question);
            if !options.is_empty() {
                let now = state.typed();
                let at = options.iter().position(|c| *c == now);
                let next = match (at, key.code) {
                    (Some(i), KeyCode::BackTab) => (i + options.len() - 1) % options.len(),
                    (Some(i), _) => (i + 1) % options.len(),
                    (None, _) => 0,
                };
                put(state, &options[next]);
            }
        }
        KeyCode::Char('e') if ctrl => {
            if let Some(text) = &question.editable {
                put(state, &format!("edit: {text}"));
            }
        }
        // Prose: Enter starts a new line.
        KeyCode::Enter => {
            state.editor.insert_newline();
        }
        _ => {
            state.editor.input(key);
        }
    }
    None
}

/// Replaces the editor's text with `text`, cursor at its end.
fn put(state: &mut AppState, text: &str) {
    let mut editor = TextArea::new(vec![text.to_string()]);
    editor.move_cursor(CursorMove::End);
    state.editor = editor;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::operator::Question;

    fn state(kind: QuestionKind, editable: Option<&str>) -> AppState {
        let plan = crate::plan::parse_plan(
            "examples/demo/plan.md",
            include_str!("../../examples/demo/plan.md"),
        );
        let mut s = AppState::new(plan);
        let choices = match kind {
            QuestionKind::ApproveChange => crate::session::operator::approve_decline("it"),
            _ => Vec::new(),
        };
        s.ask(Question {
            id: "install.binary:x".into(),
            kind,
            prompt: "p".into(),
            choices,
            default: "decline".into(),
            editable: editable.map(str::to_string),
            ..Question::default()
        });
        s
    }

    fn press(s: &mut AppState, code: KeyCode, m: KeyModifiers) -> Option<String> {
        key(s, KeyEvent::new(code, m))
    }

    #[test]
    fn tab_cycles_the_choices_and_ctrl_e_offers_the_command_for_editing() {
        let mut s = state(QuestionKind::ApproveChange, Some("apt-get install -y x"));
        press(&mut s, KeyCode::Tab, KeyModifiers::NONE);
        assert_eq!(s.typed(), "approve");
        press(&mut s, KeyCode::Tab, KeyModifiers::NONE);
        assert_eq!(s.typed(), "decline");
        press(&mut s, KeyCode::Char('e'), KeyModifiers::CONTROL);
        assert_eq!(s.typed(), "edit: apt-get install -y x");
        for _ in 0.." x".len() {
            press(&mut s, KeyCode::Backspace, KeyModifiers::NONE);
        }
        for c in " y".chars() {
            press(&mut s, KeyCode::Char(c), KeyModifiers::NONE);
        }
        let sent = press(&mut s, KeyCode::Enter, KeyModifiers::NONE);
        assert_eq!(sent.as_deref(), Some("edit: apt-get install -y y"));
    }

    #[test]
    fn prose_takes_several_lines_and_ctrl_s_sends_them() {
        let mut s = state(QuestionKind::Describe, None);
        for c in "one".chars() {
            press(&mut s, KeyCode::Char(c), KeyModifiers::NONE);
        }
        assert_eq!(press(&mut s, KeyCode::Enter, KeyModifiers::NONE), None);
        for c in "two".chars() {
            press(&mut s, KeyCode::Char(c), KeyModifiers::NONE);
        }
        let sent = press(&mut s, KeyCode::Char('s'), KeyModifiers::CONTROL);
        assert_eq!(sent.as_deref(), Some("one\ntwo"));
    }

    #[test]
    fn esc_clears_what_was_typed() {
        let mut s = state(QuestionKind::ConfirmCapability, None);
        press(&mut s, KeyCode::Char('x'), KeyModifiers::NONE);
        press(&mut s, KeyCode::Esc, KeyModifiers::NONE);
        assert_eq!(s.typed(), "");
    }
}
