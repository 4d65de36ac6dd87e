//! Input becomes [`Action`]s through a keymap that is data: one table drives both
//! key lookup and the help overlay, so the two cannot drift apart. The defaults are
//! compiled in; a config file may rebind any action (`[keys]` in `config.toml`).

use std::fmt;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// What a key asks the UI to do. Answers to operator questions are not actions:
/// the question editor takes text input itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
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
    Evidence,
    /// The staged diff of what author mode wrote in this run.
    StagedDiff,
    /// The Run pane tails the selected row's next log (a service picker).
    NextLog,
    /// Closes the help overlay, the evidence, the staged diff or the search.
    Close,
    Quit,
}

impl Action {
    pub const ALL: [Action; 18] = [
        Action::NextStep,
        Action::PrevStep,
        Action::Up,
        Action::Down,
        Action::NextPane,
        Action::ToggleFollow,
        Action::ScrollUp,
        Action::ScrollDown,
        Action::Top,
        Action::Bottom,
        Action::Search,
        Action::Help,
        Action::ShowReasons,
        Action::Evidence,
        Action::StagedDiff,
        Action::NextLog,
        Action::Close,
        Action::Quit,
    ];

    /// The name a config file uses (`next-step = ["l", "right"]`).
    pub fn name(self) -> &'static str {
        match self {
            Action::NextStep => "next-step",
            Action::PrevStep => "prev-step",
            Action::Up => "up",
            Action::Down => "down",
            Action::NextPane => "next-pane",
            Action::ToggleFollow => "toggle-follow",
            Action::ScrollUp => "scroll-up",
            Action::ScrollDown => "scroll-down",
            Action::Top => "top",
            Action::Bottom => "bottom",
            Action::Search => "search",
            Action::Help => "help",
            Action::ShowReasons => "show-reasons",
            Action::Evidence => "evidence",
            Action::StagedDiff => "staged-diff",
            Action::NextLog => "next-log",
            Action::Close => "close",
            Action::Quit => "quit",
        }
    }

    /// What the help overlay says it does.
    pub fn help(self) -> &'static str {
        match self {
            Action::NextStep => "next step",
            Action::PrevStep => "previous step",
            Action::Up => "up (select / scroll)",
            Action::Down => "down (select / scroll)",
            Action::NextPane => "switch pane",
            Action::ToggleFollow => "follow the running scenario and its log / pause",
            Action::ScrollUp => "scroll up a page",
            Action::ScrollDown => "scroll down a page",
            Action::Top => "top",
            Action::Bottom => "bottom (follow)",
            Action::Search => "search the log",
            Action::Help => "this help",
            Action::ShowReasons => "show the reason chain",
            Action::Evidence => "evidence of the selected verdict",
            Action::StagedDiff => "staged diff of author mode",
            Action::NextLog => "tail the next log (service picker)",
            Action::Close => "close help / evidence / diff / search",
            Action::Quit => "quit (heals first)",
        }
    }

    pub fn from_name(name: &str) -> Option<Action> {
        Action::ALL.into_iter().find(|a| a.name() == name)
    }
}

/// A key with its modifiers, as a config file spells it: `q`, `G`, `ctrl-c`,
/// `shift-tab`, `up`, `pgdn`, `f5`, `space`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chord {
    pub code: KeyCode,
    pub modifiers: KeyModifiers,
}

const NAMED: &[(&str, KeyCode)] = &[
    ("up", KeyCode::Up),
    ("down", KeyCode::Down),
    ("left", KeyCode::Left),
    ("right", KeyCode::Right),
    ("pgup", KeyCode::PageUp),
    ("pgdn", KeyCode::PageDown),
    ("home", KeyCode::Home),
    ("end", KeyCode::End),
    ("tab", KeyCode::Tab),
    ("backtab", KeyCode::BackTab),
    ("esc", KeyCode::Esc),
    ("enter", KeyCode::Enter),
    ("space", KeyCode::Char(' ')),
];

