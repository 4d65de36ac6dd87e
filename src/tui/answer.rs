//! Answering the pending question: a choice list (↑↓ or a digit move the highlight,
//! typing shows only the choices the text begins, Enter sends the highlighted one),
//! an editor for the text a question takes (ratatui-textarea), and the global keys
//! that stay reachable meanwhile. Pure over [`AppState`], so the keys' effects are
//! unit-tested without a terminal.
//!
//! The rule for global keys while a question is open: F1 (help), F2 (evidence), F3
//! (reasons) and Ctrl-C always work; `?` opens help while nothing is typed; in a
//! question that takes no free text, `1`..`9` highlight the list's n-th choice and
//! every other bound key works too while nothing is typed, unless one of the choices
//! starts with that letter (then it starts typing the choice's name). The UI's own
//! dialog whose choices start with distinct letters (quit: `d` / `s` / `c`) acts on
//! that one key; a question the session asks always waits for Enter, since its
//! answer is journaled for good. While a question is settling (it has just
//! appeared) every key but F1–F3 is dropped.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui_textarea::{CursorMove, TextArea};

use super::keymap::Action;
use super::state::AppState;
use super::view::choices;
use crate::session::operator::{Choice, FreeText, Question, QuestionKind};

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

/// A list whose choices are all it takes: digits pick and Enter sends the highlight.
pub fn picks(q: &Question) -> bool {
    !q.choices.is_empty() && !takes_text(q)
}

/// `choice`'s name or an alias begins with `typed` (lower case).
fn begins(choice: &Choice, typed: &str) -> bool {
    std::iter::once(&choice.value)
        .chain(&choice.aliases)
        .any(|n| n.to_lowercase().starts_with(typed))
}

/// Some choice's name or alias starts with `c`: the key types it.
fn starts_a_choice(q: &Question, c: char) -> bool {
    let c = c.to_lowercase().to_string();
    q.choices.iter().any(|choice| begins(choice, &c))
}

/// The choices the list shows, by index: those whose name or alias begins with what
/// was typed, or every one while nothing is typed or nothing matches.
pub fn shown(q: &Question, typed: &str) -> Vec<usize> {
    let typed = typed.trim().to_lowercase();
    let hits: Vec<usize> = (0..q.choices.len())
        .filter(|i| !typed.is_empty() && begins(&q.choices[*i], &typed))
        .collect();
    if hits.is_empty() {
        (0..q.choices.len()).collect()
    } else {
        hits
    }
}

/// The key each choice of the UI's own dialog answers to at once (its first
/// letter), when the first letters are distinct; `None` for any other question.
pub fn single_keys(q: &Question) -> Option<Vec<char>> {
    if q.kind != QuestionKind::Quit {
        return None;
    }
    let keys: Vec<char> = q
        .choices
        .iter()
        .filter_map(|c| c.value.chars().next())
        .flat_map(char::to_lowercase)
        .collect();
    let distinct = keys.len() == q.choices.len()
        && keys.iter().enumerate().all(|(i, k)| !keys[..i].contains(k));
    distinct.then_some(keys)
}

