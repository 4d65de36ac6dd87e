//! The terminal UI, kept apart from the engine: [`state::AppState`] folds journal
//! records (plus a pending operator question and UI-only choices),
//! [`keymap`] turns keys into [`keymap::Action`]s, [`theme`] holds colours and
//! symbols as data, and [`view::draw`] renders an immutable state onto a frame.

pub mod answer;
pub mod app;
pub mod config;
pub mod files;
pub mod keymap;
pub mod logs;
pub mod palette;
pub mod picker;
pub mod replay;
pub mod state;
pub mod theme;
pub mod view;
