//! The anomaly timeline: a linearizability counterexample drawn as Porcupine and
//! Knossos draw theirs — one row per client, each op a bar from its call to its
//! return — with the deepest linearizable prefix marked (the last ops of it
//! numbered in the order they take effect), the op that cannot take effect
//! highlighted, the return no order gets past as a line, and the seed's fault
//! windows as rows of their own.
//!
//! Idle time is compressed so a few thousand ops stay readable: the time axis is
//! the sorted instants at which something happens (a call, a return, a window's
//! edge); the space between two of them follows their real distance, but never
//! less than a few pixels (so every instant stays apart) and never more than a cap:
//! a small one where no op is in flight (idle time, marked `≈` on the axis when it
//! was several times longer), a larger one inside an op, so ops keep their width.
//!
//! Written as SVG by hand rather than through plotters: every op carries a `<title>`
//! (its details on hover in a browser) and a class naming its role, which the HTML
//! report's test counts. Every number has a fixed format: the same input gives the
//! same bytes.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use quick_xml::escape::escape;

use crate::oracle::checker::Stuck;
use crate::oracle::history::Op;
use crate::oracle::series::Window;

/// Most ops drawn; beyond it, the latest before the stuck op's return.
const MAX_DRAWN: usize = 4000;
/// Ops called after the stuck op returned that are drawn, for context.
const CONTEXT_AFTER: usize = 24;
/// Width of the row labels.
const LEFT: f64 = 120.0;
const RIGHT: f64 = 40.0;
const TOP: f64 = 86.0;
const ROW: f64 = 26.0;
const BAR: f64 = 16.0;
/// Bounds of the space between two consecutive instants, px.
const MIN_GAP: f64 = 4.0;
/// Cap of a space where no op is in flight (idle time)…
const MAX_GAP: f64 = 28.0;
/// …and of one inside some op's interval, so an op keeps its width.
const MAX_BUSY_GAP: f64 = 240.0;
/// A pause drawn at the cap is marked `≈` only when it was at least this many
/// times longer: a little compression needs no mark.
const MARKED: f64 = 3.0;
/// A typical (median) op is drawn about this wide…
const TYPICAL_OP: f64 = 48.0;
/// …unless the drawing would be wider than this; then narrower, down to the
/// smallest gaps (a few thousand ops stay a few screens wide).
const MAX_WIDTH: f64 = 24_000.0;
const MIN_GAP_CROWDED: f64 = 2.0;
/// The last ops of the prefix get their place in it written above them.
const NUMBERED: usize = 8;