impl Chord {
    /// Parses `ctrl-c`, `alt-x`, `shift-tab`, `G`, `f5`…; `None` for anything else.
    pub fn parse(text: &str) -> Option<Chord> {
        let mut modifiers = KeyModifiers::NONE;
        let mut rest = text.trim();
        loop {
            let lower = rest.to_ascii_lowercase();
            let (m, len) = if lower.starts_with("ctrl-") && rest.len() > 5 {
                (KeyModifiers::CONTROL, 5)
            } else if lower.starts_with("alt-") && rest.len() > 4 {
                (KeyModifiers::ALT, 4)
            } else if lower.starts_with("shift-") && rest.len() > 6 {
                (KeyModifiers::SHIFT, 6)
            } else {
                break;
            };
            modifiers |= m;
            rest = &rest[len..];
        }
        let lower = rest.to_ascii_lowercase();
        let code = if let Some((_, code)) = NAMED.iter().find(|(n, _)| *n == lower) {
            *code
        } else if let Some(n) = lower.strip_prefix('f').and_then(|n| n.parse::<u8>().ok()) {
            (1..=12).contains(&n).then_some(KeyCode::F(n))?
        } else {
            let mut chars = rest.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) if !c.is_control() => KeyCode::Char(c),
                _ => return None,
            }
        };
        Some(Chord { code, modifiers }.normalised())
    }

    fn from_event(key: &KeyEvent) -> Chord {
        Chord {
            code: key.code,
            modifiers: key.modifiers,
        }
        .normalised()
    }

    /// Shift is part of the character (`G` arrives as Shift+G on most terminals).
    fn normalised(mut self) -> Chord {
        if let KeyCode::Char(_) = self.code {
            self.modifiers -= KeyModifiers::SHIFT;
        }
        if self.code == KeyCode::BackTab {
            self.modifiers -= KeyModifiers::SHIFT;
        }
        self
    }
}

impl fmt::Display for Chord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (m, name) in [
            (KeyModifiers::CONTROL, "Ctrl-"),
            (KeyModifiers::ALT, "Alt-"),
            (KeyModifiers::SHIFT, "Shift-"),
        ] {
            if self.modifiers.contains(m) {
                f.write_str(name)?;
            }
        }
        match self.code {
            KeyCode::Char(' ') => f.write_str("Space"),
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::F(n) => write!(f, "F{n}"),
            KeyCode::Up => f.write_str("Up"),
            KeyCode::Down => f.write_str("Down"),
            KeyCode::Left => f.write_str("Left"),
            KeyCode::Right => f.write_str("Right"),
            KeyCode::PageUp => f.write_str("PgUp"),
            KeyCode::PageDown => f.write_str("PgDn"),
            KeyCode::Home => f.write_str("Home"),
            KeyCode::End => f.write_str("End"),
            KeyCode::Tab => f.write_str("Tab"),
            KeyCode::BackTab => f.write_str("Shift-Tab"),
            KeyCode::Esc => f.write_str("Esc"),
            KeyCode::Enter => f.write_str("Enter"),
            other => write!(f, "{other:?}"),
        }
    }
}

/// The compiled-in bindings: arrows and vim keys both.
const DEFAULTS: &[(&str, Action)] = &[
    ("right", Action::NextStep),
    ("l", Action::NextStep),
    ("left", Action::PrevStep),
    ("h", Action::PrevStep),
    ("up", Action::Up),
    ("k", Action::Up),
    ("down", Action::Down),
    ("j", Action::Down),
    ("tab", Action::NextPane),
    ("f", Action::ToggleFollow),
    ("pgup", Action::ScrollUp),
    ("pgdn", Action::ScrollDown),
    ("g", Action::Top),
    ("home", Action::Top),
    ("G", Action::Bottom),
    ("end", Action::Bottom),
    ("/", Action::Search),
    ("?", Action::Help),
    ("r", Action::ShowReasons),
    ("e", Action::Evidence),
    ("d", Action::StagedDiff),
    ("s", Action::NextLog),
    ("esc", Action::Close),
    ("q", Action::Quit),
    ("ctrl-c", Action::Quit),
];

