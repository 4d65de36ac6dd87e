//! Answering the pending question: a choice list (↑↓ and Enter, the default
//! preselected), an editor for the text a question takes (ratatui-textarea), and the
//! global keys that stay reachable meanwhile. Pure over [`AppState`], so the keys'
//! effects are unit-tested without a terminal.
//!
//! The rule for global keys while a question is open: F1 (help), F2 (evidence), F3
//! (reasons) and Ctrl-C always work; `?` opens help while nothing is typed; in a
//! question that takes no free text, every other bound key works too while nothing is
//! typed, unless one of the choices starts with that letter (then it starts typing
//! the choice's name).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui_textarea::{CursorMove, TextArea};

use super::keymap::Action;
use super::state::AppState;
use super::view::choices;
use crate::session::operator::{FreeText, Question, QuestionKind};

/// What a key did to the pending question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Typed {
    /// Nothing more to do: it typed, moved the list, or the answer was refused (the
    /// question shows why and stays open).
    Nothing,
    /// This answer, checked against the question, goes out.
    Send(String),
    /// A global key, for the caller to apply (help, evidence, quit…).
    Global(Action),
}

/// The question takes several lines of prose (Enter starts a new line).
pub fn prose(q: &Question) -> bool {
    q.kind == QuestionKind::Describe || q.free_text == FreeText::Lines
}

/// The question takes free text, so every printable key types.
fn takes_text(q: &Question) -> bool {
    prose(q) || q.free_text == FreeText::Line
}

/// Some choice's name or alias starts with `c`: the key types it.
fn starts_a_choice(q: &Question, c: char) -> bool {
    let c = c.to_lowercase().to_string();
    q.choices.iter().any(|choice| {
        std::iter::once(&choice.value)
            .chain(&choice.aliases)
            .any(|n| n.to_lowercase().starts_with(&c))
    })
}

