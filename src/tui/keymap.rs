//! Input becomes [`Action`]s through a keymap that is data: one table drives both
//! key lookup and the help overlay, so the two cannot drift apart. The defaults are
//! compiled in; a config file may rebind any action (`[keys]` in `config.toml`).

use std::fmt;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::tui::state::{AppState, Step};

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
    /// Opens the note editor: a note on the run, journaled with who wrote it.
    Note,
    /// Opens (or closes) the Run pane's log picker.
    PickLog,
    /// Closes the help overlay, the evidence, the staged diff or the search.
    Close,
    Quit,
    /// The next / previous match of the search (Report, Finding).
    NextMatch,
    PrevMatch,
    /// Shows step `n` of [`Step::ALL`] (0-based; the keys are 1..7).
    Jump(u8),
    /// A replay's moves (`faultline replay`): by record, by fault step (injected,
    /// landing seen, healed), by scenario (its start, its verdict); play, speed.
    /// Bound only there ([`Keymap::replay_action_for`]).
    ReplayNext,
    ReplayPrev,
    ReplayNextFault,
    ReplayPrevFault,
    ReplayNextScenario,
    ReplayPrevScenario,
    ReplayPlay,
    ReplayFaster,
    ReplaySlower,
}

impl Action {
    pub const ALL: [Action; 37] = [
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
        Action::Note,
        Action::PickLog,
        Action::Close,
        Action::Quit,
        Action::NextMatch,
        Action::PrevMatch,
        Action::Jump(0),
        Action::Jump(1),
        Action::Jump(2),
        Action::Jump(3),
        Action::Jump(4),
        Action::Jump(5),
        Action::Jump(6),
        Action::ReplayNext,
        Action::ReplayPrev,
        Action::ReplayNextFault,
        Action::ReplayPrevFault,
        Action::ReplayNextScenario,
        Action::ReplayPrevScenario,
        Action::ReplayPlay,
        Action::ReplayFaster,
        Action::ReplaySlower,
    ];

    /// One of a replay's own moves.
    pub fn is_replay(self) -> bool {
        matches!(
            self,
            Action::ReplayNext
                | Action::ReplayPrev
                | Action::ReplayNextFault
                | Action::ReplayPrevFault
                | Action::ReplayNextScenario
                | Action::ReplayPrevScenario
                | Action::ReplayPlay
                | Action::ReplayFaster
                | Action::ReplaySlower
        )
    }

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
            Action::Note => "note",
            // The name config files already use.
            Action::PickLog => "next-log",
            Action::Close => "close",
            Action::Quit => "quit",
            Action::NextMatch => "next-match",
            Action::PrevMatch => "prev-match",
            Action::Jump(0) => "step-1",
            Action::Jump(1) => "step-2",
            Action::Jump(2) => "step-3",
            Action::Jump(3) => "step-4",
            Action::Jump(4) => "step-5",
            Action::Jump(5) => "step-6",
            Action::Jump(_) => "step-7",
            Action::ReplayNext => "replay-next",
            Action::ReplayPrev => "replay-prev",
            Action::ReplayNextFault => "replay-next-fault",
            Action::ReplayPrevFault => "replay-prev-fault",
            Action::ReplayNextScenario => "replay-next-scenario",
            Action::ReplayPrevScenario => "replay-prev-scenario",
            Action::ReplayPlay => "replay-play",
            Action::ReplayFaster => "replay-faster",
            Action::ReplaySlower => "replay-slower",
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
            Action::ToggleFollow => "follow the running row on the Run screen / pause",
            Action::ScrollUp => "scroll up a page",
            Action::ScrollDown => "scroll down a page",
            Action::Top => "top",
            Action::Bottom => "bottom (follow)",
            Action::Search => "search (log, report, findings); Enter keeps it",
            Action::Help => "this help",
            Action::ShowReasons => "show the reason chain",
            Action::Evidence => "evidence of the selected verdict",
            Action::StagedDiff => "staged diff of author mode",
            Action::Note => "leave a note on the run (journaled with your name)",
            Action::PickLog => "pick the log the Run pane shows (type to filter)",
            Action::Close => "close help / evidence / diff / search",
            Action::Quit => "quit: detach or stop (heals first)",
            Action::NextMatch => "next match",
            Action::PrevMatch => "previous match",
            Action::Jump(_) => "jump to a step (1 Plan to 7 Report)",
            Action::ReplayNext => "next record",
            Action::ReplayPrev => "previous record",
            Action::ReplayNextFault => "next fault step (injected, held, healed)",
            Action::ReplayPrevFault => "previous fault step",
            Action::ReplayNextScenario => "next scenario start or verdict",
            Action::ReplayPrevScenario => "previous scenario start or verdict",
            Action::ReplayPlay => "play / pause at the journal's pace",
            Action::ReplayFaster => "play faster (up to 16x)",
            Action::ReplaySlower => "play slower (down to 1x)",
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
    ("m", Action::Note),
    ("s", Action::PickLog),
    ("n", Action::NextMatch),
    ("N", Action::PrevMatch),
    ("1", Action::Jump(0)),
    ("2", Action::Jump(1)),
    ("3", Action::Jump(2)),
    ("4", Action::Jump(3)),
    ("5", Action::Jump(4)),
    ("6", Action::Jump(5)),
    ("7", Action::Jump(6)),
    ("esc", Action::Close),
    ("q", Action::Quit),
    ("ctrl-c", Action::Quit),
    (".", Action::ReplayNext),
    (",", Action::ReplayPrev),
    ("]", Action::ReplayNextFault),
    ("[", Action::ReplayPrevFault),
    ("}", Action::ReplayNextScenario),
    ("{", Action::ReplayPrevScenario),
    ("space", Action::ReplayPlay),
    ("+", Action::ReplayFaster),
    ("-", Action::ReplaySlower),
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