/// The timeline of one counterexample of `ops` (the whole history the check read),
/// with `windows` (seconds from the history's first invoke, as in the series).
pub fn anomaly_svg(ops: &[Op], cx: &Stuck, windows: &[Window]) -> String {
    let origin = ops.iter().map(|o| o.invoke_ts).min().unwrap_or(0);
    let (drawn, before, after) = drawn_ops(ops, cx);
    let end_of = |i: usize| ops[i].complete_ts;
    // Every instant something happens at, in ns since the history's origin.
    let last_seen = drawn
        .iter()
        .map(|&i| end_of(i).unwrap_or(ops[i].invoke_ts))
        .max()
        .unwrap_or(origin);
    let fault_ns: Vec<(u64, u64)> = windows
        .iter()
        .map(|w| (origin + secs_to_ns(w.from_s), origin + secs_to_ns(w.to_s)))
        .collect();
    let mut instants: Vec<u64> = drawn
        .iter()
        .flat_map(|&i| [Some(ops[i].invoke_ts), end_of(i)])
        .flatten()
        .chain(fault_ns.iter().flat_map(|&(a, b)| [a, b]))
        .collect();
    instants.sort_unstable();
    instants.dedup();
    let busy = busy_gaps(&instants, ops, &drawn);
    let axis = Axis::new(&instants, &busy, typical_duration(ops, &drawn));
    // An op that never returned reaches past the last instant.
    let open_end = axis.width + 16.0;

    let rows = client_rows(ops, &drawn);
    let height = TOP + ROW * (rows.len() + windows.len()) as f64 + 60.0;
    let width = LEFT + open_end + RIGHT;
    let in_prefix: BTreeMap<usize, usize> =
        cx.prefix.iter().enumerate().map(|(k, &i)| (i, k)).collect();
    let blocked = &ops[cx.blocked];

    let mut svg = open_svg(width, height, "anomaly-timeline");
    let title = format!(
        "Not linearizable on {}: op {} cannot take effect",
        cx.place, blocked.op_id
    );
    text(&mut svg, 10.0, 22.0, 16, "start", "", &title);
    let mut subtitle = format!(
        "deepest linearizable prefix: {} of {} ops, leaving the value {}; idle time compressed (\u{2248} on the axis)",
        cx.prefix.len(),
        cx.ops.len(),
        clip(&cx.state, 24)
    );
    if before + after > 0 {
        let _ = write!(
            subtitle,
            "; {before} earlier and {after} later ops not drawn"
        );
    }
    text(&mut svg, 10.0, 40.0, 11, "start", "", &subtitle);
    legend(&mut svg, 10.0, 62.0);

    // Rows: clients, then one per fault window.
    for (r, name) in rows.keys().enumerate() {
        let y = TOP + ROW * r as f64;
        row(&mut svg, y, width, r, &format!("client {}", clip(name, 12)));
    }
    for (k, w) in windows.iter().enumerate() {
        let r = rows.len() + k;
        let y = TOP + ROW * r as f64;
        row(
            &mut svg,
            y,
            width,
            r,
            &format!("fault {}", clip(&w.fault, 12)),
        );
        let (fill, stroke, state) = match w.proven {
            Some(true) => ("#c6dbef", "#1f77b4", "proven"),
            Some(false) => ("#e0e0e0", "#7f7f7f", "NOT proven"),
            None => ("#f2f2c0", "#bcbd22", "undecided"),
        };
        let (a, b) = fault_ns[k];
        let (x0, x1) = (axis.x(a), axis.x(b).max(axis.x(a) + 2.0));
        let _ = write!(
            svg,
            "<g class=\"fault-window\"><title>{}</title>",
            escape(format!(
                "fault {} ({state}): {:.3} s to {:.3} s",
                w.fault, w.from_s, w.to_s
            ))
        );
        let _ = writeln!(
            svg,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{BAR:.0}\" fill=\"{fill}\" \
             stroke=\"{stroke}\"/></g>",
            LEFT + x0,
            y + (ROW - BAR) / 2.0,
            x1 - x0
        );
    }

    // The return no order of the ops before it gets past.
    if let Some(ret) = blocked.complete_ts {
        let x = LEFT + axis.x(ret);
        let bottom = TOP + ROW * (rows.len() + windows.len()) as f64;
        let _ = writeln!(
            svg,
            "<line class=\"stuck-return\" x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{bottom:.1}\" \
             stroke=\"#d62728\" stroke-width=\"1.5\" stroke-dasharray=\"5 3\"/>",
            TOP - 4.0
        );
    }

    for &i in &drawn {
        let op = &ops[i];
        let Some(r) = rows.get_index(&op.process) else {
            continue;
        };
        let y = TOP + ROW * r as f64 + (ROW - BAR) / 2.0;
        let x0 = axis.x(op.invoke_ts);
        let x1 = op.complete_ts.map_or(open_end, |t| axis.x(t));
        let w = (x1 - x0).max(3.0);
        let place = in_prefix.get(&i).copied();
        let (class, fill, stroke, stroke_width) = if i == cx.blocked {
            ("op blocked", "#f4a6a6", "#b00000", 2.5)
        } else if place.is_some() {
            ("op prefix", "#c7e9c0", "#2ca02c", 1.0)
        } else if op.complete_ts.is_none() {
            ("op unknown", "#ffe0b2", "#ff7f0e", 1.0)
        } else {
            ("op other", "#eeeeee", "#999999", 1.0)
        };
        let dash = if op.complete_ts.is_none() {
            " stroke-dasharray=\"4 2\""
        } else {
            ""
        };
        let _ = write!(
            svg,
            "<g class=\"{class}\"><title>{}</title>",
            escape(describe(op, place, cx.prefix.len(), origin))
        );
        let _ = write!(
            svg,
            "<rect x=\"{:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{BAR:.0}\" rx=\"2\" \
             fill=\"{fill}\" stroke=\"{stroke}\" stroke-width=\"{stroke_width}\"{dash}/>",
            LEFT + x0
        );
        let label = short(op);
        // About 6.5 px per character at 10 px: a label that does not fit is left out
        // (the title still carries it).
        if w >= label.chars().count() as f64 * 6.5 + 6.0 {
            text(
                &mut svg,
                LEFT + x0 + w / 2.0,
                y + BAR - 4.0,
                10,
                "middle",
                "",
                &label,
            );
        } else if i == cx.blocked {
            // The one op every reader looks for keeps its label, beside the bar.
            text(
                &mut svg,
                LEFT + x0 + w + 3.0,
                y + BAR - 4.0,
                10,
                "start",
                "#b00000",
                &label,
            );
        }
        if let Some(k) = place
            && k + NUMBERED >= cx.prefix.len()
        {
            text(
                &mut svg,
                LEFT + x0 + 1.0,
                y - 1.0,
                8,
                "start",
                "#2ca02c",
                &format!("#{}", k + 1),
            );
        }
        svg.push_str("</g>\n");
    }

    // The axis: real seconds at spaced ticks, `≈` where a pause was compressed.
    let axis_y = TOP + ROW * (rows.len() + windows.len()) as f64 + 8.0;
    let _ = writeln!(
        svg,
        "<line x1=\"{LEFT:.0}\" y1=\"{axis_y:.1}\" x2=\"{:.1}\" y2=\"{axis_y:.1}\" stroke=\"#000000\"/>",
        LEFT + open_end
    );
    let mut last_tick = f64::NEG_INFINITY;
    for (k, &t) in instants.iter().enumerate() {
        let x = axis.xs[k];
        if x - last_tick >= 90.0 {
            last_tick = x;
            let _ = writeln!(
                svg,
                "<line x1=\"{0:.1}\" y1=\"{axis_y:.1}\" x2=\"{0:.1}\" y2=\"{1:.1}\" stroke=\"#000000\"/>",
                LEFT + x,
                axis_y + 5.0
            );
            text(
                &mut svg,
                LEFT + x,
                axis_y + 18.0,
                10,
                "middle",
                "",
                &format!("{:.3} s", t.saturating_sub(origin) as f64 / 1e9),
            );
        }
    }
    for &k in &axis.breaks {
        let x = LEFT + (axis.xs[k] + axis.xs[k + 1]) / 2.0;
        let _ = write!(
            svg,
            "<g class=\"break\"><title>idle time compressed</title>"
        );
        text(
            &mut svg,
            x,
            axis_y + 4.0,
            12,
            "middle",
            "#555555",
            "\u{2248}",
        );
        svg.push_str("</g>\n");
    }
    text(
        &mut svg,
        LEFT,
        axis_y + 34.0,
        10,
        "start",
        "#555555",
        &format!(
            "seconds from the first invoke; the last op drawn returned at {:.3} s",
            last_seen.saturating_sub(origin) as f64 / 1e9
        ),
    );
    svg.push_str("</svg>\n");
    svg
}