/// Feeds `key` to the pending question (see the module's rule for global keys).
pub fn key(state: &mut AppState, key: KeyEvent) -> Typed {
    let Some(question) = state.pending.clone() else {
        return Typed::Nothing;
    };
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    match key.code {
        KeyCode::F(1) => return Typed::Global(Action::Help),
        KeyCode::F(2) => return Typed::Global(Action::Evidence),
        KeyCode::F(3) => return Typed::Global(Action::ShowReasons),
        _ => {}
    }
    // Help or evidence opened over the question takes the keys until closed.
    if state.ui.help || state.ui.evidence {
        return match state.keymap.action_for(&key) {
            Some(action) => Typed::Global(action),
            None => Typed::Nothing,
        };
    }
    let empty = state.typed().is_empty();
    let listed = !question.choices.is_empty() && !prose(&question);
    match key.code {
        KeyCode::Up if listed => pick(state, &question, -1),
        KeyCode::Down if listed => pick(state, &question, 1),
        KeyCode::Enter if !prose(&question) || alt || ctrl => return send(state, &question),
        KeyCode::Char('s') if ctrl => return send(state, &question),
        KeyCode::Esc => {
            state.editor = TextArea::default();
            state.ui.choice = question
                .choices
                .iter()
                .position(|c| c.value == question.default);
        }
        KeyCode::Tab | KeyCode::BackTab if !prose(&question) => {
            let options = choices(&question);
            if !options.is_empty() {
                let now = state.typed();
                let at = options.iter().position(|c| *c == now);
                let next = match (at, key.code) {
                    (Some(i), KeyCode::BackTab) => (i + options.len() - 1) % options.len(),
                    (Some(i), _) => (i + 1) % options.len(),
                    (None, _) => 0,
                };
                state.ui.choice = Some(next);
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
        KeyCode::Char('?') if empty => return Typed::Global(Action::Help),
        KeyCode::Char(c)
            if empty
                && !ctrl
                && !alt
                && !takes_text(&question)
                && !starts_a_choice(&question, c) =>
        {
            match state.keymap.action_for(&key) {
                Some(Action::Up) => pick(state, &question, -1),
                Some(Action::Down) => pick(state, &question, 1),
                Some(Action::Top) if listed => state.ui.choice = Some(0),
                Some(Action::Bottom) if listed => {
                    state.ui.choice = Some(question.choices.len() - 1);
                }
                Some(action) => return Typed::Global(action),
                None => type_key(state, &question, key),
            }
        }
        _ => type_key(state, &question, key),
    }
    Typed::Nothing
}

/// Types `key` into the editor; the list highlights the first choice the text begins.
fn type_key(state: &mut AppState, q: &Question, key: KeyEvent) {
    state.editor.input(key);
    let typed = state.typed().trim().to_lowercase();
    if typed.is_empty() {
        return;
    }
    if let Some(i) = q.choices.iter().position(|c| {
        std::iter::once(&c.value)
            .chain(&c.aliases)
            .any(|n| n.to_lowercase().starts_with(&typed))
    }) {
        state.ui.choice = Some(i);
    }
}

/// Moves the list's highlight by `by` rows (wrapping); what was typed is dropped so
/// Enter sends the highlighted choice.
fn pick(state: &mut AppState, q: &Question, by: isize) {
    let n = q.choices.len();
    if n == 0 {
        return;
    }
    state.ui.choice = Some(match (state.ui.choice, by < 0) {
        (None, true) => n - 1,
        (None, false) => 0,
        (Some(at), true) => (at.min(n - 1) + n - 1) % n,
        (Some(at), false) => (at + 1) % n,
    });
    state.editor = TextArea::default();
}

/// What was typed, or the highlighted choice when nothing was, checked against the
/// question: sent when it is an answer, else refused with why (the question stays).
/// A highlighted choice that needs text (`edit: <command>`) goes into the editor to
/// be completed first.
fn send(state: &mut AppState, q: &Question) -> Typed {
    let mut text = state.typed();
    if text.trim().is_empty()
        && let Some(at) = state.ui.choice
        && let Some(choice) = q.choices.get(at)
    {
        if choice.with_text.is_some() {
            let offered = choices(q)
                .get(at)
                .cloned()
                .filter(|o| *o != choice.label())
                .unwrap_or_else(|| format!("{} ", choice.value));
            put(state, &offered);
            return Typed::Nothing;
        }
        text.clone_from(&choice.value);
    }
    match q.check(&text) {
        Ok(answer) => {
            if let Some(p) = state.pending.as_mut() {
                p.error = None;
            }
            Typed::Send(answer)
        }
        Err(why) => {
            if let Some(p) = state.pending.as_mut() {
                p.error = Some(why);
            }
            Typed::Nothing
        }
    }
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
    use crate::session::operator::{Choice, Question};

    const NONE: KeyModifiers = KeyModifiers::NONE;

    fn state(kind: QuestionKind, editable: Option<&str>) -> AppState {
        let plan = crate::plan::parse_plan(
            "examples/demo/plan.md",
            include_str!("../../examples/demo/plan.md"),
        );
        let mut s = AppState::new(plan);
        let choices = match kind {
            // The install question's choices (the UI knows no engine).
            QuestionKind::ApproveChange => {
                let mut out = crate::session::operator::approve_decline("the install");
                out.push(Choice::new("edit", "run this command instead").with_text("<command>"));
                out
            }
            QuestionKind::ConfirmCapability => vec![
                Choice::new("have", "there").alias("yes"),
                Choice::new("skip", "not probed"),
                Choice::new("substitute", "else").with_text("<with what>"),
            ],
            _ => Vec::new(),
        };
        let free_text = match kind {
            QuestionKind::Describe => FreeText::Lines,
            QuestionKind::ClassifyFailure => FreeText::Line,
            _ => FreeText::None,
        };
        s.ask(Question {
            id: "install.binary:x".into(),
            kind,
            prompt: "p".into(),
            choices,
            free_text,
            default: "decline".into(),
            editable: editable.map(str::to_string),
            ..Question::default()
        });
        s
    }

    #[test]
    fn enter_takes_a_wait_back_and_the_status_line_says_the_interval() {
        let mut s = state(QuestionKind::ConfirmCapability, None);
        s.answered();
        s.view.apply(&crate::session::journal::Record {
            seq: 1,
            ts: "2026-01-01T00:00:00Z".into(),
            scope: Default::default(),
            event: crate::session::event::Event::CapabilityWait(
                crate::session::event::CapabilityRef {
                    capability: "binary:x".into(),
                    every_ms: Some(1000),
                    limit_ms: Some(600_000),
                },
            ),
        });
        s.ask(Question {
            id: "waiting.binary:x".into(),
            kind: QuestionKind::StopWaiting,
            prompt: "re-probing binary:x every 1 s (at most 10 min) until it appears".into(),
            choices: vec![Choice::new("stop waiting", "asked again").alias("stop")],
            default: "stop waiting".into(),
            ..Question::default()
        });
        let doing = crate::tui::view::doing(&s);
        assert!(
            doing.starts_with("re-probing binary:x every 1 s") && doing.ends_with("stop waiting"),
            "{doing}"
        );
        assert_eq!(
            press(&mut s, KeyCode::Enter, NONE),
            Typed::Send("stop waiting".into())
        );
    }

    fn press(s: &mut AppState, code: KeyCode, m: KeyModifiers) -> Typed {
        key(s, KeyEvent::new(code, m))
    }

    fn type_text(s: &mut AppState, text: &str) {
        for c in text.chars() {
            press(s, KeyCode::Char(c), NONE);
        }
    }

    #[test]
    fn the_default_is_preselected_and_arrows_pick_what_enter_sends() {
        let mut s = state(QuestionKind::ApproveChange, Some("apt-get install -y x"));
        assert_eq!(s.ui.choice, Some(1), "decline is the default");
        press(&mut s, KeyCode::Up, NONE);
        assert_eq!(s.ui.choice, Some(0));
        assert_eq!(
            press(&mut s, KeyCode::Enter, NONE),
            Typed::Send("approve".into())
        );
        // The list wraps both ways.
        press(&mut s, KeyCode::Up, NONE);
        assert_eq!(s.ui.choice, Some(2));
        press(&mut s, KeyCode::Down, NONE);
        assert_eq!(s.ui.choice, Some(0));
    }

    #[test]
    fn a_choice_that_needs_text_goes_into_the_editor_first() {
        let mut s = state(QuestionKind::ApproveChange, Some("apt-get install -y x"));
        press(&mut s, KeyCode::Down, NONE);
        assert_eq!(press(&mut s, KeyCode::Enter, NONE), Typed::Nothing);
        assert_eq!(s.typed(), "edit: apt-get install -y x");
        assert_eq!(
            press(&mut s, KeyCode::Enter, NONE),
            Typed::Send("edit: apt-get install -y x".into())
        );
    }

    #[test]
    fn tab_cycles_the_choices_and_ctrl_e_offers_the_command_for_editing() {
        let mut s = state(QuestionKind::ApproveChange, Some("apt-get install -y x"));
        press(&mut s, KeyCode::Tab, NONE);
        assert_eq!(s.typed(), "approve");
        press(&mut s, KeyCode::Tab, NONE);
        assert_eq!(s.typed(), "decline");
        press(&mut s, KeyCode::Char('e'), KeyModifiers::CONTROL);
        assert_eq!(s.typed(), "edit: apt-get install -y x");
        for _ in 0.." x".len() {
            press(&mut s, KeyCode::Backspace, NONE);
        }
        type_text(&mut s, " y");
        let sent = press(&mut s, KeyCode::Enter, NONE);
        assert_eq!(sent, Typed::Send("edit: apt-get install -y y".into()));
    }

    #[test]
    fn typing_a_name_or_alias_still_answers_and_highlights_it() {
        let mut s = state(QuestionKind::ConfirmCapability, None);
        type_text(&mut s, "YE");
        assert_eq!(s.ui.choice, Some(0), "the alias `yes` is `have`'s");
        type_text(&mut s, "s");
        assert_eq!(
            press(&mut s, KeyCode::Enter, NONE),
            Typed::Send("have".into())
        );
    }

    #[test]
    fn an_invalid_answer_is_refused_with_the_allowed_ones_and_stays_open() {
        let mut s = state(QuestionKind::ConfirmCapability, None);
        type_text(&mut s, "sometimes");
        assert_eq!(press(&mut s, KeyCode::Enter, NONE), Typed::Nothing);
        let why = s.pending.as_ref().and_then(|q| q.error.clone());
        let why = why.expect("refused with why");
        assert!(
            why.contains("allowed: have, skip, substitute <with what>"),
            "{why}"
        );
        assert_eq!(s.typed(), "sometimes", "what was typed stays to be fixed");
        // A choice that needs text says so.
        press(&mut s, KeyCode::Esc, NONE);
        type_text(&mut s, "substitute");
        assert_eq!(press(&mut s, KeyCode::Enter, NONE), Typed::Nothing);
        let why = s.pending.as_ref().and_then(|q| q.error.clone());
        assert!(why.is_some_and(|w| w.contains("needs <with what>")));
        type_text(&mut s, " nc");
        assert_eq!(
            press(&mut s, KeyCode::Enter, NONE),
            Typed::Send("substitute nc".into())
        );
        assert_eq!(s.pending.as_ref().and_then(|q| q.error.clone()), None);
    }

    #[test]
    fn global_keys_stay_reachable_from_a_question() {
        let mut s = state(QuestionKind::ConfirmCapability, None);
        // F-keys always; `?` while nothing is typed.
        assert_eq!(
            press(&mut s, KeyCode::F(1), NONE),
            Typed::Global(Action::Help)
        );
        assert_eq!(
            press(&mut s, KeyCode::F(2), NONE),
            Typed::Global(Action::Evidence)
        );
        assert_eq!(
            press(&mut s, KeyCode::F(3), NONE),
            Typed::Global(Action::ShowReasons)
        );
        assert_eq!(
            press(&mut s, KeyCode::Char('?'), NONE),
            Typed::Global(Action::Help)
        );
        // No choice starts with e, r, q or 3: they are the usual keys.
        for (c, action) in [
            ('e', Action::Evidence),
            ('r', Action::ShowReasons),
            ('q', Action::Quit),
            ('3', Action::Jump(2)),
        ] {
            assert_eq!(
                press(&mut s, KeyCode::Char(c), NONE),
                Typed::Global(action),
                "{c}"
            );
        }
        // `s` starts `skip`: it types; then every key types.
        assert_eq!(press(&mut s, KeyCode::Char('s'), NONE), Typed::Nothing);
        assert_eq!(press(&mut s, KeyCode::Char('e'), NONE), Typed::Nothing);
        assert_eq!(press(&mut s, KeyCode::Char('?'), NONE), Typed::Nothing);
        assert_eq!(s.typed(), "se?");
        assert_eq!(
            press(&mut s, KeyCode::F(1), NONE),
            Typed::Global(Action::Help)
        );
    }

    #[test]
    fn free_text_types_every_letter_but_help_stays_on_f1_and_an_empty_question_mark() {
        let mut s = state(QuestionKind::ClassifyFailure, None);
        assert_eq!(
            press(&mut s, KeyCode::Char('?'), NONE),
            Typed::Global(Action::Help)
        );
        type_text(&mut s, "eqr1");
        assert_eq!(s.typed(), "eqr1");
        assert_eq!(
            press(&mut s, KeyCode::F(1), NONE),
            Typed::Global(Action::Help)
        );
    }

    #[test]
    fn an_open_overlay_takes_the_keys_until_closed() {
        let mut s = state(QuestionKind::ClassifyFailure, None);
        s.handle(Action::Help);
        assert_eq!(
            press(&mut s, KeyCode::Down, NONE),
            Typed::Global(Action::Down)
        );
        assert_eq!(
            press(&mut s, KeyCode::Esc, NONE),
            Typed::Global(Action::Close)
        );
        assert_eq!(press(&mut s, KeyCode::Char('x'), NONE), Typed::Nothing);
        assert_eq!(s.typed(), "", "nothing typed under the help");
    }

    #[test]
    fn prose_takes_several_lines_and_ctrl_s_sends_them() {
        let mut s = state(QuestionKind::Describe, None);
        type_text(&mut s, "one");
        assert_eq!(press(&mut s, KeyCode::Enter, NONE), Typed::Nothing);
        type_text(&mut s, "two");
        let sent = press(&mut s, KeyCode::Char('s'), KeyModifiers::CONTROL);
        assert_eq!(sent, Typed::Send("one\ntwo".into()));
    }

    #[test]
    fn a_default_that_is_no_choice_is_sent_until_the_arrows_pick_one() {
        let mut s = state(QuestionKind::ConfirmCapability, None);
        assert_eq!(s.ui.choice, None);
        assert_eq!(
            press(&mut s, KeyCode::Enter, NONE),
            Typed::Send("decline".into()),
            "the default, though no choice"
        );
        press(&mut s, KeyCode::Up, NONE);
        assert_eq!(s.ui.choice, Some(2), "up from nothing is the last");
    }

    #[test]
    fn esc_clears_what_was_typed() {
        let mut s = state(QuestionKind::ConfirmCapability, None);
        press(&mut s, KeyCode::Char('h'), NONE);
        assert_eq!((s.typed().as_str(), s.ui.choice), ("h", Some(0)));
        press(&mut s, KeyCode::Esc, NONE);
        assert_eq!(
            (s.typed().as_str(), s.ui.choice),
            ("", None),
            "back to the default"
        );
    }
}