/// Key → action, in the order the help lists them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keymap {
    bindings: Vec<(Chord, Action)>,
}

impl Default for Keymap {
    fn default() -> Keymap {
        Keymap {
            bindings: DEFAULTS
                .iter()
                .filter_map(|(key, action)| Chord::parse(key).map(|c| (c, *action)))
                .collect(),
        }
    }
}

impl Keymap {
    /// Replaces every binding of `action` with `keys`.
    pub fn rebind(&mut self, action: Action, keys: Vec<Chord>) {
        let at = self
            .bindings
            .iter()
            .position(|(_, a)| *a == action)
            .unwrap_or(self.bindings.len());
        self.bindings.retain(|(_, a)| *a != action);
        // A key bound to the rebound action leaves whatever action had it before.
        self.bindings.retain(|(c, _)| !keys.contains(c));
        let at = at.min(self.bindings.len());
        for (i, chord) in keys.into_iter().enumerate() {
            self.bindings.insert(at + i, (chord, action));
        }
    }

    /// The action bound to `key`, if any.
    pub fn action_for(&self, key: &KeyEvent) -> Option<Action> {
        let chord = Chord::from_event(key);
        self.bindings
            .iter()
            .find(|(c, _)| *c == chord)
            .map(|(_, a)| *a)
    }

    /// Every binding, in help order.
    pub fn bindings(&self) -> &[(Chord, Action)] {
        &self.bindings
    }

    /// One help row per action: its keys joined (`Down / j`) and what it does.
    pub fn help_rows(&self) -> Vec<(String, &'static str)> {
        let mut rows: Vec<(Action, Vec<String>)> = Vec::new();
        for (chord, action) in &self.bindings {
            match rows.iter_mut().find(|(a, _)| a == action) {
                Some((_, keys)) => keys.push(chord.to_string()),
                None => rows.push((*action, vec![chord.to_string()])),
            }
        }
        rows.into_iter()
            .map(|(a, keys)| (keys.join(" / "), a.help()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NONE: KeyModifiers = KeyModifiers::NONE;

    #[test]
    fn arrows_and_vim_keys_agree() {
        let map = Keymap::default();
        let k = |code, m| map.action_for(&KeyEvent::new(code, m));
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

    #[test]
    fn every_action_has_a_default_key_and_a_unique_name() {
        let map = Keymap::default();
        for a in Action::ALL {
            assert!(map.bindings().iter().any(|(_, b)| *b == a), "{a:?}");
            assert_eq!(Action::from_name(a.name()), Some(a));
        }
    }

    #[test]
    fn chords_parse_and_print_back() {
        for text in ["ctrl-c", "G", "shift-tab", "f5", "pgdn", "space", "alt-x"] {
            let chord = Chord::parse(text).expect(text);
            let again = Chord::parse(&chord.to_string()).expect("printed form parses");
            assert_eq!(chord, again, "{text}");
        }
        for bad in ["", "ctrl-", "f13", "xy", "hyper-q"] {
            assert_eq!(Chord::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn rebinding_moves_a_key_from_its_old_action() {
        let mut map = Keymap::default();
        let x = Chord::parse("x").expect("x");
        let q = Chord::parse("q").expect("q");
        map.rebind(Action::Quit, vec![x]);
        assert_eq!(
            map.action_for(&KeyEvent::new(KeyCode::Char('x'), NONE)),
            Some(Action::Quit)
        );
        assert_eq!(
            map.action_for(&KeyEvent::new(KeyCode::Char('q'), NONE)),
            None
        );
        map.rebind(Action::Help, vec![q]);
        assert_eq!(
            map.action_for(&KeyEvent::new(KeyCode::Char('q'), NONE)),
            Some(Action::Help)
        );
    }
}