/// The ops to draw (history indices in call order), and how many of the object's
/// ops before and after them are left out. Every op called before the stuck op
/// returned could have been ordered before it, so those are drawn (the last
/// [`MAX_DRAWN`] of them); of the ops called later, which cannot change the
/// counterexample, only the first [`CONTEXT_AFTER`].
fn drawn_ops(ops: &[Op], cx: &Stuck) -> (Vec<usize>, usize, usize) {
    let mut all: Vec<usize> = cx.ops.iter().copied().filter(|&i| i < ops.len()).collect();
    all.sort_by_key(|&i| (ops[i].invoke_ts, i));
    let stuck_ret = ops
        .get(cx.blocked)
        .and_then(|o| o.complete_ts)
        .unwrap_or(u64::MAX);
    let relevant = all.partition_point(|&i| ops[i].invoke_ts <= stuck_ret);
    let end = (relevant + CONTEXT_AFTER).min(all.len());
    let start = end.saturating_sub(MAX_DRAWN);
    let after = all.len() - end;
    (all[start..end].to_vec(), start, after)
}

/// For each space between two consecutive instants, whether some drawn op that
/// returned is in flight across it (an op that never returned does not count: it
/// would keep everything after its call from being compressed).
fn busy_gaps(instants: &[u64], ops: &[Op], drawn: &[usize]) -> Vec<bool> {
    let mut delta = vec![0i64; instants.len()];
    for &i in drawn {
        let Some(ret) = ops[i].complete_ts else {
            continue;
        };
        if let (Ok(a), Ok(b)) = (
            instants.binary_search(&ops[i].invoke_ts),
            instants.binary_search(&ret),
        ) {
            delta[a] += 1;
            delta[b] -= 1;
        }
    }
    let mut open = 0;
    delta
        .iter()
        .map(|d| {
            open += d;
            open > 0
        })
        .collect()
}

