//! Headless progress: one readable line per record that matters (the session and
//! each scenario / arm / seed starting, faults injected, landing proven or not,
//! healed, each reduction candidate with what it kept and whether the seed still
//! failed, verdicts with their reason in words, questions and answers, an
//! interruption, what author mode wrote), a heartbeat when nothing was printed for a while (so a watcher
//! over SSH knows the run is alive), and, when the journal closes, a table of every
//! run's verdict as the session's reducer ([`View`]) folded it, fitted to the
//! terminal's width by wrapping the reasons.
//!
//! A closed stdout (`| head`) ends the output, never the run: the first failed write
//! stops the printing, and the records are still drained so the engine never waits.

use crate::term_out::wrap;
use std::collections::BTreeMap;
use std::io::Write;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc::UnboundedReceiver;

use crate::sanitize;
use crate::session::event::Event;
use crate::session::journal::Record;
use crate::session::view::{Badge, View};
use crate::verdict::{SessionVerdict, Verdict, words};

/// Silence longer than this prints a heartbeat (the policy asks for ≤ 60 s).
pub const HEARTBEAT: Duration = Duration::from_secs(30);

/// Whether headless output to stdout is coloured: only on a terminal, and not when
/// `NO_COLOR` is set to anything non-empty. Decided once, when the printer starts.
pub fn colour_for_stdout() -> bool {
    use std::io::IsTerminal;
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// How a verdict reads at a glance.
#[derive(Clone, Copy)]
enum Tone {
    Good,
    Bad,
    Concern,
    Quiet,
}

impl Tone {
    fn of(verdict: Verdict) -> Tone {
        if verdict.is_pass() {
            Tone::Good
        } else if verdict.is_fail() {
            Tone::Bad
        } else {
            Tone::Concern
        }
    }

    fn of_session(verdict: SessionVerdict) -> Tone {
        match verdict {
            SessionVerdict::Done => Tone::Good,
            SessionVerdict::Fail => Tone::Bad,
            _ => Tone::Concern,
        }
    }
}

/// `text` in its tone's colour when `colour` is on (SGR codes; `text` is sanitized
/// already, so these are the only escapes on the line).
fn paint(text: &str, tone: Tone, colour: bool) -> String {
    if !colour {
        return text.to_string();
    }
    let code = match tone {
        Tone::Good => "32",
        Tone::Bad => "1;31",
        Tone::Concern => "33",
        Tone::Quiet => "2",
    };
    format!("\u{1b}[{code}m{text}\u{1b}[0m")
}

/// The scope a record is shown under: `D5/api`, `D3`, or `session`.
fn scope_of(record: &Record) -> String {
    let scope = record
        .scope
        .arm
        .as_deref()
        .or(record.scope.scenario.as_deref())
        .unwrap_or("session");
    sanitize::line(scope)
}

/// A payload's value as plain text (a string without its quotes).
fn plain(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// `seed 3 started`, a re-run, or a reduction run, with its planned length.
fn iteration_words(label: crate::session::label::IterationLabel, seconds: u64) -> String {
    use crate::session::label::Pass;
    match label.pass {
        Pass::Seed => format!("seed {} started ({seconds} s)", label.seed),
        Pass::Rerun => format!("re-run of seed {} started ({seconds} s)", label.seed),
        Pass::Reduce(run) => format!(
            "reduction run {run} started (seed {}, {seconds} s)",
            label.seed
        ),
    }
}

/// Milliseconds as `4 s`, `1.5 s` or `250 ms`.
fn seconds(ms: u64) -> String {
    match ms {
        0..1000 => format!("{ms} ms"),
        _ if ms.is_multiple_of(1000) => format!("{} s", ms / 1000),
        _ => format!("{} s", (ms as f64 / 1000.0 * 100.0).round() / 100.0),
    }
}

/// What a reduction candidate ran with and whether the seed still failed, all from
/// its record: `reduction run 4 kept fault kill-primary (start 2 s → 1 s; workload
/// 4 s): still failed`.
fn candidate_words(c: &crate::session::event::ReductionCandidate) -> String {
    let kept = match c.faults.as_slice() {
        [] => "no fault".to_string(),
        [one] => format!("fault {one}"),
        many => format!("faults {}", many.join(", ")),
    };
    let mut with: Vec<String> = c
        .timing
        .iter()
        .map(|cut| {
            let what = match cut.field.as_str() {
                "after" => "start",
                "duration" => "hold",
                other => other,
            };
            let whose = if c.faults.len() > 1 {
                format!("{} ", cut.fault)
            } else {
                String::new()
            };
            format!(
                "{whose}{what} {} → {}",
                seconds(cut.from_ms),
                seconds(cut.to_ms)
            )
        })
        .collect();
    with.push(format!("workload {}", seconds(c.duration_ms)));
    format!(
        "reduction run {} kept {kept} ({}): {}",
        c.run,
        with.join("; "),
        if c.failed {
            "still failed"
        } else {
            "no longer failed"
        }
    )
}

/// What a record says, in words, when it is worth a line; `None` otherwise. Not
/// sanitized yet, and without colour (the verdict's is added by [`line`]).
fn said(record: &Record) -> Option<(String, Option<Tone>)> {
    let words = match &record.event {
        Event::SessionStarted(s) => format!(
            "session started: plan {}, tier {}, directory {}",
            s.plan,
            s.tier
                .map_or_else(|| "unstated".to_string(), |t| t.to_string()),
            s.session
        ),
        Event::SessionResumed(s) => format!("session {} resumed by {}", s.session, s.by),
        Event::NetnsCreated(n) => format!(
            "network: namespace {} of the run's own, loopback only (enter it with `ip netns \
             exec {} …`)",
            n.name, n.name
        ),
        Event::NetnsRemoved(n) => match &n.result {
            Some(Ok(line)) => line.clone(),
            Some(Err(why)) => format!("network namespace {} NOT deleted: {why}", n.name),
            None => format!("network namespace {} deleted", n.name),
        },
        Event::Budget(b) => format!(
            "started: tier {}, {} seed(s) of {} s, {} fault(s)",
            b.tier.map_or_else(|| "none".to_string(), |t| t.to_string()),
            b.seeds,
            b.duration_ms / 1000,
            b.faults
        ),
        Event::IterationStarted(i) => iteration_words(i.label, i.duration_ms / 1000),
        Event::FaultInjected(f) => format!("fault {} injected", f.fault),
        Event::FaultInjectFailed(f) => {
            format!("fault {} could not be injected: {}", f.fault, f.error)
        }
        Event::FaultSkipped(f) => format!("fault {} skipped: {}", f.fault, f.reason),
        Event::LandingInjector(l) => {
            let text = if l.text.is_empty() {
                plain(&l.detail)
            } else {
                l.text.clone()
            };
            if l.landed {
                format!("fault {} landed (injector side: {text})", l.fault)
            } else {
                format!(
                    "fault {} landing NOT proven (injector side: {text})",
                    l.fault
                )
            }
        }
        Event::LandingDeclared(l) => match &l.seen {
            Value::Null | Value::Bool(false) => format!(
                "fault {} landing NOT proven: declared signal /{}/ not seen",
                l.fault, l.pattern
            ),
            Value::String(s) if s.is_empty() => format!(
                "fault {} landing NOT proven: declared signal /{}/ not seen",
                l.fault, l.pattern
            ),
            Value::Bool(true) => format!("fault {} landed: declared signal seen", l.fault),
            seen => format!(
                "fault {} landed: declared signal seen: {}",
                l.fault,
                plain(seen)
            ),
        },
        Event::ServiceExited(e) => match (&e.fault, e.explained_by) {
            (Some(fault), Some(seq)) => {
                format!("service {} (fault {fault}, #{seq}, explains it)", e.said())
            }
            _ => format!(
                "service {} — no fault explains it (#{})",
                e.said(),
                record.seq
            ),
        },
        Event::FaultHealed(h) => match &h.result {
            Some(Err(e)) => format!("fault {} NOT healed: {e}", h.fault),
            _ => format!("fault {} healed", h.fault),
        },
        Event::RerunResult(r) => format!(
            "re-run of seed {} {}",
            r.seed,
            if r.reproduced {
                "reproduced the failure"
            } else {
                "did not reproduce the failure"
            }
        ),
        Event::ReductionStarted(r) => format!(
            "reduction started: {} fault(s), seed {}, at most {} run(s)",
            r.events, r.seed, r.budget_runs
        ),
        Event::ReductionCandidate(c) => candidate_words(c),
        Event::ReductionResult(r) => format!(
            "reduction done: {} fault(s) down to {} over {} run(s)",
            r.from, r.to, r.runs
        ),
        Event::Verdict(v) => {
            let verdict = v.verdict?;
            let id = if v.id.is_empty() {
                scope_of(record)
            } else {
                v.id.clone()
            };
            return Some((
                format!("{verdict} — {}", words::sentence(&id, verdict, &v.reasons)),
                Some(Tone::of(verdict)),
            ));
        }
        Event::ArmsAggregated(a) => {
            let verdict = a.verdict?;
            return Some((
                format!("{verdict} — arms: {}", a.arms),
                Some(Tone::of(verdict)),
            ));
        }
        Event::AuthorWritten(a) => format!(
            "authored {} for {}{}",
            a.path,
            a.scenario,
            if a.incomplete {
                format!(" (incomplete: TODO kept in {})", a.todo_kept.join(", "))
            } else {
                String::new()
            }
        ),
        Event::AuthorSkipped(a) => format!("authoring {} skipped: {}", a.path, a.reason),
        Event::AuthorRefused(a) => format!("authoring {} refused: {}", a.scenario, a.reason),
        Event::AuthorDriver(a) => match (&a.reason, a.driver) {
            (_, true) => "the authored test drives the workload".to_string(),
            (Some(why), false) => format!("the authored test is not the driver: {why}"),
            (None, false) => "the authored test is not the driver".to_string(),
        },
        Event::AuthorStaged(a) => format!("{} authored file(s) staged, not committed", a.files),
        Event::QuestionAsked(q) => {
            format!("question {}: {}", q.question.id, q.question.prompt)
        }
        Event::OperatorAnswer(a) => format!(
            "answered {}: {} (by {})",
            a.question,
            if a.answer.is_empty() {
                "nothing"
            } else {
                &a.answer
            },
            a.by
        ),
        Event::StoppedUnanswered(s) => format!("stopped: question {} went unanswered", s.question),
        Event::Interrupted(i) => format!("interrupted during {}", i.during),
        Event::SessionVerdict(v) => {
            let verdict = v.verdict?;
            return Some((
                format!("session verdict: {verdict}"),
                Some(Tone::of_session(verdict)),
            ));
        }
        _ => return None,
    };
    Some((words, None))
}

/// One progress line for a record that matters (`None` for the rest): time, scope
/// and what happened, child-derived text sanitized, never cut; a verdict coloured
/// when `colour` is on.
pub fn line(record: &Record, colour: bool) -> Option<String> {
    let (words, tone) = said(record)?;
    let time = record.ts.get(11..19).unwrap_or(&record.ts);
    let scope = scope_of(record);
    let text = sanitize::line(&words);
    let text = match (tone, text.split_once(" — ")) {
        // The verdict word coloured, the sentence after it plain.
        (Some(tone), Some((verdict, rest))) => format!("{} — {rest}", paint(verdict, tone, colour)),
        (Some(tone), None) => match text.split_once(": ") {
            Some((lead, verdict)) => format!("{lead}: {}", paint(verdict, tone, colour)),
            None => paint(&text, tone, colour),
        },
        (None, _) => text,
    };
    Some(format!("{} {scope:<9} {text}", sanitize::line(time)))
}

/// The width the closing table fits: `COLUMNS` when it holds a number (kept within
/// 40..=500: neither a tiny nor a huge value is believed), else the terminal's own
/// width when stdout is one, else 80.
pub fn table_width() -> usize {
    use std::io::IsTerminal;
    let terminal = || {
        std::io::stdout()
            .is_terminal()
            .then(crossterm::terminal::size)
            .and_then(Result::ok)
            .map(|(columns, _)| columns.to_string())
    };
    width_of(std::env::var("COLUMNS").ok().or_else(terminal).as_deref())
}

/// [`table_width`] for a `COLUMNS` value: 80 when it is missing, not a number or 0,
/// else the number within 40..=500.
pub fn width_of(columns: Option<&str>) -> usize {
    columns
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|w| *w > 0)
        .map_or(80, |w| w.clamp(40, 500))
}

/// A reason column narrower than this reads badly: the reason goes under its row.
const MIN_REASON: usize = 20;

/// The closing table: one row per scenario / arm the records named (id, verdict,
/// seeds that ran, the reason in words), then the session verdict; columns aligned,
/// every line within `width` characters (see [`table_width`]) by wrapping the reason
/// only, its continuation lines under the reason column. Ids and verdicts are never
/// cut: when they leave the reason less than [`MIN_REASON`] columns, each reason goes
/// on lines of its own under its row, indented. `reasons` holds the sentences the
/// verdict lines said, by run id.
pub fn table(
    view: &View,
    reasons: &BTreeMap<String, String>,
    colour: bool,
    width: usize,
) -> Vec<String> {
    struct Row {
        id: String,
        verdict: String,
        tone: Tone,
        seeds: String,
        reason: String,
    }
    // A scenario's arms right after it, whatever order the records named them in.
    let first_of = |scenario: &str| view.runs.iter().position(|r| r.scenario == scenario);
    let mut runs: Vec<(usize, &crate::session::view::RunRow)> =
        view.runs.iter().enumerate().collect();
    runs.sort_by_key(|(at, r)| (first_of(&r.scenario), r.arm.is_some(), *at));
    let rows: Vec<Row> = runs
        .into_iter()
        .map(|(_, r)| r)
        .filter(|r| r.badge != Badge::Pending || r.not_run.is_some())
        .map(|r| {
            let (verdict, tone) = match r.badge {
                Badge::Verdict(v) => (v.to_string(), Tone::of(v)),
                Badge::Pending => ("not run".to_string(), Tone::Quiet),
                other => (format!("stopped ({})", other.label()), Tone::Concern),
            };
            let reason = reasons
                .get(&r.id)
                .cloned()
                .or_else(|| match r.badge {
                    Badge::Verdict(v) if !r.reasons.is_empty() => {
                        Some(words::sentence(&r.id, v, &r.reasons))
                    }
                    _ => None,
                })
                .or_else(|| r.not_run.clone())
                .unwrap_or_default();
            let indent = if r.arm.is_some() { "  " } else { "" };
            Row {
                id: sanitize::line(&format!("{indent}{}", r.id)),
                verdict,
                tone,
                seeds: r.seeds_started.to_string(),
                reason: sanitize::line(&reason),
            }
        })
        .collect();
    let id_w = rows
        .iter()
        .map(|r| r.id.chars().count())
        .max()
        .unwrap_or(0)
        .max("session".len());
    let verdict_w = rows
        .iter()
        .map(|r| r.verdict.chars().count())
        .max()
        .unwrap_or(0)
        .max("VERDICT".len());
    let seeds_w = "SEEDS".len();
    let lead = id_w + 2 + verdict_w + 2 + seeds_w + 2;
    // Beside its row, or (a narrow terminal) under it.
    let beside = width.saturating_sub(lead) >= MIN_REASON;
    const UNDER: &str = "    ";
    let mut out = vec![
        format!(
            "{:<id_w$}  {:<verdict_w$}  {:>seeds_w$}  {}",
            "ID",
            "VERDICT",
            "SEEDS",
            if beside { "REASON" } else { "" }
        )
        .trim_end()
        .to_string(),
    ];
    for r in &rows {
        // Padded before painting: escape codes have no width.
        let verdict = paint(&format!("{:<verdict_w$}", r.verdict), r.tone, colour);
        let row = format!("{:<id_w$}  {verdict}  {:>seeds_w$}  ", r.id, r.seeds);
        if r.reason.is_empty() {
            out.push(row.trim_end().to_string());
        } else if beside {
            let mut lines = wrap(&r.reason, width - lead).into_iter();
            out.push(format!("{row}{}", lines.next().unwrap_or_default()));
            out.extend(lines.map(|l| format!("{:lead$}{l}", "")));
        } else {
            out.push(row.trim_end().to_string());
            let room = width.saturating_sub(UNDER.len());
            out.extend(
                wrap(&r.reason, room)
                    .into_iter()
                    .map(|l| format!("{UNDER}{l}")),
            );
        }
    }
    if let Some(verdict) = &view.session_verdict {
        let tone = match verdict.as_str() {
            v if v == SessionVerdict::Done.as_str() => Tone::Good,
            v if v == SessionVerdict::Fail.as_str() => Tone::Bad,
            _ => Tone::Concern,
        };
        out.push(format!(
            "{:<id_w$}  {}",
            "session",
            paint(&sanitize::line(verdict), tone, colour)
        ));
    }
    out
}

/// A writer that goes quiet after its first failed write (a closed pipe): what
/// follows is dropped, and nothing panics.
struct Quiet<W: Write> {
    out: W,
    closed: bool,
}

impl<W: Write> Quiet<W> {
    fn say(&mut self, text: &str) {
        if self.closed {
            return;
        }
        if writeln!(self.out, "{text}")
            .and_then(|()| self.out.flush())
            .is_err()
        {
            self.closed = true;
        }
    }
}

/// Prints the records that matter as they arrive, a heartbeat after `every` of
/// silence ([`HEARTBEAT`] in real runs), and, when the journal closes, the [`table`].
/// Coloured when `colour` is on (see [`colour_for_stdout`]). Returns the writer.
pub async fn print<W: Write + Send>(
    mut rx: UnboundedReceiver<Record>,
    out: W,
    every: Duration,
    colour: bool,
) -> W {
    let started = tokio::time::Instant::now();
    let mut out = Quiet { out, closed: false };
    let mut last = String::from("session starting");
    let mut view = View::rows_only();
    let mut reasons = BTreeMap::new();
    loop {
        match tokio::time::timeout(every, rx.recv()).await {
            Ok(Some(record)) => {
                view.apply(&record);
                if let Event::Verdict(v) = &record.event
                    && let Some(verdict) = v.verdict
                {
                    reasons.insert(v.id.clone(), words::sentence(&v.id, verdict, &v.reasons));
                }
                if let Event::ArmsAggregated(a) = &record.event
                    && let Some(scenario) = &record.scope.scenario
                {
                    reasons.insert(
                        scenario.clone(),
                        sanitize::line(&format!("arms: {}", a.arms)),
                    );
                }
                if let Some(text) = line(&record, colour) {
                    out.say(&text);
                    if let Some((words, _)) = said(&record) {
                        last = sanitize::line(&format!("{words} ({})", scope_of(&record)));
                    }
                }
            }
            Ok(None) => {
                out.say("");
                for text in table(&view, &reasons, colour, table_width()) {
                    out.say(&text);
                }
                return out.out;
            }
            Err(_) => out.say(&format!(
                "heartbeat: still running after {} s (last: {last})",
                started.elapsed().as_secs()
            )),
        }
    }
}