    /// The action bound to `key`, if any; a replay's keys are not (they mean
    /// nothing elsewhere, and a question's answer may begin with one).
    pub fn action_for(&self, key: &KeyEvent) -> Option<Action> {
        self.bound(key).filter(|a| !a.is_replay())
    }

    /// The replay move bound to `key`, if any.
    pub fn replay_action_for(&self, key: &KeyEvent) -> Option<Action> {
        self.bound(key).filter(|a| a.is_replay())
    }

    fn bound(&self, key: &KeyEvent) -> Option<Action> {
        let chord = Chord::from_event(key);
        self.bindings
            .iter()
            .find(|(c, _)| *c == chord)
            .map(|(_, a)| *a)
    }

    /// Every binding, in help order (a replay's moves last).
    pub fn bindings(&self) -> &[(Chord, Action)] {
        &self.bindings
    }

    /// One help row per action but a replay's: its keys joined (`Down / j`) and
    /// what it does. The step keys share one row (`1 / 2 / … / 7`).
    pub fn help_rows(&self) -> Vec<(String, &'static str)> {
        self.rows_where(|a| !a.is_replay())
    }

    /// The help rows of a replay's moves.
    pub fn replay_rows(&self) -> Vec<(String, &'static str)> {
        self.rows_where(Action::is_replay)
    }

