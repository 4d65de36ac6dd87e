//! The figures of one seed drawn from a recorded history (demo D3's first seed: a
//! pause of a spare node, proven, then the primary killed, not proven): the same
//! bytes on every render (SVG and PNG), one shaded rectangle per fault window,
//! styled by its proof, and a legend entry naming each fault.

use crate::common;
use faultline::oracle::history::{Op, parse_jsonl};
use faultline::oracle::series::{self, FaultMark, Series};
use faultline::report::figures::{self, latency_svg, quantiles_svg, throughput_svg};

use crate::common::{D3_HISTORY as HISTORY, d3_marks as marks};

/// The shading of a proven window, of one not proven, and of an undecided one (fill
/// colour and opacity as plotters writes them); the legend swatches are darker.
const PROVEN_SHADE: &str = r##"opacity="0.18" fill="#1F77B4""##;
const NOT_PROVEN_SHADE: &str = r##"opacity="0.18" fill="#7F7F7F""##;
const UNDECIDED_SHADE: &str = r##"opacity="0.18" fill="#BCBD22""##;

fn recorded(marks: &[FaultMark]) -> (Vec<Op>, Series) {
    let source = std::fs::read_to_string(HISTORY).expect("fixture history");
    let history = parse_jsonl(HISTORY, &source).expect("history");
    let series = series::of_history(&history.ops, marks);
    (history.ops, series)
}

fn every_figure(ops: &[Op], series: &Series) -> Vec<(&'static str, String)> {
    figures::render_all(ops, series).expect("figures render")
}

#[test]
fn the_same_history_renders_byte_identical_figures() {
    let (ops, series) = recorded(&marks());
    let first = every_figure(&ops, &series);
    let second = every_figure(&ops, &series);
    assert_eq!(first, second);
    let names: Vec<&str> = first.iter().map(|f| f.0).collect();
    assert_eq!(names, ["throughput", "latency", "quantiles"]);
    for (name, svg) in &first {
        assert!(svg.starts_with("<svg"), "{name}: {svg:.200}");
        assert!(svg.trim_end().ends_with("</svg>"), "{name}");
        insta::assert_snapshot!(format!("report_figures_{name}"), svg);
    }
}

#[test]
fn each_fault_window_is_one_shaded_rect_styled_by_its_proof_with_a_legend_entry() {
    let (ops, series) = recorded(&marks());
    assert_eq!(series.windows.len(), 2, "{:?}", series.windows);
    for (name, svg) in [
        ("throughput", throughput_svg(&series).expect("throughput")),
        (
            "latency",
            latency_svg(&ops, &series.windows).expect("latency"),
        ),
        (
            "quantiles",
            quantiles_svg(&ops, &series).expect("quantiles"),
        ),
    ] {
        assert_eq!(svg.matches(PROVEN_SHADE).count(), 1, "{name}: {svg}");
        assert_eq!(svg.matches(NOT_PROVEN_SHADE).count(), 1, "{name}: {svg}");
        assert_eq!(svg.matches(UNDECIDED_SHADE).count(), 0, "{name}: {svg}");
        assert_eq!(
            svg.matches("fault pause-spare (proven)").count(),
            1,
            "{name}"
        );
        assert_eq!(
            svg.matches("fault kill-primary (NOT proven)").count(),
            1,
            "{name}"
        );
    }
}

#[test]
fn an_undecided_or_unnamed_fault_is_shaded_apart_and_named_by_its_epoch() {
    let undecided = [FaultMark {
        epoch: 1,
        fault: "pause-spare".into(),
        proven: None,
    }];
    let (ops, series) = recorded(&undecided);
    let svg = throughput_svg(&series).expect("throughput");
    assert_eq!(svg.matches(UNDECIDED_SHADE).count(), 2, "{svg}");
    assert_eq!(svg.matches(PROVEN_SHADE).count(), 0, "{svg}");
    assert!(svg.contains("fault pause-spare (undecided)"), "{svg}");
    // Epoch 2 has no mark: its window is still drawn, under its epoch.
    assert!(svg.contains("fault epoch 2 (undecided)"), "{svg}");
    let latency = latency_svg(&ops, &series.windows).expect("latency");
    assert_eq!(latency.matches(UNDECIDED_SHADE).count(), 2);
}

