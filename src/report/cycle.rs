//! A dependency cycle drawn as a ring: each transaction a box (its name, process
//! and micro-ops), each dependency an arrow to the next one labelled with its kind
//! (`ww`, `wr`, `rw`, `process`, `realtime`) and its number in the list below the
//! ring, where every edge's reason is written out. A reader checks the anomaly
//! from the picture alone: follow the arrows, read why each exists.
//!
//! Hand-written SVG like the timeline: every edge is a group with a `<title>` (its
//! reason on hover) and a class naming its kind; arrowheads are drawn as polygons
//! (no `<marker>` ids to clash when several figures share one HTML page). Fixed
//! number formats: the same cycle gives the same bytes.

use std::fmt::Write as _;

use quick_xml::escape::escape;

use super::timeline::{clip, open_svg, text};
use crate::oracle::checker::Cycle;

const NODE_W: f64 = 190.0;
const LINE: f64 = 14.0;
/// Micro-ops listed per transaction box; more are counted.
const MOPS_SHOWN: usize = 6;
const MOP_CHARS: usize = 28;
/// Characters per line of the edge list under the ring.
const WRAP: usize = 120;
const TOP: f64 = 64.0;

/// The SVG of one cycle.
pub fn cycle_svg(cycle: &Cycle) -> String {
    let n = cycle.txns.len();
    if n == 0 {
        // A checker never reports an empty cycle; draw nothing rather than panic.
        return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"0\" height=\"0\"/>\n".into();
    }
    let box_h = |i: usize| {
        let shown = cycle.txns[i].mops.len().min(MOPS_SHOWN)
            + usize::from(cycle.txns[i].mops.len() > MOPS_SHOWN);
        24.0 + LINE * shown as f64
    };
    // The ring grows with the cycle so boxes never overlap.
    let radius = if n == 2 {
        150.0
    } else {
        (60.0 * n as f64).clamp(230.0, 600.0)
    };
    let width = (2.0 * radius + NODE_W + 120.0).max(900.0);
    // Two transactions face each other left and right; more start at the top.
    let start = if n == 2 {
        std::f64::consts::PI
    } else {
        -std::f64::consts::FRAC_PI_2
    };
    let ring: Vec<(f64, f64)> = (0..n)
        .map(|i| {
            let a = start + std::f64::consts::TAU * i as f64 / n as f64;
            (width / 2.0 + radius * a.cos(), radius * a.sin())
        })
        .collect();
    // The drawing's height is what the boxes and the arrows' bows reach.
    let mut reach = (f64::INFINITY, f64::NEG_INFINITY);
    for i in 0..n {
        let (_, y) = ring[i];
        let h = box_h(i);
        let bow = control(ring[i], ring[(i + 1) % n]).1;
        reach = (
            reach.0.min(y - h / 2.0).min(bow - 12.0),
            reach.1.max(y + h / 2.0).max(bow + 12.0),
        );
    }
    let shift = TOP - reach.0;
    let at: Vec<(f64, f64)> = ring.iter().map(|&(x, y)| (x, y + shift)).collect();
    let list: Vec<String> = cycle
        .hops
        .iter()
        .enumerate()
        .flat_map(|(i, hop)| {
            let (from, to) = ends(cycle, i);
            wrap(&format!(
                "{}. {from} < {to} ({}): {}",
                i + 1,
                hop.kind,
                hop.why
            ))
        })
        .collect();
    let list_top = reach.1 + shift + 30.0;
    let height = list_top + LINE * list.len() as f64 + 20.0;

    let mut svg = open_svg(width, height, "dependency-cycle");
    let title = format!(
        "{}: a dependency cycle of {} transactions",
        cycle.kind,
        cycle.txns.len()
    );
    text(&mut svg, 10.0, 22.0, 16, "start", "", &title);
    let subtitle = format!(
        "{}; follow the arrows: each is numbered and explained below",
        cycle.violates
    );
    text(&mut svg, 10.0, 40.0, 11, "start", "", &subtitle);

    for (i, hop) in cycle.hops.iter().enumerate() {
        let j = (i + 1) % n;
        let (from, to) = ends(cycle, i);
        edge(
            &mut svg,
            Edge {
                number: i + 1,
                kind: &hop.kind,
                title: &format!("{from} < {to} ({}): {}", hop.kind, hop.why),
                from: at[i % n],
                from_h: box_h(i % n),
                to: at[j],
                to_h: box_h(j),
            },
        );
    }
    for (i, txn) in cycle.txns.iter().enumerate() {
        let (x, y) = at[i];
        let h = box_h(i);
        let (left, top) = (x - NODE_W / 2.0, y - h / 2.0);
        let _ = writeln!(
            svg,
            "<g class=\"txn\"><title>{}</title>\
             <rect x=\"{left:.1}\" y=\"{top:.1}\" width=\"{NODE_W:.0}\" height=\"{h:.1}\" rx=\"6\" \
             fill=\"#f4f6fb\" stroke=\"#4a5a7a\"/>",
            escape(format!(
                "{} (process {}): {}",
                txn.name,
                txn.process,
                txn.mops.join(", ")
            ))
        );
        let head = format!("{} \u{b7} process {}", txn.name, txn.process);
        text(
            &mut svg,
            x,
            top + 16.0,
            12,
            "middle",
            "",
            &clip(&head, MOP_CHARS),
        );
        for (k, mop) in txn.mops.iter().take(MOPS_SHOWN).enumerate() {
            let y = top + 16.0 + LINE * (k + 1) as f64;
            text(&mut svg, x, y, 11, "middle", "#333333", &fit(mop));
        }
        if txn.mops.len() > MOPS_SHOWN {
            let more = format!("\u{2026} {} more", txn.mops.len() - MOPS_SHOWN);
            let y = top + 16.0 + LINE * (MOPS_SHOWN + 1) as f64;
            text(&mut svg, x, y, 11, "middle", "#666666", &more);
        }
        svg.push_str("</g>\n");
    }
    for (k, line) in list.iter().enumerate() {
        text(
            &mut svg,
            10.0,
            list_top + LINE * k as f64,
            11,
            "start",
            "",
            line,
        );
    }
    svg.push_str("</svg>\n");
    svg
}