/// The median duration of the drawn ops that returned (ns, at least 1).
fn typical_duration(ops: &[Op], drawn: &[usize]) -> f64 {
    let mut d: Vec<u64> = drawn
        .iter()
        .filter_map(|&i| Some(ops[i].complete_ts?.saturating_sub(ops[i].invoke_ts)))
        .collect();
    d.sort_unstable();
    d.get(d.len() / 2).map_or(1.0, |&n| n.max(1) as f64)
}

/// The compressed time axis: `xs[k]` is where `instants[k]` is drawn (px from the
/// plot's left edge); `breaks[k]` marks a pause between instants k and k + 1 drawn
/// shorter than it was.
struct Axis {
    instants: Vec<u64>,
    xs: Vec<f64>,
    breaks: Vec<usize>,
    width: f64,
}

impl Axis {
    fn new(instants: &[u64], busy: &[bool], typical_ns: f64) -> Axis {
        let mut ns_per_px = typical_ns / TYPICAL_OP;
        let mut axis = Axis::at(instants, busy, ns_per_px, MIN_GAP);
        // Too wide: shrink the scale by the excess (the floor and the rounding keep
        // some of it, so a few times over), never below the floor.
        for _ in 0..4 {
            if axis.width <= MAX_WIDTH {
                break;
            }
            ns_per_px *= axis.width / MAX_WIDTH;
            axis = Axis::at(instants, busy, ns_per_px, MIN_GAP_CROWDED);
        }
        axis
    }

    fn at(instants: &[u64], busy: &[bool], ns_per_px: f64, min_gap: f64) -> Axis {
        let mut xs = Vec::with_capacity(instants.len());
        let mut breaks = Vec::new();
        let mut x = 8.0;
        for (k, &t) in instants.iter().enumerate() {
            if k > 0 {
                let real = (t - instants[k - 1]) as f64 / ns_per_px;
                let in_flight = busy.get(k - 1).copied().unwrap_or(false);
                let cap = if in_flight { MAX_BUSY_GAP } else { MAX_GAP };
                if !in_flight && real > MAX_GAP * MARKED {
                    breaks.push(k - 1);
                }
                // Whole pixels: the same input, the same bytes.
                x += real.clamp(min_gap, cap).round();
            }
            xs.push(x);
        }
        Axis {
            instants: instants.to_vec(),
            width: x + 8.0,
            xs,
            breaks,
        }
    }

    fn x(&self, t: u64) -> f64 {
        match self.instants.binary_search(&t) {
            Ok(k) => self.xs[k],
            // Between two instants (or outside all): the nearer drawn one.
            Err(k) => self.xs.get(k).or(self.xs.last()).copied().unwrap_or(0.0),
        }
    }
}

/// Client name → row, in natural order (numbers by value, then names).
struct Rows(BTreeMap<(u8, u64, String), String>);

impl Rows {
    fn keys(&self) -> impl Iterator<Item = &String> {
        self.0.values()
    }

    fn len(&self) -> usize {
        self.0.len()
    }

    fn get_index(&self, name: &str) -> Option<usize> {
        self.0.values().position(|n| n == name)
    }
}

fn client_rows(ops: &[Op], drawn: &[usize]) -> Rows {
    let mut rows = BTreeMap::new();
    for &i in drawn {
        let p = &ops[i].process;
        let key = match p.parse::<u64>() {
            Ok(n) => (0, n, String::new()),
            Err(_) => (1, 0, p.to_string()),
        };
        rows.entry(key).or_insert_with(|| p.to_string());
    }
    Rows(rows)
}