    /// A replay's keys in the order of its moves, for a one-line reminder
    /// (`. , ] [ } { Space + -`).
    pub fn replay_keys(&self) -> String {
        self.replay_rows()
            .into_iter()
            .map(|(keys, _)| keys.replace(" / ", " "))
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn rows_where(&self, keep: impl Fn(Action) -> bool) -> Vec<(String, &'static str)> {
        let mut rows: Vec<(&'static str, Vec<String>)> = Vec::new();
        for (chord, action) in self.bindings.iter().filter(|(_, a)| keep(*a)) {
            match rows.iter_mut().find(|(h, _)| *h == action.help()) {
                Some((_, keys)) => keys.push(chord.to_string()),
                None => rows.push((action.help(), vec![chord.to_string()])),
            }
        }
        rows.into_iter()
            .map(|(help, keys)| (keys.join(" / "), help))
            .collect()
    }

    /// The first key bound to `action`, as the hint bar writes it.
    pub fn key_of(&self, action: Action) -> Option<String> {
        self.bindings
            .iter()
            .find(|(_, a)| *a == action)
            .map(|(c, _)| c.to_string())
    }

    /// The help rows for `actions` only, in that order (the current screen's keys).
    fn rows_for(&self, actions: &[Action]) -> Vec<(String, &'static str)> {
        let all = self.help_rows();
        let mut out: Vec<(String, &'static str)> = Vec::new();
        for a in actions {
            if let Some(row) = all.iter().find(|(_, h)| *h == a.help())
                && !out.contains(row)
            {
                out.push(row.clone());
            }
        }
        out
    }
}

/// The actions that matter most on `step`, most important first.
fn screen_actions(step: Step) -> &'static [Action] {
    match step {
        Step::Run => &[
            Action::Up,
            Action::Down,
            Action::NextPane,
            Action::PickLog,
            Action::ToggleFollow,
            Action::ScrollUp,
            Action::ScrollDown,
            Action::Search,
            Action::ShowReasons,
            Action::Evidence,
        ],
        Step::Report => &[
            Action::Up,
            Action::Down,
            Action::NextPane,
            Action::Evidence,
            Action::Search,
            Action::NextMatch,
            Action::PrevMatch,
            Action::ScrollDown,
            Action::ScrollUp,
        ],
        Step::Finding => &[
            Action::Down,
            Action::Up,
            Action::Search,
            Action::NextMatch,
            Action::PrevMatch,
            Action::ScrollDown,
            Action::ScrollUp,
        ],
        _ => &[Action::Up, Action::Down],
    }
}

/// How keys work while a question is open (the help overlay lists these; a test
/// in `answer.rs` checks each row against the keys' effects).
pub const ANSWERING: &[(&str, &str)] = &[
    (
        "Up / Down",
        "move the highlight (the default comes preselected)",
    ),
    ("1-9", "highlight a list's n-th choice (then Enter)"),
    (
        "letters",
        "type: the list shows only the choices the text begins",
    ),
    (
        "Enter",
        "send the highlighted choice, or free text as typed",
    ),
    (
        "d / s / c",
        "in the quit dialog: detach / stop / cancel at once",
    ),
    ("Tab", "put the next choice in the answer to edit"),
    ("Ctrl-E", "edit the offered command before approving"),
    ("Ctrl-S", "send several lines (prose answers)"),
    ("Esc", "clear what was typed"),
    ("F1 / ?", "help (`?` while nothing is typed)"),
    ("F2 / F3", "evidence / reason chain"),
    ("Ctrl-C", "leave: detach or stop"),
    (
        "other keys",
        "work as usual while nothing is typed, unless a choice starts with that letter",
    ),
    ("any key", "dropped in a new question's first half second"),
];

/// The help overlay's sections: the current screen's keys, then every other key,
/// then answering a question (first when one is open).
pub fn help_sections(state: &AppState) -> Vec<(String, Vec<(String, String)>)> {
    let map = &state.keymap;
    let own = |rows: Vec<(String, &'static str)>| -> Vec<(String, String)> {
        rows.into_iter().map(|(k, h)| (k, h.to_string())).collect()
    };
    let here = map.rows_for(screen_actions(state.ui.step));
    let rest: Vec<(String, &'static str)> = map
        .help_rows()
        .into_iter()
        .filter(|r| !here.contains(r))
        .collect();
    let answering = ANSWERING
        .iter()
        .map(|(k, h)| ((*k).to_string(), (*h).to_string()))
        .collect();
    let mut sections = vec![
        (format!("{} screen", state.ui.step.title()), own(here)),
        ("everywhere".to_string(), own(rest)),
    ];
    // A recording's own moves come first: they are what replay adds.
    if state.replaying {
        sections.insert(0, ("replay".to_string(), own(map.replay_rows())));
    }
    let question = ("answering a question".to_string(), answering);
    if state.pending.as_ref().is_some_and(|q| state.may_answer(q)) {
        sections.insert(0, question);
    } else {
        sections.push(question);
    }
    sections
}

/// The hint bar's keys, most important first (`? help` and `q quit` lead, so an
/// 80-column line never cuts them), then what matters on this screen.
pub fn hints(state: &AppState) -> Vec<(String, &'static str)> {
    let map = &state.keymap;
    let key = |a: Action| map.key_of(a);
    let mut out: Vec<(String, &'static str)> = Vec::new();
    // A viewer's keys stay the screen's: the question is not theirs to answer.
    if state.pending.as_ref().is_some_and(|q| state.may_answer(q)) {
        out.push(("F1".into(), "help"));
        out.push(("↑↓ Enter".into(), "answer"));
        out.push(("F2".into(), "evidence"));
        out.push(("Ctrl-C".into(), "leave"));
        return out;
    }
    if state.note.is_some() {
        out.push(("Enter".into(), "send note"));
        out.push(("Esc".into(), "cancel"));
        return out;
    }
    if state.ui.search.is_some() && state.ui.searching {
        out.push(("Enter".into(), "keep search"));
        out.push(("Esc".into(), "cancel"));
        return out;
    }
    for (action, what) in [(Action::Help, "help"), (Action::Quit, "quit")] {
        if let Some(k) = key(action) {
            out.push((k, what));
        }
    }
    out.push(("1-7".into(), "step"));
    if !state.ui.follow_session
        && let Some(k) = key(Action::ToggleFollow)
    {
        out.push((k, "follow"));
    }
    // Only a run where author mode staged something has a diff to show.
    if state.view.staged_diff.is_some()
        && let Some(k) = key(Action::StagedDiff)
    {
        out.push((k, "diff"));
    }
    let here: &[(Action, &'static str)] = match state.ui.step {
        Step::Run => &[
            (Action::PickLog, "log"),
            (Action::NextPane, "pane"),
            (Action::Search, "search"),
            (Action::Evidence, "evidence"),
            (Action::ShowReasons, "reasons"),
        ],
        Step::Report | Step::Finding if state.ui.search.is_some() => &[
            (Action::NextMatch, "next"),
            (Action::PrevMatch, "prev"),
            (Action::Evidence, "evidence"),
        ],
        Step::Report => &[
            (Action::Evidence, "evidence"),
            (Action::NextPane, "report text"),
            (Action::Search, "search"),
        ],
        Step::Finding => &[(Action::Search, "search")],
        _ => &[],
    };
    // The tables' rows are picked to be shown whole.
    if matches!(state.ui.step, Step::Toolbox | Step::Checklist) {
        out.push(("↑↓".into(), "row"));
    }
    for (action, what) in here {
        if let Some(k) = key(*action) {
            out.push((k, what));
        }
    }
    if state.may_note()
        && let Some(k) = key(Action::Note)
    {
        out.push((k, "note"));
    }
    out
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

    fn demo_state() -> AppState {
        AppState::new(crate::plan::parse_plan(
            "examples/demo/plan.md",
            include_str!("../../examples/demo/plan.md"),
        ))
    }

    #[test]
    fn number_keys_jump_and_share_one_help_row() {
        let map = Keymap::default();
        for (c, n) in ('1'..='7').zip(0u8..) {
            assert_eq!(
                map.action_for(&KeyEvent::new(KeyCode::Char(c), NONE)),
                Some(Action::Jump(n))
            );
        }
        let rows: Vec<_> = map
            .help_rows()
            .into_iter()
            .filter(|(_, h)| *h == Action::Jump(0).help())
            .collect();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].0, "1 / 2 / 3 / 4 / 5 / 6 / 7");
    }

    #[test]
    fn the_hints_lead_with_help_and_quit() {
        let mut state = demo_state();
        let shown = hints(&state);
        assert_eq!(shown[0], ("?".to_string(), "help"));
        assert_eq!(shown[1], ("q".to_string(), "quit"));
        // Rebound keys show as rebound.
        state
            .keymap
            .rebind(Action::Help, vec![Chord::parse("f1").expect("f1")]);
        assert_eq!(hints(&state)[0], ("F1".to_string(), "help"));
        state.ask(crate::session::operator::Question {
            id: "q".into(),
            ..Default::default()
        });
        assert_eq!(hints(&state)[0], ("F1".to_string(), "help"));
        assert!(hints(&state).iter().any(|(k, _)| k == "Ctrl-C"));
    }

    #[test]
    fn following_is_offered_only_once_the_operator_moved() {
        let mut state = demo_state();
        assert!(!hints(&state).iter().any(|(_, w)| *w == "follow"));
        state.handle(Action::Down);
        assert!(
            hints(&state)
                .iter()
                .any(|(k, w)| k == "f" && *w == "follow")
        );
    }

    #[test]
    fn the_help_lists_the_current_screen_first_and_answering_first_while_asked() {
        let mut state = demo_state();
        state.ui.step = Step::Run;
        let sections = help_sections(&state);
        assert_eq!(sections[0].0, "Run screen");
        assert!(sections[0].1.iter().any(|(k, _)| k == "Tab"));
        assert_eq!(sections[2].0, "answering a question");
        // Every binding is listed once across the sections.
        let listed: usize = sections[..2].iter().map(|(_, rows)| rows.len()).sum();
        assert_eq!(listed, Keymap::default().help_rows().len());
        state.ask(crate::session::operator::Question::default());
        assert_eq!(help_sections(&state)[0].0, "answering a question");
    }

    /// The demo's journal folded in, on the Run screen with D3 selected, following
    /// nothing: every action has something to act on.
    fn run_screen() -> AppState {
        let mut state = demo_state();
        for line in include_str!("../../tests/fixtures/journal/demo.jsonl").lines() {
            if let Ok(record) = serde_json::from_str(line) {
                state.apply(&record);
            }
        }
        state.ui.step = Step::Run;
        state.ui.follow_session = false;
        state.ui.selected = state
            .view
            .runs
            .iter()
            .position(|r| r.id == "D3")
            .unwrap_or(1);
        state.ui.scroll = 20;
        state
    }

    /// What the help says `action` does, seen in the state before and after.
    fn does(action: Action, before: &AppState, after: &AppState) -> bool {
        let (b, a) = (&before.ui, &after.ui);
        match action {
            Action::NextStep => a.step == b.step.next() && a.step != b.step,
            Action::PrevStep => a.step == b.step.prev() && a.step != b.step,
            Action::Up => a.selected + 1 == b.selected,
            Action::Down => a.selected == b.selected + 1,
            Action::NextPane => a.focus != b.focus,
            Action::ToggleFollow => a.follow_session && a.follow && a.step == Step::Run,
            Action::ScrollUp => a.scroll == b.scroll + 10 && !a.follow,
            Action::ScrollDown => a.scroll + 10 == b.scroll,
            Action::Top => a.selected == 0,
            Action::Bottom => a.selected + 1 == after.view.runs.len(),
            Action::Search => a.search.as_deref() == Some("") && a.searching,
            Action::Help => a.help && !b.help,
            Action::ShowReasons => a.reasons != b.reasons,
            Action::Evidence => a.evidence && !b.evidence,
            Action::StagedDiff => a.diff && !b.diff,
            Action::Note => after.note.is_some() && before.note.is_none(),
            Action::PickLog => a.logs.is_some() && b.logs.is_none(),
            Action::Close => !a.help && a.search.is_none(),
            Action::Quit => a.quit,
            Action::NextMatch | Action::PrevMatch => {
                a.match_line.is_some() && a.match_line != b.match_line
            }
            Action::Jump(n) => a.step == Step::ALL[usize::from(n)],
            // The player's, checked in `tui::replay`'s tests.
            _ => false,
        }
    }

    /// What `action` needs to show its effect: a diff staged, help and a search open
    /// to close, a search kept to move through.
    fn ready_for(action: Action, state: &mut AppState) {
        match action {
            Action::StagedDiff => state.view.staged_diff = Some("staged.diff".into()),
            // Notes are an attached operator's who may answer: an approver here.
            Action::Note => {
                state.me = Some(crate::session::event::Who {
                    user: "bob".into(),
                    role: crate::session::event::Role::Approver,
                    ..Default::default()
                });
            }
            Action::Close => {
                state.ui.help = true;
                state.ui.search = Some("x".into());
            }
            Action::NextMatch | Action::PrevMatch => {
                state.ui.step = Step::Finding;
                state.ui.scroll = 0;
                state.ui.search = Some("reproduce".into());
            }
            _ => {}
        }
    }

    #[test]
    fn every_key_the_help_lists_does_what_it_says() {
        let base = run_screen();
        let mut checked = 0;
        for (title, rows) in help_sections(&base) {
            if title == "answering a question" {
                continue;
            }
            for (keys, help) in rows {
                for key in keys.split(" / ") {
                    let chord = Chord::parse(key).unwrap_or_else(|| panic!("help lists `{key}`"));
                    let event = KeyEvent::new(chord.code, chord.modifiers);
                    let action = base.keymap.action_for(&event);
                    let action = action.unwrap_or_else(|| panic!("`{key}` is bound to nothing"));
                    assert_eq!(action.help(), help, "`{key}`");
                    let mut before = base.clone();
                    ready_for(action, &mut before);
                    let mut after = before.clone();
                    after.handle(action);
                    assert!(does(action, &before, &after), "`{key}` does not {help}");
                    checked += 1;
                }
            }
        }
        let live = base
            .keymap
            .bindings()
            .iter()
            .filter(|(_, a)| !a.is_replay())
            .count();
        assert_eq!(checked, live, "every binding checked");
    }

    /// A replay's keys are listed (first) only in a replay's help, and nowhere else
    /// do they act: a question's answer may begin with `.` or `-`.
    #[test]
    fn a_replay_s_keys_are_its_own_and_in_its_help_only() {
        let mut state = demo_state();
        let listed = |state: &AppState| -> Vec<String> {
            help_sections(state)
                .into_iter()
                .flat_map(|(_, rows)| rows.into_iter().map(|(k, _)| k))
                .collect()
        };
        assert!(!listed(&state).iter().any(|k| k == "]"));
        let dot = KeyEvent::new(KeyCode::Char('.'), NONE);
        assert_eq!(state.keymap.action_for(&dot), None);
        assert_eq!(
            state.keymap.replay_action_for(&dot),
            Some(Action::ReplayNext)
        );
        state.replaying = true;
        let sections = help_sections(&state);
        assert_eq!(sections[0].0, "replay");
        let keys: Vec<&str> = sections[0].1.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, [".", ",", "]", "[", "}", "{", "Space", "+", "-"]);
        assert_eq!(state.keymap.replay_keys(), ". , ] [ } { Space + -");
    }
}