/// The names at both ends of hop `i`.
fn ends(cycle: &Cycle, i: usize) -> (&str, &str) {
    let n = cycle.txns.len();
    let name = |k: usize| {
        cycle
            .txns
            .get(k % n.max(1))
            .map_or("?", |t| t.name.as_str())
    };
    (name(i), name(i + 1))
}

/// Colour of an edge kind: rw (the anti-dependency every non-G0 cycle needs) red.
fn colour(kind: &str) -> &'static str {
    match kind {
        "ww" => "#1f77b4",
        "wr" => "#2ca02c",
        "rw" => "#d62728",
        "realtime" => "#9467bd",
        _ => "#7f7f7f",
    }
}

struct Edge<'a> {
    number: usize,
    kind: &'a str,
    title: &'a str,
    from: (f64, f64),
    from_h: f64,
    to: (f64, f64),
    to_h: f64,
}

/// One arrow: a quadratic curve bowed outward (apart from the way back when there
/// are two boxes), from box
/// edge to box edge, with its head and a numbered label at its middle.
fn edge(svg: &mut String, e: Edge) {
    let control = control(e.from, e.to);
    let start = on_box(e.from, e.from_h, control);
    let end = on_box(e.to, e.to_h, control);
    let stroke = colour(e.kind);
    let dash = if e.kind == "rw" {
        " stroke-dasharray=\"7 4\""
    } else {
        ""
    };
    let _ = writeln!(
        svg,
        "<g class=\"hop hop-{}\"><title>{}</title>\
         <path d=\"M {:.1} {:.1} Q {:.1} {:.1} {:.1} {:.1}\" fill=\"none\" stroke=\"{stroke}\" \
         stroke-width=\"2\"{dash}/>",
        e.kind,
        escape(e.title),
        start.0,
        start.1,
        control.0,
        control.1,
        end.0,
        end.1
    );
    // The head points along the curve's last tangent (control → end).
    let (tx, ty) = (end.0 - control.0, end.1 - control.1);
    let len = (tx * tx + ty * ty).sqrt().max(1.0);
    let (ux, uy) = (tx / len, ty / len);
    let back = (end.0 - 12.0 * ux, end.1 - 12.0 * uy);
    let _ = writeln!(
        svg,
        "<polygon points=\"{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}\" fill=\"{stroke}\"/>",
        end.0,
        end.1,
        back.0 - 5.0 * uy,
        back.1 + 5.0 * ux,
        back.0 + 5.0 * uy,
        back.1 - 5.0 * ux
    );
    let mid = (
        0.25 * start.0 + 0.5 * control.0 + 0.25 * end.0,
        0.25 * start.1 + 0.5 * control.1 + 0.25 * end.1,
    );
    let label = format!("{} {}", e.number, e.kind);
    let w = 10.0 + 7.0 * label.chars().count() as f64;
    let _ = writeln!(
        svg,
        "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{w:.1}\" height=\"18\" rx=\"9\" fill=\"#ffffff\" \
         stroke=\"{stroke}\"/>",
        mid.0 - w / 2.0,
        mid.1 - 9.0
    );
    text(svg, mid.0, mid.1 + 4.0, 11, "middle", stroke, &label);
    svg.push_str("</g>\n");
}

