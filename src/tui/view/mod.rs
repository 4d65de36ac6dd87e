//! Drawing: a pure function of ([`AppState`], [`Theme`]) onto a frame. Nothing here
//! reads the terminal or blocks; the Run screen's pane reads a capped tail of a log
//! file from disk.

mod chart;
mod diff;
mod fit;
mod logcut;
mod markdown;
mod note;
mod overlay;
mod run;
mod screens;

use ratatui::Frame;
use ratatui::layout::{Alignment, Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

use crate::tui::state::{AppState, Badge, Step};
use crate::tui::theme::Theme;

pub use chart::{Chart, LiveChart, live_series, refresh as refresh_chart};
pub use overlay::choices;
pub use run::tail;
pub use screens::finding_text;

/// At least this wide, screens put panes side by side and show more columns.
const WIDE: u16 = 120;

/// Draws the whole UI: step bar, the selected step's screen, status line, overlays.
pub fn draw(frame: &mut Frame, state: &AppState, theme: &Theme) {
    let [bar, body, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    step_bar(frame, bar, state, theme);
    match state.ui.step {
        Step::Plan => screens::plan(frame, body, state, theme),
        Step::Toolbox => screens::toolbox(frame, body, state, theme),
        Step::Checklist => screens::checklist(frame, body, state, theme),
        Step::Approvals => screens::approvals(frame, body, state, theme),
        Step::Run => run::run(frame, body, state, theme),
        Step::Finding => screens::finding(frame, body, state, theme),
        Step::Report => screens::report(frame, body, state, theme),
    }
    status_line(frame, status, state, theme);
    // The note being written takes the keys: it hides a question waiting beneath it,
    // not the quit dialog (which hides it until cancelled).
    let quitting = state
        .pending
        .as_ref()
        .is_some_and(|q| q.kind == crate::session::operator::QuestionKind::Quit);
    let noting = state.note.is_some() && !quitting;
    // A question first: help, evidence or the diff opened from it go on top.
    if let Some(question) = &state.pending
        && !screens::asks_inline(state)
        && !noting
    {
        // Never over the step bar or the status line: it says what the run waits on.
        overlay::question(frame, body, question, state, theme);
    }
    if noting {
        note::draw(frame, body, state, theme);
    }
    if state.ui.evidence {
        overlay::evidence(frame, body, state, theme);
    }
    if state.ui.diff {
        diff::staged(frame, body, state, theme);
    }
    if state.ui.help {
        overlay::help(frame, frame.area(), state, theme);
    }
}

/// `ts` (RFC 3339, UTC as journaled) as `HH:MM:SS` in the operator's local zone.
pub fn local_time(ts: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(ts).map_or_else(
        |_| "--:--:--".to_string(),
        |t| {
            t.with_timezone(&chrono::Local)
                .format("%H:%M:%S")
                .to_string()
        },
    )
}

fn step_bar(frame: &mut Frame, area: Rect, state: &AppState, theme: &Theme) {
    let mut spans = Vec::new();
    for (i, step) in Step::ALL.iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(theme.symbols.step_sep, theme.dim));
        }
        let style = if *step == state.ui.step {
            theme.highlight
        } else if *step <= state.view.reached {
            theme.text
        } else {
            theme.dim
        };
        spans.push(Span::styled(format!(" {} ", step.title()), style));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// What the engine is doing now, in words, with elapsed and remaining time: the
/// pending question first (the run waits on the operator), then the session's end,
/// then the journal's latest step.
pub fn doing(state: &AppState) -> String {
    use crate::session::operator::QuestionKind;
    // A viewer answers nothing: a question waits on the others, never on them.
    if state.watching() {
        let asked = state
            .pending
            .as_ref()
            .filter(|q| !matches!(q.kind, QuestionKind::Quit | QuestionKind::StopWaiting));
        let now = match asked {
            Some(q) => format!("asked: {}", crate::sanitize::line(&q.id)),
            None => doing_now(state),
        };
        return format!("watching (viewer) · {now}");
    }
    // A wait the operator may take back: the run is not waiting on them.
    let stoppable = state
        .pending
        .as_ref()
        .is_some_and(|q| q.kind == QuestionKind::StopWaiting);
    if let Some(question) = state.pending.as_ref().filter(|_| !stoppable) {
        return format!("waiting for you: {}", crate::sanitize::line(&question.id));
    }
    if stoppable {
        return format!("{} — Enter: stop waiting", doing_now(state));
    }
    doing_now(state)
}

/// [`doing`] without the pending question.
fn doing_now(state: &AppState) -> String {
    if state.handed_back {
        return "plan handed back: nothing runs".into();
    }
    match (&state.view.session_verdict, &state.view.interrupted) {
        (Some(v), _) => return format!("session: {v}"),
        (None, Some(during)) => return format!("session: interrupted during {during}"),
        _ => {}
    }
    let Some(activity) = &state.view.activity else {
        return "starting".into();
    };
    let elapsed = state.now.and_then(|now| {
        let since = chrono::DateTime::parse_from_rfc3339(&activity.since).ok()?;
        u64::try_from((now - since.with_timezone(&chrono::Utc)).num_seconds()).ok()
    });
    // A service of this row that ended with no fault to explain it stays said.
    let ended = activity
        .row
        .and_then(|r| state.view.runs.get(r))
        .and_then(|r| r.ended.last())
        .map(|e| format!(" · {e}"))
        .unwrap_or_default();
    let doing = match (elapsed, activity.limit_ms) {
        (Some(e), Some(limit)) => format!(
            "{} {} of {}",
            activity.what,
            span(e),
            span(limit.div_ceil(1000))
        ),
        (Some(e), None) => format!("{} {}", activity.what, span(e)),
        (None, _) => activity.what.clone(),
    };
    format!("{doing}{ended}")
}

/// Seconds as `42 s`, `3 m 05 s`, `1 h 02 m`.
fn span(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs} s"),
        60..3600 => format!("{} m {:02} s", secs / 60, secs % 60),
        _ => format!("{} h {:02} m", secs / 3600, (secs % 3600) / 60),
    }
}