#[test]
fn latency_points_are_one_per_op_coloured_by_outcome() {
    let (ops, series) = recorded(&marks());
    let svg = latency_svg(&ops, &series.windows).expect("latency");
    let ok = ops.iter().filter(|o| o.is_acked()).count();
    let fail = ops.iter().filter(|o| o.is_failed()).count();
    assert!(ok > 0 && fail > 0, "the fixture has both outcomes");
    // One circle per op plus the legend's marker of each outcome.
    let circles = |fill: &str| {
        svg.lines()
            .filter(|l| l.starts_with("<circle") && l.contains(fill))
            .count()
    };
    assert_eq!(circles(r##"fill="#2CA02C""##), ok + 1, "{svg}");
    assert_eq!(circles(r##"fill="#D62728""##), fail + 1, "{svg}");
    assert!(svg.contains("timeout / unknown"));
}

#[test]
fn the_pngs_are_the_same_bytes_on_every_render_and_show_the_shading() {
    let (ops, series) = recorded(&marks());
    let first = figures::render_all_png(&ops, &series).expect("pngs");
    let second = figures::render_all_png(&ops, &series).expect("pngs");
    assert_eq!(first, second);
    // 900x420 RGB with the proven window's blue mixed into the white background.
    let shade: Vec<u8> = [0x1f_u8, 0x77, 0xb4]
        .iter()
        .map(|c| (255.0 - (255.0 - f64::from(*c)) * 0.18).round() as u8)
        .collect();
    for (name, png) in &first {
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "{name}");
        let decoder = png::Decoder::new(png.as_slice());
        let mut reader = decoder.read_info().expect("png header");
        let mut pixels = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut pixels).expect("png frame");
        assert_eq!((info.width, info.height), (900, 420), "{name}");
        let near = |p: &[u8]| p.iter().zip(&shade).all(|(a, b)| a.abs_diff(*b) <= 3);
        assert!(
            pixels.chunks(3).any(near),
            "{name}: no pixel of the proven window's shading"
        );
        // Text is drawn: black pixels in the title row, none from a system font.
        let title_row = &pixels[15 * 900 * 3..16 * 900 * 3];
        assert!(
            title_row.chunks(3).any(|p| p == [0, 0, 0]),
            "{name}: no title text"
        );
    }
}

#[test]
fn a_history_with_no_op_still_draws_empty_figures() {
    let series = series::of_history(&[], &[]);
    let figures = every_figure(&[], &series);
    assert_eq!(figures.len(), 3);
    for (name, svg) in figures {
        assert!(svg.contains("</svg>"), "{name}");
        assert!(
            !svg.contains("fault "),
            "{name}: no window, no legend entry"
        );
    }
}

/// The demo run the suite shares wrote each seed's figures beside its metrics: D3's
/// first seed (a spare paused, the primary killed) shades both windows, named.
#[test]
fn the_demo_writes_every_seeds_figures_beside_its_metrics() {
    let session = common::session_of(&common::demo_run().out);
    let metrics = session.join("metrics/D3");
    let seeds: Vec<String> = std::fs::read_dir(&metrics)
        .expect("D3 metrics")
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".json").map(str::to_owned)
        })
        .collect();
    assert!(!seeds.is_empty(), "no D3 metrics in {}", metrics.display());
    for label in &seeds {
        for name in ["throughput", "latency", "quantiles"] {
            let path = session.join(format!("figures/D3/{label}-{name}.svg"));
            let svg = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(svg.trim_end().ends_with("</svg>"), "{}", path.display());
            let path = path.with_extension("png");
            let png = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(png.starts_with(b"\x89PNG"), "{}", path.display());
        }
    }
    let latency = std::fs::read_to_string(session.join("figures/D3/seed-1-latency.svg"))
        .expect("D3 seed-1 latency");
    let shaded = [PROVEN_SHADE, NOT_PROVEN_SHADE, UNDECIDED_SHADE]
        .iter()
        .map(|s| latency.matches(s).count())
        .sum::<usize>();
    assert_eq!(shaded, 2, "{latency}");
    assert!(latency.contains("fault pause-spare ("), "{latency}");
    assert!(latency.contains("fault kill-primary ("), "{latency}");
    // D3 fails: the writes its finding names as lost are marked after the kill…
    let verdicts: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(session.join("verdicts.json")).expect("verdicts.json"),
    )
    .expect("json");
    let d3 = verdicts["scenarios"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["id"] == "D3"))
        .expect("D3");
    let lost = d3["finding"]["anomalies_total"]
        .as_u64()
        .expect("anomalies_total");
    assert!(lost > 0, "{d3}");
    let marks = std::fs::read_to_string(session.join("figures/D3/seed-1-lost-acks.svg"))
        .expect("D3 seed-1 lost acks");
    assert!(
        marks.contains(&format!("lost: {lost} acknowledged writes")),
        "{marks:.600}"
    );
    assert!(marks.contains("fault kill-primary ("), "{marks:.600}");
    // D8 fails linearizability (n2 serves reads half a second behind): its
    // counterexample is drawn as a timeline, the stale read marked, with its two
    // clients (0 writes on the primary, 1 reads on n2).
    let timeline = std::fs::read_to_string(session.join("figures/D8/seed-1-anomaly-1.svg"))
        .expect("D8 seed-1 anomaly timeline");
    assert_eq!(timeline.matches("class=\"op blocked\"").count(), 1);
    let stuck = timeline
        .split("class=\"op blocked\"><title>")
        .nth(1)
        .expect("the stuck op");
    assert!(stuck.contains("(client 1): read"), "{stuck:.300}");
    for row in [">client 0</text>", ">client 1</text>"] {
        assert!(timeline.contains(row), "{row}");
    }
    // …and D2's pause is shaded on every one of its seeds' figures, proven.
    for seed in 1..=3 {
        let path = session.join(format!("figures/D2/seed-{seed}-throughput.svg"));
        let svg = std::fs::read_to_string(&path).expect("D2 throughput");
        assert_eq!(svg.matches(PROVEN_SHADE).count(), 1, "{}", path.display());
    }
}

