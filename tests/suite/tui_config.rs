//! The TUI config file: fixtures in tests/fixtures/config/, each bad one with the
//! exact error the operator sees (file, line, field, what is wrong).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use faultline::tui::config::{self, Config};
use faultline::tui::keymap::Action;

fn load(name: &str) -> Result<Config, String> {
    let path = format!("tests/fixtures/config/{name}");
    config::load(std::path::Path::new(&path)).map_err(|e| e.to_string())
}

#[test]
fn a_good_config_sets_theme_mouse_and_keys() {
    let config = load("good.toml").expect("good config");
    assert_eq!(config.theme.as_deref(), Some("light"));
    assert!(config.mouse);
    let key = |code, m| config.keymap.action_for(&KeyEvent::new(code, m));
    assert_eq!(
        key(KeyCode::Char('q'), KeyModifiers::CONTROL),
        Some(Action::Quit)
    );
    assert_eq!(
        key(KeyCode::Char('q'), KeyModifiers::NONE),
        Some(Action::Quit)
    );
    assert_eq!(
        key(KeyCode::Enter, KeyModifiers::NONE),
        Some(Action::Evidence)
    );
    // `e` was evidence's only default key; rebinding replaced it.
    assert_eq!(key(KeyCode::Char('e'), KeyModifiers::NONE), None);
    // Ctrl-C was a default quit key; the file's list for quit replaced it too.
    assert_eq!(key(KeyCode::Char('c'), KeyModifiers::CONTROL), None);
    // The help is generated from the same keymap.
    let help = config.keymap.help_rows();
    assert!(
        help.contains(&("Ctrl-q / q".to_string(), Action::Quit.help())),
        "{help:?}"
    );
}

#[test]
fn bad_configs_name_file_line_and_field() {
    let cases = [
        (
            "unknown-action.toml",
            "tests/fixtures/config/unknown-action.toml:5: keys.launch-missiles: unknown action \
             (one of: next-step, prev-step, up, down, next-pane, toggle-follow, scroll-up, \
             scroll-down, top, bottom, search, help, show-reasons, evidence, staged-diff, note, next-log, close, quit, \
             next-match, prev-match, step-1, step-2, step-3, step-4, step-5, step-6, step-7, \
             replay-next, replay-prev, replay-next-fault, replay-prev-fault, replay-next-scenario, \
             replay-prev-scenario, replay-play, replay-faster, replay-slower)",
        ),
        (
            "unknown-key.toml",
            "tests/fixtures/config/unknown-key.toml:4: keys.help: unknown key `hyper-h` (a \
             character, f1…f12, up, down, left, right, pgup, pgdn, home, end, tab, backtab, \
             esc, enter, space, with ctrl- / alt- / shift-)",
        ),
        (
            "bad-theme.toml",
            "tests/fixtures/config/bad-theme.toml:2: theme: unknown theme `solarized` (dark, \
             light, high-contrast)",
        ),
        (
            "bad-type.toml",
            "tests/fixtures/config/bad-type.toml:2: -: invalid type: string \"yes\", expected a boolean",
        ),
        (
            "empty-keys.toml",
            "tests/fixtures/config/empty-keys.toml:2: keys.quit: needs at least one key",
        ),
    ];
    for (file, expected) in cases {
        assert_eq!(load(file).expect_err(file), expected, "{file}");
    }
}

#[test]
fn a_missing_file_is_an_error_not_the_defaults() {
    let err = load("no-such.toml").expect_err("missing");
    assert!(
        err.starts_with("tests/fixtures/config/no-such.toml:0: -: cannot read:"),
        "{err}"
    );
}