/// The three swatches of an op's role and the stuck-return line.
fn legend(svg: &mut String, x: f64, y: f64) {
    let entries = [
        (
            "#c7e9c0",
            "#2ca02c",
            "in the deepest linearizable prefix (#n: its place)",
        ),
        ("#f4a6a6", "#b00000", "cannot take effect"),
        ("#eeeeee", "#999999", "not linearized"),
        ("#ffe0b2", "#ff7f0e", "never returned"),
    ];
    let mut at = x;
    for (fill, stroke, label) in entries {
        let _ = write!(
            svg,
            "<rect x=\"{at:.1}\" y=\"{:.1}\" width=\"14\" height=\"10\" fill=\"{fill}\" stroke=\"{stroke}\"/>",
            y - 9.0
        );
        text(svg, at + 18.0, y, 10, "start", "", label);
        at += 26.0 + label.chars().count() as f64 * 6.0;
    }
    let _ = write!(
        svg,
        "<line x1=\"{at:.1}\" y1=\"{0:.1}\" x2=\"{1:.1}\" y2=\"{0:.1}\" stroke=\"#d62728\" \
         stroke-width=\"1.5\" stroke-dasharray=\"5 3\"/>",
        y - 4.0,
        at + 14.0
    );
    text(
        svg,
        at + 18.0,
        y,
        10,
        "start",
        "",
        "the return no order gets past",
    );
}

/// A row's band (every other one shaded) and its label left of the axis.
fn row(svg: &mut String, y: f64, width: f64, r: usize, label: &str) {
    if r % 2 == 1 {
        let _ = writeln!(
            svg,
            "<rect x=\"0\" y=\"{y:.1}\" width=\"{width:.0}\" height=\"{ROW:.0}\" fill=\"#f7f7f7\"/>"
        );
    }
    text(svg, LEFT - 8.0, y + ROW / 2.0 + 4.0, 11, "end", "", label);
}

/// A hand-drawn figure's `<svg>` root on a white background, `class` naming it.
pub(super) fn open_svg(width: f64, height: f64, class: &str) -> String {
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" \
         viewBox=\"0 0 {width:.0} {height:.0}\" font-family=\"DejaVu Sans, sans-serif\" \
         class=\"{class}\">"
    );
    let _ = writeln!(
        svg,
        "<rect width=\"{width:.0}\" height=\"{height:.0}\" fill=\"#ffffff\"/>"
    );
    svg
}

pub(super) fn text(
    svg: &mut String,
    x: f64,
    y: f64,
    size: u32,
    anchor: &str,
    fill: &str,
    body: &str,
) {
    let fill = if fill.is_empty() { "#000000" } else { fill };
    let _ = writeln!(
        svg,
        "<text x=\"{x:.1}\" y=\"{y:.1}\" font-size=\"{size}\" text-anchor=\"{anchor}\" fill=\"{fill}\">{}</text>",
        escape(body)
    );
}

/// `r 3`, `w 4`, `cas 1→2`: what a bar is labelled with.
fn short(op: &Op) -> String {
    let value = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(parts) if parts.len() == 2 => {
            format!("{}\u{2192}{}", compact(&parts[0]), compact(&parts[1]))
        }
        other => compact(other),
    };
    let (verb, v) = match op.op_type.as_str() {
        "read" | "get" => ("r", &op.output),
        "write" | "put" => ("w", &op.input),
        "append" => ("a", &op.input),
        other => (other, &op.input),
    };
    clip(&format!("{verb} {}", value(v)), 18)
}

fn compact(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The hover text: the op, its client, its interval and its place in the prefix.
fn describe(op: &Op, place: Option<usize>, prefix: usize, origin: u64) -> String {
    let at = |t: u64| format!("{:.6} s", t.saturating_sub(origin) as f64 / 1e9);
    let ended = match (op.complete_ts, op.error.as_deref()) {
        (Some(t), Some(e)) => format!("failed at {} ({e})", at(t)),
        (Some(t), None) => format!("returned at {}", at(t)),
        (None, _) => "never returned (its effect is unknown)".to_string(),
    };
    let role = match place {
        Some(k) => format!("; takes effect {} of {prefix} in the deepest prefix", k + 1),
        None => String::new(),
    };
    format!(
        "op {} (client {}): {} input {} output {}; called at {}, {ended}{role}",
        op.op_id,
        op.process,
        op.op_type,
        compact(&op.input),
        compact(&op.output),
        at(op.invoke_ts)
    )
}

pub(super) fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let kept: String = s.chars().take(max.saturating_sub(1)).collect();
        format!("{kept}\u{2026}")
    }
}

fn secs_to_ns(s: f64) -> u64 {
    (s.max(0.0) * 1e9).round() as u64
}
