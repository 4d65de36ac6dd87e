//! Input becomes [`Action`]s through a keymap that is data: one table drives both
//! key lookup and the help overlay, so the two cannot drift apart.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// What a key asks the UI to do. Answers to operator questions are not actions:
/// the question overlay takes text input itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    NextStep,
    PrevStep,
    Up,
    Down,
    NextPane,
    ToggleFollow,
    ScrollUp,
    ScrollDown,
    Top,
    Bottom,
    Search,
    Help,
    ShowReasons,
    /// Closes the help overlay or the search.
    Close,
    Quit,
}

/// One keymap entry.
#[derive(Debug, Clone, Copy)]
pub struct Binding {
    /// How the help overlay names the key.
    pub key: &'static str,
    pub code: KeyCode,
    pub modifiers: KeyModifiers,
    pub action: Action,
    pub help: &'static str,
}

const fn bind(
    key: &'static str,
    code: KeyCode,
    modifiers: KeyModifiers,
    action: Action,
    help: &'static str,
) -> Binding {
    Binding {
        key,
        code,
        modifiers,
        action,
        help,
    }
}

const NONE: KeyModifiers = KeyModifiers::NONE;

/// The keymap: arrows and vim keys both.
pub static KEYMAP: &[Binding] = &[
    bind("→", KeyCode::Right, NONE, Action::NextStep, "next step"),
    bind("l", KeyCode::Char('l'), NONE, Action::NextStep, "next step"),
    bind("←", KeyCode::Left, NONE, Action::PrevStep, "previous step"),
    bind(
        "h",
        KeyCode::Char('h'),
        NONE,
        Action::PrevStep,
        "previous step",
    ),
    bind("↑", KeyCode::Up, NONE, Action::Up, "up (select / scroll)"),
    bind(
        "k",
        KeyCode::Char('k'),
        NONE,
        Action::Up,
        "up (select / scroll)",
    ),
    bind(
        "↓",
        KeyCode::Down,
        NONE,
        Action::Down,
        "down (select / scroll)",
    ),
    bind(
        "j",
        KeyCode::Char('j'),
        NONE,
        Action::Down,
        "down (select / scroll)",
    ),
    bind("Tab", KeyCode::Tab, NONE, Action::NextPane, "switch pane"),
    bind(
        "f",
        KeyCode::Char('f'),
        NONE,
        Action::ToggleFollow,
        "follow / pause the log",
    ),
    bind(
        "PgUp",
        KeyCode::PageUp,
        NONE,
        Action::ScrollUp,
        "scroll up a page",
    ),
    bind(
        "PgDn",
        KeyCode::PageDown,
        NONE,
        Action::ScrollDown,
        "scroll down a page",
    ),
    bind("g", KeyCode::Char('g'), NONE, Action::Top, "top"),
    bind("Home", KeyCode::Home, NONE, Action::Top, "top"),
    bind(
        "G",
        KeyCode::Char('G'),
        NONE,
        Action::Bottom,
        "bottom (follow)",
    ),
    bind("End", KeyCode::End, NONE, Action::Bottom, "bottom (follow)"),
    bind(
        "/",
        KeyCode::Char('/'),
        NONE,
        Action::Search,
        "search the log",
    ),
    bind("?", KeyCode::Char('?'), NONE, Action::Help, "this help"),
    bind(
        "r",
        KeyCode::Char('r'),
        NONE,
        Action::ShowReasons,
        "show the reason chain",
    ),
    bind(
        "Esc",
        KeyCode::Esc,
        NONE,
        Action::Close,
        "close help / search",
    ),
    bind(
        "q",
        KeyCode::Char('q'),
        NONE,
        Action::Quit,
        "quit (heals first)",
    ),
    bind(
        "Ctrl-C",
        KeyCode::Char('c'),
        KeyModifiers::CONTROL,
        Action::Quit,
        "quit (heals first)",
    ),
];

/// The action bound to `key`, if any. Shift is ignored for characters (`G` arrives
/// as Shift+G on most terminals).
pub fn action_for(key: &KeyEvent) -> Option<Action> {
    let modifiers = match key.code {
        KeyCode::Char(_) => key.modifiers - KeyModifiers::SHIFT,
        _ => key.modifiers,
    };
    KEYMAP
        .iter()
        .find(|b| b.code == key.code && b.modifiers == modifiers)
        .map(|b| b.action)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrows_and_vim_keys_agree() {
        let k = |code, m| action_for(&KeyEvent::new(code, m));
        assert_eq!(k(KeyCode::Char('j'), NONE), k(KeyCode::Down, NONE));
        assert_eq!(
            k(KeyCode::Char('G'), KeyModifiers::SHIFT),
            Some(Action::Bottom)
        );
        assert_eq!(
            k(KeyCode::Char('c'), KeyModifiers::CONTROL),
            Some(Action::Quit)
        );
        assert_eq!(k(KeyCode::Char('c'), NONE), None);
    }
}