/// The key hints of [`crate::tui::keymap::hints`] that fit `room` columns, in their
/// order (help and quit come first).
fn hints(state: &AppState, room: usize, theme: &Theme) -> String {
    let mut out = String::new();
    for (key, what) in crate::tui::keymap::hints(state) {
        let item = theme.symbols.hint(format!(" {key} {what}"));
        if out.chars().count() + item.chars().count() > room {
            break;
        }
        out.push_str(&item);
    }
    out
}

fn status_line(frame: &mut Frame, area: Rect, state: &AppState, theme: &Theme) {
    let width = usize::from(area.width);
    // What the engine does comes first; the hints take what is left (help and quit
    // fit beside any but the longest).
    let doing = doing(state);
    // A notice (a refusal, the replay's position) comes before the hints: they keep
    // only the room for `? help`.
    let hint_room = if state.notice.is_some() {
        8
    } else {
        width
            .saturating_sub(doing.chars().count() + 3)
            .clamp(14, (width / 2).max(14))
    };
    let hint_text = hints(state, hint_room, theme);
    let hint_width = u16::try_from(hint_text.chars().count() + 1).unwrap_or(u16::MAX);
    let [left, right] =
        Layout::horizontal([Constraint::Min(0), Constraint::Length(hint_width)]).areas(area);
    let waiting = state.pending.as_ref().is_some_and(|q| state.may_answer(q));
    let doing_style = if waiting {
        theme.warning
    } else {
        theme.highlight
    };
    // A replay's position and time come first and are kept whole; its keys'
    // reminder follows what the engine did only where it fits whole.
    let (lead, keys) = match state.notice.as_deref().filter(|_| state.replaying) {
        Some(notice) => {
            let notice = crate::sanitize::line(notice);
            let (at, keys) = match notice.split_once(" · keys ") {
                Some((at, keys)) => (at.to_string(), Some(keys.to_string())),
                None => (notice.clone(), None),
            };
            (
                Some(Span::styled(
                    format!(" {} ", fit::plain(&at, theme)),
                    theme.text,
                )),
                keys.map(|k| Span::styled(format!(" keys {} ", fit::plain(&k, theme)), theme.dim)),
            )
        }
        None => (None, None),
    };
    let room = usize::from(left.width);
    let lead_width = lead.as_ref().map_or(0, Span::width);
    // The reminder is shown when some 20 columns are left for what the engine did.
    let keys = keys.filter(|k| lead_width + k.width() + 20 <= room);
    let keys_width = keys.as_ref().map_or(0, Span::width);
    let mut spans = vec![Span::styled(
        format!(" {} ", fit::plain(&doing, theme)),
        doing_style,
    )];
    if !state.ui.follow && state.ui.step == Step::Run {
        spans.push(Span::styled(" paused", theme.dim));
    }
    if let Some(q) = &state.ui.search {
        spans.push(Span::styled(format!("  /{q}"), theme.text));
    }
    if let Some(notice) = state.notice.as_ref().filter(|_| !state.replaying) {
        spans.push(Span::styled(
            format!(" {} ", crate::sanitize::line(notice)),
            theme.text,
        ));
    }
    if state.participants.len() > 1
        || state
            .me
            .as_ref()
            .is_some_and(|m| m.role != crate::session::event::Role::Owner)
    {
        let names: Vec<String> = state
            .participants
            .iter()
            .map(|p| {
                let name = p.who.label.as_deref().unwrap_or(&p.who.user);
                format!("{} ({})", crate::sanitize::line(name), p.who.role)
            })
            .collect();
        spans.push(Span::styled(
            format!(" with: {} ", names.join(", ")),
            theme.text,
        ));
    }
    // Cut at a word with an ellipsis: what is cut is said in full where it comes from.
    let rest = fit::line(
        Line::from(spans),
        room.saturating_sub(lead_width + keys_width),
        theme,
    );
    let line = match lead {
        Some(lead) => {
            let mut all = vec![lead];
            all.extend(rest.spans);
            all.extend(keys);
            fit::line(Line::from(all), room, theme)
        }
        None => rest,
    };
    frame.render_widget(Paragraph::new(line), left);
    frame.render_widget(
        Paragraph::new(Line::styled(hint_text, theme.dim)).alignment(Alignment::Right),
        right,
    );
}

/// A bordered block in the theme's style.
pub fn block<'a>(title: &'a str, theme: &Theme) -> Block<'a> {
    Block::bordered()
        .border_set(theme.symbols.border)
        .border_style(theme.border)
        .title(Span::styled(format!(" {title} "), theme.text))
}

/// A badge as a styled span.
fn badge(b: Badge, theme: &Theme) -> Span<'static> {
    let style = match b {
        Badge::Verdict(v) => theme.verdict(v),
        Badge::LandingNotProven => theme.warning,
        Badge::Pending => theme.dim,
        _ => theme.text,
    };
    Span::styled(format!("[{}]", b.label()), style)
}