/// The control point of the curve from `from` to `to`: the chord's middle, moved
/// to the left of the direction of travel (outward on the clockwise ring) by 0.3
/// of the chord.
fn control(from: (f64, f64), to: (f64, f64)) -> (f64, f64) {
    let (dx, dy) = (to.0 - from.0, to.1 - from.1);
    let chord = (dx * dx + dy * dy).sqrt().max(1.0);
    let bow = 0.3 * chord;
    (
        (from.0 + to.0) / 2.0 + dy / chord * bow,
        (from.1 + to.1) / 2.0 - dx / chord * bow,
    )
}

/// Where the line from a box's centre towards `toward` leaves the box (plus a gap).
fn on_box(centre: (f64, f64), h: f64, toward: (f64, f64)) -> (f64, f64) {
    let (dx, dy) = (toward.0 - centre.0, toward.1 - centre.1);
    let len = (dx * dx + dy * dy).sqrt().max(1e-9);
    let (ux, uy) = (dx / len, dy / len);
    let tx = if ux.abs() > 1e-9 {
        (NODE_W / 2.0) / ux.abs()
    } else {
        f64::INFINITY
    };
    let ty = if uy.abs() > 1e-9 {
        (h / 2.0) / uy.abs()
    } else {
        f64::INFINITY
    };
    let t = tx.min(ty) + 4.0;
    (centre.0 + ux * t, centre.1 + uy * t)
}

/// A micro-op cut to the box: a long read keeps its verb, key and the end of the
/// list (the latest elements, the ones the edges talk about).
fn fit(mop: &str) -> String {
    let chars: Vec<char> = mop.chars().collect();
    if chars.len() <= MOP_CHARS {
        return mop.to_string();
    }
    match chars.iter().position(|&c| c == '[') {
        Some(open) if open + 8 < MOP_CHARS => {
            let keep = MOP_CHARS - open - 3;
            let head: String = chars[..=open].iter().collect();
            let from = chars.len() - keep;
            let mut tail: String = chars[from..].iter().collect();
            // Whole elements only: drop a number the cut went through.
            if chars[from - 1] != ' ' {
                tail = tail
                    .split_once(' ')
                    .map_or(tail.clone(), |(_, rest)| rest.to_string());
            }
            format!("{head}\u{2026} {}", tail.trim_start())
        }
        _ => clip(mop, MOP_CHARS),
    }
}

/// Splits a long explanation into lines of at most [`WRAP`] characters at spaces.
fn wrap(s: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in s.split(' ') {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > WRAP {
            lines.push(std::mem::take(&mut line));
            line.push_str("    ");
        } else if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}