/// A Knossos-style register history: `clients` clients take turns to write the next
/// value and read it back (op i takes effect inside its interval), with `pause_ns`
/// of idle time every `burst` ops, and the read at `stale` answering a value two
/// writes old. Not linearizable, and only because of that read.
fn register_history(
    ops: usize,
    clients: u64,
    burst: usize,
    pause_ns: u64,
    stale: usize,
) -> Vec<Op> {
    use crate::support::ops::op;
    use serde_json::{Value, json};
    let mut out = Vec::with_capacity(ops);
    let mut t = 1_000_000u64;
    for i in 0..ops {
        if i > 0 && i % burst == 0 {
            t += pause_ns;
        }
        let id = i as u64;
        let p = id % clients;
        // Writes of v = i / 2 on even ops, its read-back on odd ones.
        let v = (i / 2) as i64;
        let (call, ret) = (t, t + 1_500_000);
        t += 1_000_000;
        if i % 2 == 0 {
            out.push(op(
                id,
                p,
                call,
                Some(ret),
                "write",
                "r",
                json!(v),
                Value::Null,
            ));
        } else {
            let seen = if i == stale { v - 2 } else { v };
            out.push(op(
                id,
                p,
                call,
                Some(ret),
                "read",
                "r",
                Value::Null,
                json!(seen),
            ));
        }
    }
    out
}

fn timeline_of(ops: &[Op], windows: &[faultline::oracle::series::Window]) -> String {
    use faultline::oracle::linearizability::{Limits, Model, check};
    let report = check(
        &crate::support::ops::history(ops.to_vec()),
        Model::Register,
        Limits::default(),
    );
    let cx = report
        .anomalies
        .iter()
        .find_map(|a| a.counterexample.as_deref().and_then(|c| c.stuck()))
        .expect("a stuck search");
    faultline::report::timeline::anomaly_svg(ops, cx, windows)
}

#[test]
fn an_anomaly_timeline_is_the_same_bytes_every_time_and_marks_the_stuck_op() {
    let ops = register_history(24, 3, 8, 400_000_000, 15);
    let marks = [FaultMark {
        epoch: 1,
        fault: "pause-n3".into(),
        proven: Some(true),
    }];
    let mut ops_in_fault = ops.clone();
    for op in &mut ops_in_fault[8..16] {
        op.fault_epoch = Some(1);
    }
    let windows = series::of_history(&ops_in_fault, &marks).windows;
    assert_eq!(windows.len(), 1);
    let svg = timeline_of(&ops_in_fault, &windows);
    assert_eq!(svg, timeline_of(&ops_in_fault, &windows));
    assert_eq!(svg.matches("class=\"op ").count(), 24);
    assert_eq!(svg.matches("class=\"op blocked\"").count(), 1);
    // Op 15 reads 5 after 6 was written and returned: ops 0–14 (and perhaps the
    // write overlapping the read) are the deepest prefix.
    let prefix = svg.matches("class=\"op prefix\"").count();
    assert!((15..=16).contains(&prefix), "{prefix}: {svg}");
    assert!(svg.contains("op 15 cannot take effect"), "{svg:.400}");
    assert_eq!(svg.matches("class=\"fault-window\"").count(), 1);
    assert!(svg.contains(">fault pause-n3</text>"));
    // The two pauses of 400 ms between bursts are compressed and marked.
    assert_eq!(svg.matches("class=\"break\"").count(), 2, "{svg}");
    insta::assert_snapshot!("report_figures_anomaly_timeline", svg);
}