/// The choice key `c` answers at once: its first letter or a one-letter alias.
fn single_key(q: &Question, c: char) -> Option<usize> {
    let keys = single_keys(q)?;
    let c = c.to_lowercase().next()?;
    keys.iter().position(|k| *k == c).or_else(|| {
        q.choices.iter().position(|choice| {
            choice
                .aliases
                .iter()
                .any(|a| a.to_lowercase() == c.to_string())
        })
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
    // Typed for the screen beneath in the moment before the question showed:
    // dropped, never queued into the answer.
    if state.ui.settling {
        return Typed::Nothing;
    }
    let empty = state.typed().is_empty();
    let listed = !question.choices.is_empty() && !prose(&question);
    if let KeyCode::Char(c) = key.code
        && !ctrl
        && !alt
    {
        if let Some(at) = single_key(&question, c) {
            state.ui.choice = Some(at);
            state.editor = TextArea::default();
            return send(state, &question);
        }
        if let Some(n) = c.to_digit(10).filter(|n| *n > 0)
            && empty
            && picks(&question)
        {
            // A digit past the list does nothing: it never moves the screen beneath.
            let at = usize::try_from(n - 1).unwrap_or(usize::MAX);
            if at < question.choices.len() {
                state.ui.choice = Some(at);
            }
            return Typed::Nothing;
        }
    }
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

/// Types `key` into the editor; the highlight stays on a choice the text still
/// begins, else moves to the first one it begins.
fn type_key(state: &mut AppState, q: &Question, key: KeyEvent) {
    state.editor.input(key);
    let typed = state.typed().trim().to_lowercase();
    if typed.is_empty() {
        return;
    }
    let still = state
        .ui
        .choice
        .and_then(|at| q.choices.get(at))
        .is_some_and(|c| begins(c, &typed));
    if !still && let Some(i) = q.choices.iter().position(|c| begins(c, &typed)) {
        state.ui.choice = Some(i);
    }
}

/// Moves the list's highlight by `by` rows among the choices shown (wrapping).
/// Typed text that begins some choice stays (the list stays filtered by it); text
/// that begins none is dropped, so Enter sends the highlighted choice.
fn pick(state: &mut AppState, q: &Question, by: isize) {
    let typed = state.typed();
    let rows = shown(q, &typed);
    let n = rows.len();
    if n == 0 {
        return;
    }
    let at = state
        .ui
        .choice
        .and_then(|c| rows.iter().position(|r| *r == c));
    let next = match (at, by < 0) {
        (None, true) => n - 1,
        (None, false) => 0,
        (Some(i), true) => (i + n - 1) % n,
        (Some(i), false) => (i + 1) % n,
    };
    state.ui.choice = Some(rows[next]);
    let lower = typed.trim().to_lowercase();
    if !q.choices.iter().any(|c| begins(c, &lower)) || lower.is_empty() {
        state.editor = TextArea::default();
    }
}

/// The highlighted choice when nothing is typed or (in a list that takes no free
/// text) what is typed begins its name, else the typed text; checked against the
/// question: sent when it is an answer, else refused with why (the question stays).
/// A highlighted choice that needs text (`edit: <command>`) goes into the editor to
/// be completed first.
fn send(state: &mut AppState, q: &Question) -> Typed {
    let mut text = state.typed();
    let typed = text.trim().to_lowercase();
    if let Some(at) = state.ui.choice
        && let Some(choice) = q.choices.get(at)
        && (typed.is_empty() || (!takes_text(q) && begins(choice, &typed)))
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
        // A choice that needs text goes into the editor to be completed.
        press(&mut s, KeyCode::Esc, NONE);
        type_text(&mut s, "subst");
        assert_eq!(press(&mut s, KeyCode::Enter, NONE), Typed::Nothing);
        assert_eq!(s.typed(), "substitute ");
        type_text(&mut s, "nc");
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
        // No choice starts with e, r or q: they are the usual keys.
        for (c, action) in [
            ('e', Action::Evidence),
            ('r', Action::ShowReasons),
            ('q', Action::Quit),
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

    const BUG_TYPES: &[&str] = &[
        "timing",
        "ordering",
        "partition",
        "crash-recovery",
        "upgrade",
        "config",
        "fault-handling",
        "performance",
        "unknown",
    ];
    const SEVERITIES: &[&str] = &["P0", "P1", "P2", "P3", "unrated"];
    const BLAMES: &[&str] = &["SUT", "harness", "checker", "environment", "unknown"];

    /// A choice-only list like a FAIL's classification asks (the UI knows no engine).
    fn listed(values: &[&str], default: &str) -> AppState {
        let mut s = state(QuestionKind::ConfirmCapability, None);
        s.ask(Question {
            id: "D3.list".into(),
            kind: QuestionKind::ClassifyFailure,
            prompt: "p".into(),
            choices: values.iter().map(|v| Choice::new(v, "")).collect(),
            default: default.into(),
            ..Question::default()
        });
        s
    }

    /// The quit dialog's shape: the UI's own question, distinct first letters.
    fn quit() -> AppState {
        let mut s = state(QuestionKind::ConfirmCapability, None);
        s.ask(Question {
            id: "quit".into(),
            kind: QuestionKind::Quit,
            choices: vec![
                Choice::new("detach", "").alias("d"),
                Choice::new("stop", "").alias("s").alias("y").alias("yes"),
                Choice::new("cancel", "").alias("c").alias("n").alias("no"),
            ],
            default: "cancel".into(),
            ..Question::default()
        });
        s
    }

    fn shown_now(s: &AppState) -> Vec<usize> {
        s.pending
            .as_ref()
            .map(|q| shown(q, &s.typed()))
            .unwrap_or_default()
    }

    #[test]
    fn typing_filters_the_list_and_enter_sends_the_highlighted_choice() {
        let mut s = listed(BUG_TYPES, "unknown");
        type_text(&mut s, "crash");
        assert_eq!(shown_now(&s), vec![3]);
        assert_eq!(
            press(&mut s, KeyCode::Enter, NONE),
            Typed::Send("crash-recovery".into())
        );
        // The arrows move among the choices shown; the text stays.
        let mut s = listed(BUG_TYPES, "unknown");
        type_text(&mut s, "p");
        assert_eq!((shown_now(&s), s.ui.choice), (vec![2, 7], Some(2)));
        press(&mut s, KeyCode::Down, NONE);
        assert_eq!((s.ui.choice, s.typed().as_str()), (Some(7), "p"));
        press(&mut s, KeyCode::Down, NONE);
        assert_eq!(s.ui.choice, Some(2), "wraps within the shown");
        press(&mut s, KeyCode::Up, NONE);
        type_text(&mut s, "e");
        assert_eq!(
            s.ui.choice,
            Some(7),
            "the highlight the text still begins stays"
        );
        assert_eq!(
            press(&mut s, KeyCode::Enter, NONE),
            Typed::Send("performance".into())
        );
        // Text that begins no choice shows them all and is sent as typed (refused).
        let mut s = listed(BUG_TYPES, "unknown");
        type_text(&mut s, "threads");
        assert_eq!(shown_now(&s).len(), BUG_TYPES.len());
        assert_eq!(press(&mut s, KeyCode::Enter, NONE), Typed::Nothing);
        assert!(s.pending.as_ref().is_some_and(|q| q.error.is_some()));
    }

    #[test]
    fn digits_pick_the_numbered_choice_and_never_move_the_screen() {
        let mut s = listed(SEVERITIES, "unrated");
        assert_eq!(s.ui.choice, Some(4));
        let step = s.ui.step;
        assert_eq!(press(&mut s, KeyCode::Char('1'), NONE), Typed::Nothing);
        assert_eq!((s.ui.choice, s.typed().as_str()), (Some(0), ""));
        assert_eq!(press(&mut s, KeyCode::Char('9'), NONE), Typed::Nothing);
        assert_eq!(
            (s.ui.choice, s.ui.step),
            (Some(0), step),
            "past the list: nothing"
        );
        assert_eq!(
            press(&mut s, KeyCode::Enter, NONE),
            Typed::Send("P0".into())
        );
        // After a letter a digit is text.
        let mut s = listed(SEVERITIES, "unrated");
        type_text(&mut s, "p2");
        assert_eq!(
            press(&mut s, KeyCode::Enter, NONE),
            Typed::Send("P2".into())
        );
        // Free text takes digits as text.
        let mut s = state(QuestionKind::ClassifyFailure, None);
        type_text(&mut s, "12");
        assert_eq!(s.typed(), "12");
    }

    #[test]
    fn the_quit_dialog_acts_on_one_key_and_session_questions_wait_for_enter() {
        for (key, sent) in [
            ('d', "detach"),
            ('s', "stop"),
            ('y', "stop"),
            ('c', "cancel"),
            ('N', "cancel"),
        ] {
            let mut s = quit();
            assert_eq!(
                press(&mut s, KeyCode::Char(key), NONE),
                Typed::Send(sent.into()),
                "{key}"
            );
        }
        assert_eq!(
            single_keys(&quit().pending.expect("quit")),
            Some(vec!['d', 's', 'c'])
        );
        // Blame's choices start with distinct letters too, but its answer is
        // journaled: a letter only types.
        let mut s = listed(BLAMES, "unknown");
        assert_eq!(press(&mut s, KeyCode::Char('h'), NONE), Typed::Nothing);
        assert_eq!(s.typed(), "h");
    }

    #[test]
    fn a_question_just_asked_drops_the_keys_typed_for_the_screen_beneath() {
        let mut s = listed(BLAMES, "unknown");
        assert!(!s.ui.settling, "the app starts the grace, not ask()");
        s.ui.settling = true;
        for code in [
            KeyCode::Char('s'),
            KeyCode::Char('s'),
            KeyCode::Char('s'),
            KeyCode::Down,
            KeyCode::Char('1'),
            KeyCode::Char('q'),
            KeyCode::Enter,
        ] {
            assert_eq!(press(&mut s, code, NONE), Typed::Nothing, "{code:?}");
        }
        assert_eq!((s.typed().as_str(), s.ui.choice), ("", Some(4)));
        assert_eq!(
            press(&mut s, KeyCode::F(1), NONE),
            Typed::Global(Action::Help),
            "help stays reachable"
        );
        s.ui.settling = false;
        type_text(&mut s, "s");
        assert_eq!(
            press(&mut s, KeyCode::Enter, NONE),
            Typed::Send("SUT".into())
        );
    }

    fn ctrl(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
    }

    /// Each row the help lists under "answering a question", checked against what
    /// the keys do; a row without a check here fails.
    #[test]
    fn every_answering_key_the_help_lists_does_what_it_says() {
        let sections = crate::tui::keymap::help_sections(&listed(SEVERITIES, "unrated"));
        let (_, rows) = sections
            .iter()
            .find(|(title, _)| title == "answering a question")
            .expect("the help has the answering section");
        for (keys, help) in rows {
            let why = format!("`{keys}`: {help}");
            match keys.as_str() {
                "Up / Down" => {
                    let mut s = listed(SEVERITIES, "unrated");
                    press(&mut s, KeyCode::Up, NONE);
                    assert_eq!(s.ui.choice, Some(3), "{why}");
                    press(&mut s, KeyCode::Down, NONE);
                    assert_eq!(s.ui.choice, Some(4), "{why}");
                }
                "1-9" => {
                    for (n, c) in ('1'..='5').enumerate() {
                        let mut s = listed(SEVERITIES, "unrated");
                        press(&mut s, KeyCode::Char(c), NONE);
                        assert_eq!(s.ui.choice, Some(n), "{why}");
                    }
                }
                "letters" => {
                    let mut s = listed(BUG_TYPES, "unknown");
                    type_text(&mut s, "co");
                    assert_eq!(shown_now(&s), vec![5], "{why}");
                }
                "Enter" => {
                    let mut s = listed(BUG_TYPES, "unknown");
                    type_text(&mut s, "or");
                    let sent = press(&mut s, KeyCode::Enter, NONE);
                    assert_eq!(sent, Typed::Send("ordering".into()), "{why}");
                    let mut s = state(QuestionKind::ClassifyFailure, None);
                    type_text(&mut s, "durability");
                    let sent = press(&mut s, KeyCode::Enter, NONE);
                    assert_eq!(sent, Typed::Send("durability".into()), "{why}");
                }
                "d / s / c" => {
                    for (c, sent) in [('d', "detach"), ('s', "stop"), ('c', "cancel")] {
                        let mut s = quit();
                        let got = press(&mut s, KeyCode::Char(c), NONE);
                        assert_eq!(got, Typed::Send(sent.into()), "{why}");
                    }
                }
                "Tab" => {
                    let mut s = state(QuestionKind::ApproveChange, Some("x"));
                    press(&mut s, KeyCode::Tab, NONE);
                    assert_eq!(s.typed(), "approve", "{why}");
                }
                "Ctrl-E" => {
                    let mut s = state(QuestionKind::ApproveChange, Some("apt-get x"));
                    key(&mut s, ctrl('e'));
                    assert_eq!(s.typed(), "edit: apt-get x", "{why}");
                }
                "Ctrl-S" => {
                    let mut s = state(QuestionKind::Describe, None);
                    type_text(&mut s, "a");
                    press(&mut s, KeyCode::Enter, NONE);
                    type_text(&mut s, "b");
                    assert_eq!(key(&mut s, ctrl('s')), Typed::Send("a\nb".into()), "{why}");
                }
                "Esc" => {
                    let mut s = listed(BUG_TYPES, "unknown");
                    type_text(&mut s, "ti");
                    press(&mut s, KeyCode::Esc, NONE);
                    assert_eq!((s.typed().as_str(), s.ui.choice), ("", Some(8)), "{why}");
                }
                "F1 / ?" => {
                    let mut s = listed(SEVERITIES, "unrated");
                    for code in [KeyCode::F(1), KeyCode::Char('?')] {
                        let got = press(&mut s, code, NONE);
                        assert_eq!(got, Typed::Global(Action::Help), "{why}");
                    }
                }
                "F2 / F3" => {
                    let mut s = listed(SEVERITIES, "unrated");
                    let got = press(&mut s, KeyCode::F(2), NONE);
                    assert_eq!(got, Typed::Global(Action::Evidence), "{why}");
                    let got = press(&mut s, KeyCode::F(3), NONE);
                    assert_eq!(got, Typed::Global(Action::ShowReasons), "{why}");
                }
                "Ctrl-C" => {
                    // The app asks "quit?" on it before the question sees it.
                    let s = listed(SEVERITIES, "unrated");
                    let got = s.keymap.action_for(&ctrl('c'));
                    assert_eq!(got, Some(Action::Quit), "{why}");
                }
                "other keys" => {
                    let mut s = listed(BLAMES, "unknown");
                    let got = press(&mut s, KeyCode::Char('r'), NONE);
                    assert_eq!(got, Typed::Global(Action::ShowReasons), "{why}");
                    press(&mut s, KeyCode::Char('c'), NONE);
                    assert_eq!(s.typed(), "c", "{why}: `checker` starts with c");
                }
                "any key" => {
                    let mut s = listed(BLAMES, "unknown");
                    s.ui.settling = true;
                    for code in [KeyCode::Char('s'), KeyCode::Enter] {
                        assert_eq!(press(&mut s, code, NONE), Typed::Nothing, "{why}");
                    }
                    assert_eq!(s.typed(), "", "{why}");
                }
                other => panic!("the help lists `{other}` and no test checks it"),
            }
        }
    }
}