#[test]
fn a_timeline_of_thousands_of_ops_compresses_idle_time() {
    // 3,000 ops of 3 ms by five clients, a 5 s pause after every 250: uncompressed at
    // the drawing's scale (a typical op ~48 px) the pauses alone would be ~900,000 px.
    let ops = register_history(3000, 5, 250, 5_000_000_000, 2501);
    let svg = timeline_of(&ops, &[]);
    // The stale read is op 2501: the ops called before it returned, and 24 after.
    let drawn = svg.matches("class=\"op ").count();
    assert!((2502..=2503 + 24).contains(&drawn), "{drawn}");
    assert!(
        svg.contains(&format!(
            "; 0 earlier and {} later ops not drawn",
            3000 - drawn
        )),
        "{svg:.800}"
    );
    assert_eq!(svg.matches("class=\"op blocked\"").count(), 1);
    let prefix = svg.matches("class=\"op prefix\"").count();
    assert!((2501..=2502).contains(&prefix), "{prefix}");
    assert_eq!(svg.matches("class=\"break\"").count(), 10);
    let width: f64 = svg
        .split("width=\"")
        .nth(1)
        .and_then(|w| w.split('"').next())
        .and_then(|w| w.parse().ok())
        .expect("width");
    // Each op's 3 ms spans its own call, return and its neighbours': at least a few
    // pixels per instant, at most the cap per pause.
    assert!((6_000.0..=25_000.0).contains(&width), "width {width}");
    // Every client has its row, each row's label once.
    for c in 0..5 {
        assert_eq!(svg.matches(&format!(">client {c}</text>")).count(), 1);
    }
}

#[test]
fn lost_acked_writes_are_marked_on_the_time_axis_against_the_faults() {
    use faultline::oracle::no_lost_ack;
    let (ops, series) = recorded(&marks());
    // The final state keeps every acknowledged write but those acknowledged in the
    // half second before the second fault (the kill): what an asynchronous primary
    // had not shipped yet.
    let kill = series.windows[1].from_s;
    let origin = ops.iter().map(|o| o.invoke_ts).min().expect("ops");
    let unshipped = |o: &Op| {
        o.complete_ts
            .is_some_and(|t| ((kill - 0.5)..kill).contains(&((t - origin) as f64 / 1e9)))
    };
    let final_state = ops
        .iter()
        .filter(|o| o.is_acked() && !unshipped(o))
        .filter_map(|o| Some((o.key.as_deref()?.to_string(), o.input.clone())))
        .collect();
    let history = crate::support::ops::history(ops.clone());
    let report = no_lost_ack::check(&history, &final_state);
    let lost = ops.iter().filter(|o| o.is_acked() && unshipped(o)).count();
    assert!(
        lost > 0,
        "the fixture acknowledges writes before the kill: {:?}",
        series.windows
    );
    assert_eq!(report.anomalies.len(), lost);
    let files = figures::of_anomalies(&ops, &report, &series.windows).expect("figures");
    let names: Vec<&str> = files.iter().map(|f| f.0.as_str()).collect();
    assert_eq!(names, ["lost-acks.svg", "lost-acks.png"]);
    let svg = String::from_utf8(files[0].1.clone()).expect("utf-8");
    assert!(
        svg.contains(&format!("lost: {lost} acknowledged writes")),
        "{svg:.300}"
    );
    assert!(svg.contains("fault kill-primary (NOT proven)"));
    assert_eq!(svg.matches(PROVEN_SHADE).count(), 1);
    assert_eq!(svg.matches(NOT_PROVEN_SHADE).count(), 1);
    let again = figures::of_anomalies(&ops, &report, &series.windows).expect("figures");
    assert_eq!(files, again, "the same bytes on every render");
    insta::assert_snapshot!("report_figures_lost_acks", svg);
}
