//! Pictures of one seed's run: throughput, per-op latency and latency quantiles over
//! time, each with the seed's fault windows shaded (proven, not proven and undecided
//! drawn apart, one legend entry naming each fault). SVG and PNG through plotters;
//! text is measured (and, in a PNG, drawn) with the font shipped in
//! `assets/fonts/`, never a system one. Every coordinate is a whole pixel and every
//! label has a fixed format, so the same input gives the same bytes.
//!
//! The clock is the series' (seconds from the first invoke, see
//! [`crate::oracle::series`]), so the windows fall where the ops under them do.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, Ranged, ValueFormatter};
use plotters::prelude::*;

use crate::oracle::checker::CheckerReport;
use crate::oracle::history::Op;
use crate::oracle::series::{Bucket, Series, Window};

/// Pixel size of every figure.
const SIZE: (u32, u32) = (900, 420);
/// Lowest latency a log axis shows (ms): a zero latency has no logarithm.
const FLOOR_MS: f64 = 0.001;

const OK: RGBColor = RGBColor(44, 160, 44);
const FAIL: RGBColor = RGBColor(214, 39, 40);
const UNKNOWN: RGBColor = RGBColor(255, 127, 14);
const PROVEN: RGBColor = RGBColor(31, 119, 180);
const NOT_PROVEN: RGBColor = RGBColor(127, 127, 127);
const UNDECIDED: RGBColor = RGBColor(188, 189, 34);
/// Opacity of a window's shading; its legend swatch is darker so the two never
/// read as the same element.
const SHADE: f64 = 0.18;
const SWATCH: f64 = 0.5;

/// A figure could not be drawn (plotters refused a coordinate or the text sink failed).
#[derive(Debug, thiserror::Error)]
#[error("figure {figure}: {message}")]
pub struct FigureError {
    /// Which figure, e.g. `throughput`.
    pub figure: &'static str,
    pub message: String,
}

/// Every figure of one seed, as `(name, svg)`: `throughput`, `latency`, `quantiles`.
pub fn render_all(ops: &[Op], series: &Series) -> Result<Vec<(&'static str, String)>, FigureError> {
    Ok(vec![
        ("throughput", throughput_svg(series)?),
        ("latency", latency_svg(ops, &series.windows)?),
        ("quantiles", quantiles_svg(ops, series)?),
    ])
}

/// The same figures as [`render_all`], as PNG files.
pub fn render_all_png(
    ops: &[Op],
    series: &Series,
) -> Result<Vec<(&'static str, Vec<u8>)>, FigureError> {
    Ok(vec![
        ("throughput", png("throughput", |r| throughput(r, series))?),
        (
            "latency",
            png("latency", |r| latency(r, ops, &series.windows))?,
        ),
        (
            "quantiles",
            png("quantiles", |r| quantiles(r, ops, series))?,
        ),
    ])
}

/// Ops per second in each bucket, one line per outcome (ok / fail / unknown).
pub fn throughput_svg(series: &Series) -> Result<String, FigureError> {
    svg("throughput", |root| throughput(root, series))
}

fn throughput<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, series: &Series) -> Drawn
where
    DB::ErrorType: 'static,
{
    let span = span_of(series.span_s(), &series.windows);
    let peak = series
        .buckets
        .iter()
        .map(|b| f64::from(b.total()) / series.bucket_s)
        .fold(1.0, f64::max)
        / (1.0 - headroom(series.windows.len() + 3));
    {
        let title = "Throughput (ops/s by outcome)";
        let mut chart = frame(
            root,
            title,
            0.0..span,
            0.0..peak,
            ("ops/s", &|v| format!("{v:.1}")),
        )?;
        shade(&mut chart, &series.windows, 0.0, peak)?;
        // Lines rather than bars, so the shading stays visible under them; a
        // point sits in the middle of its bucket.
        let width = series.bucket_s;
        let rate = |count: fn(&Bucket) -> u32| -> Vec<(f64, f64)> {
            series
                .buckets
                .iter()
                .map(|b| (b.start_s + width / 2.0, f64::from(count(b)) / width))
                .collect()
        };
        for (label, colour, line) in [
            ("ok", OK, rate(|b| b.ok)),
            ("fail", FAIL, rate(|b| b.fail)),
            ("unknown", UNKNOWN, rate(|b| b.unknown)),
        ] {
            chart
                .draw_series(LineSeries::new(line, colour.stroke_width(2)))?
                .label(label)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 12, y)], colour.stroke_width(2))
                });
        }
        legend(&mut chart)
    }
}

/// Every op's latency at its invoke time, log scale, coloured by outcome; an op with
/// no completion (timed out, in flight) sits on the top edge.
pub fn latency_svg(ops: &[Op], windows: &[Window]) -> Result<String, FigureError> {
    svg("latency", |root| latency(root, ops, windows))
}

fn latency<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    ops: &[Op],
    windows: &[Window],
) -> Drawn
where
    DB::ErrorType: 'static,
{
    let origin = ops.iter().map(|o| o.invoke_ts).min().unwrap_or(0);
    let points: Vec<(f64, Option<f64>, Outcome)> = ops
        .iter()
        .map(|op| {
            let at = (op.invoke_ts - origin) as f64 / 1e9;
            let latency = op
                .complete_ts
                .map(|done| (done.saturating_sub(op.invoke_ts) as f64 / 1e6).max(FLOOR_MS));
            (at, latency, Outcome::of(op))
        })
        .collect();
    let last = points.iter().map(|p| p.0).fold(0.0, f64::max);
    let span = span_of(last, windows);
    let (low, high) = log_bounds(
        points.iter().filter_map(|p| p.1),
        headroom(windows.len() + 3),
    );
    {
        let mut chart = frame(
            root,
            "Latency of each op (ms, log scale)",
            0.0..span,
            (low..high).log_scale(),
            ("latency", &log_ms),
        )?;
        shade(&mut chart, windows, low, high)?;
        for outcome in [Outcome::Ok, Outcome::Fail, Outcome::Unknown] {
            let colour = outcome.colour();
            let dots = points
                .iter()
                .filter(|p| p.2 == outcome)
                .map(|p| Circle::new((p.0, p.1.unwrap_or(high).min(high)), 2, colour.filled()));
            chart
                .draw_series(dots)?
                .label(outcome.label())
                .legend(move |(x, y)| Circle::new((x + 6, y), 3, colour.filled()));
        }
        legend(&mut chart)
    }
}

/// The p50 / p90 / p99 / max latency of the ops invoked in each bucket of `series`
/// that completed (a timed-out op has no latency), log scale.
pub fn quantiles_svg(ops: &[Op], series: &Series) -> Result<String, FigureError> {
    svg("quantiles", |root| quantiles(root, ops, series))
}

fn quantiles<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    ops: &[Op],
    series: &Series,
) -> Drawn
where
    DB::ErrorType: 'static,
{
    const QUANTILES: [(&str, usize, RGBColor); 4] = [
        ("p50", 50, RGBColor(31, 119, 180)),
        ("p90", 90, RGBColor(148, 103, 189)),
        ("p99", 99, RGBColor(214, 39, 40)),
        ("max", 100, RGBColor(0, 0, 0)),
    ];
    let origin = ops.iter().map(|o| o.invoke_ts).min().unwrap_or(0);
    let bucket_ns = (series.bucket_s * 1e9).max(1.0);
    let mut per_bucket: Vec<Vec<u64>> = vec![Vec::new(); series.buckets.len()];
    for op in ops.iter().filter(|o| !o.timeout) {
        let Some(done) = op.complete_ts else { continue };
        let at = ((op.invoke_ts - origin) as f64 / bucket_ns) as usize;
        if let Some(slot) = per_bucket.get_mut(at) {
            slot.push(done.saturating_sub(op.invoke_ts));
        }
    }
    for slot in &mut per_bucket {
        slot.sort_unstable();
    }
    // A line point sits in the middle of its bucket.
    let lines: Vec<Vec<(f64, f64)>> = QUANTILES
        .iter()
        .map(|(_, q, _)| {
            per_bucket
                .iter()
                .enumerate()
                .filter_map(|(i, lat)| {
                    let ms = nearest_rank(lat, *q)?;
                    Some(((i as f64 + 0.5) * series.bucket_s, ms.max(FLOOR_MS)))
                })
                .collect()
        })
        .collect();
    let span = span_of(series.span_s(), &series.windows);
    let (low, high) = log_bounds(
        lines.iter().flatten().map(|p| p.1),
        headroom(series.windows.len() + QUANTILES.len()),
    );
    {
        let mut chart = frame(
            root,
            "Latency quantiles per bucket (ms, log scale)",
            0.0..span,
            (low..high).log_scale(),
            ("latency", &log_ms),
        )?;
        shade(&mut chart, &series.windows, low, high)?;
        for ((label, _, colour), line) in QUANTILES.iter().zip(lines) {
            let colour = *colour;
            chart
                .draw_series(LineSeries::new(line, colour.stroke_width(2)))?
                .label(*label)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 12, y)], colour.stroke_width(2))
                });
        }
        legend(&mut chart)
    }
}

/// Most anomaly timelines (and dependency cycles) drawn per seed (a kv history can
/// fail on every key).
const MAX_TIMELINES: usize = 10;

/// The pictures of what a checker found, as `(file suffix, bytes)`: a timeline per
/// linearizability counterexample (`anomaly-<n>.svg`), a ring per dependency cycle
/// (`cycle-<n>.svg`), and the ops every other anomaly names on the time axis
/// against the faults (`lost-acks.svg|png` for no-lost-ack, `anomalies.svg|png`
/// otherwise). None when nothing was found.
pub fn of_anomalies(
    ops: &[Op],
    report: &CheckerReport,
    windows: &[Window],
) -> Result<Vec<(String, Vec<u8>)>, FigureError> {
    let mut files = Vec::new();
    let shapes = || {
        report
            .anomalies
            .iter()
            .filter_map(|a| a.counterexample.as_deref())
    };
    let timelines = shapes().filter_map(|c| c.stuck()).take(MAX_TIMELINES);
    for (n, cx) in timelines.enumerate() {
        let svg = super::timeline::anomaly_svg(ops, cx, windows);
        files.push((format!("anomaly-{}.svg", n + 1), svg.into_bytes()));
    }
    let cycles = shapes().filter_map(|c| c.cycle()).take(MAX_TIMELINES);
    for (n, cycle) in cycles.enumerate() {
        let svg = super::cycle::cycle_svg(cycle);
        files.push((format!("cycle-{}.svg", n + 1), svg.into_bytes()));
    }
    // Ops a timeline does not already show, on the time axis.
    let named: BTreeSet<String> = report
        .anomalies
        .iter()
        .filter(|a| {
            a.counterexample
                .as_deref()
                .and_then(|c| c.stuck())
                .is_none()
        })
        .flat_map(|a| a.ops.iter().cloned())
        .collect();
    if named.is_empty() {
        return Ok(files);
    }
    let (name, flagged) = if report.checker == "no-lost-ack" {
        let label = format!("lost: {} acknowledged writes", named.len());
        let title = "Acknowledged writes lost (no-lost-ack)".to_string();
        (
            "lost-acks",
            Flagged {
                ops: &named,
                title,
                label,
            },
        )
    } else {
        let label = format!("named by an anomaly: {} ops", named.len());
        let title = format!("Ops named by anomalies ({})", report.checker);
        (
            "anomalies",
            Flagged {
                ops: &named,
                title,
                label,
            },
        )
    };
    let svg = svg(name, |root| flagged_ops(root, ops, &flagged, windows))?;
    files.push((format!("{name}.svg"), svg.into_bytes()));
    let png = png(name, |root| flagged_ops(root, ops, &flagged, windows))?;
    files.push((format!("{name}.png"), png));
    Ok(files)
}

/// What an anomaly figure marks: the ops a checker named, and how to say so.
struct Flagged<'a> {
    /// Ids of the ops the checker's anomalies name.
    ops: &'a BTreeSet<String>,
    /// The figure's title, e.g. `Acknowledged writes lost (no-lost-ack)`.
    title: String,
    /// The legend entry of the marks, e.g. `lost: 37 acknowledged writes`.
    label: String,
}

/// Acknowledged ops over time (a running count at each one's completion), with the
/// ops `flagged` names marked on that line where they completed (or were invoked,
/// if they never did), against the fault windows: where lost writes were
/// acknowledged relative to the kill, say.
fn flagged_ops<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    ops: &[Op],
    flagged: &Flagged,
    windows: &[Window],
) -> Drawn
where
    DB::ErrorType: 'static,
{
    let origin = ops.iter().map(|o| o.invoke_ts).min().unwrap_or(0);
    let secs = |t: u64| (t - origin) as f64 / 1e9;
    let mut acked: Vec<f64> = ops
        .iter()
        .filter(|o| o.is_acked())
        .filter_map(|o| o.complete_ts.map(secs))
        .collect();
    acked.sort_by(f64::total_cmp);
    // The running count as a step line: 0 at the origin, +1 at each completion.
    let mut line = vec![(0.0, 0.0)];
    for (n, &t) in acked.iter().enumerate() {
        line.push((t, n as f64));
        line.push((t, (n + 1) as f64));
    }
    let count_at = |t: f64| acked.partition_point(|&a| a <= t) as f64;
    let marks: Vec<(f64, f64)> = ops
        .iter()
        .filter(|o| flagged.ops.iter().any(|id| *id == o.op_id))
        .map(|o| {
            let t = secs(o.complete_ts.unwrap_or(o.invoke_ts));
            (t, count_at(t))
        })
        .collect();
    let last = ops
        .iter()
        .map(|o| secs(o.complete_ts.unwrap_or(o.invoke_ts)))
        .fold(0.0, f64::max);
    let span = span_of(last, windows);
    let top = (acked.len() as f64).max(1.0) / (1.0 - headroom(windows.len() + 2));
    {
        let mut chart = frame(
            root,
            &flagged.title,
            0.0..span,
            0.0..top,
            ("acknowledged ops", &|v| format!("{v:.0}")),
        )?;
        shade(&mut chart, windows, 0.0, top)?;
        chart
            .draw_series(LineSeries::new(line, PROVEN.stroke_width(2)))?
            .label("acknowledged so far")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 12, y)], PROVEN.stroke_width(2)));
        chart
            .draw_series(
                marks
                    .into_iter()
                    .map(|p| Cross::new(p, 5, FAIL.stroke_width(2))),
            )?
            .label(flagged.label.clone())
            .legend(|(x, y)| Cross::new((x + 6, y), 4, FAIL.stroke_width(2)));
        legend(&mut chart)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Ok,
    Fail,
    Unknown,
}

impl Outcome {
    fn of(op: &Op) -> Self {
        if op.is_acked() {
            Self::Ok
        } else if op.is_failed() {
            Self::Fail
        } else {
            Self::Unknown
        }
    }

    fn colour(self) -> RGBColor {
        match self {
            Self::Ok => OK,
            Self::Fail => FAIL,
            Self::Unknown => UNKNOWN,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Fail => "fail",
            Self::Unknown => "timeout / unknown",
        }
    }
}

type Chart<'a, DB, X, Y> = ChartContext<'a, DB, Cartesian2d<X, Y>>;
/// Plotters' errors carry their own message.
type Failure = Box<dyn std::error::Error>;
/// What a figure's painter returns.
type Drawn = Result<(), Failure>;

/// The font every figure measures and draws its text with, registered once.
fn font() -> Result<(), String> {
    static FONT: OnceLock<bool> = OnceLock::new();
    let registered = *FONT.get_or_init(|| {
        let bytes = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
        plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok()
    });
    if registered {
        Ok(())
    } else {
        Err("the font built in from assets/fonts/DejaVuSans.ttf does not parse".into())
    }
}

/// Renders one figure into an SVG string; any error is named with the figure.
fn svg(
    figure: &'static str,
    paint: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> Drawn,
) -> Result<String, FigureError> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        finish(figure, &root, paint)?;
    }
    Ok(svg)
}

/// Renders one figure into a PNG file's bytes (8-bit RGB).
fn png(
    figure: &'static str,
    paint: impl FnOnce(&DrawingArea<BitMapBackend, Shift>) -> Drawn,
) -> Result<Vec<u8>, FigureError> {
    let failed = |e: &dyn std::fmt::Display| FigureError {
        figure,
        message: e.to_string(),
    };
    let mut pixels = vec![0u8; SIZE.0 as usize * SIZE.1 as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut pixels, SIZE).into_drawing_area();
        finish(figure, &root, paint)?;
    }
    let mut file = Vec::new();
    let mut encoder = ::png::Encoder::new(&mut file, SIZE.0, SIZE.1);
    encoder.set_color(::png::ColorType::Rgb);
    encoder.set_depth(::png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(|e| failed(&e))?;
    writer.write_image_data(&pixels).map_err(|e| failed(&e))?;
    writer.finish().map_err(|e| failed(&e))?;
    Ok(file)
}

/// Fills `root` white, paints the figure on it and flushes it.
fn finish<DB: DrawingBackend>(
    figure: &'static str,
    root: &DrawingArea<DB, Shift>,
    paint: impl FnOnce(&DrawingArea<DB, Shift>) -> Drawn,
) -> Result<(), FigureError>
where
    DB::ErrorType: 'static,
{
    font()
        .map_err(Into::into)
        .and_then(|()| root.fill(&WHITE).map_err(Into::into))
        .and_then(|()| paint(root))
        .and_then(|()| root.present().map_err(Into::into))
        .map_err(|e: Failure| FigureError {
            figure,
            message: e.to_string(),
        })
}

/// The titled chart area every figure uses: the value axis described by `y_desc`,
/// its ticks labelled by `y_label`.
fn frame<'a, DB: DrawingBackend + 'a, X, Y>(
    root: &'a DrawingArea<DB, Shift>,
    title: &str,
    x: X,
    y: Y,
    (y_desc, y_label): (&str, &dyn Fn(&f64) -> String),
) -> Result<Chart<'a, DB, X::CoordDescType, Y::CoordDescType>, Failure>
where
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
    DB::ErrorType: 'static,
{
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(x, y)?;
    // Every figure shares its time axis; the value axis says its unit and precision.
    chart
        .configure_mesh()
        .x_desc("seconds from the first invoke")
        .y_desc(y_desc)
        .x_label_formatter(&|v| format!("{v:.1}"))
        .y_label_formatter(y_label)
        .draw()?;
    Ok(chart)
}

/// One rectangle per fault window over the whole height, in the style of its proof,
/// and a legend entry naming the fault.
fn shade<DB: DrawingBackend, X, Y>(
    chart: &mut Chart<'_, DB, X, Y>,
    windows: &[Window],
    low: f64,
    high: f64,
) -> Drawn
where
    DB::ErrorType: 'static,
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    for w in windows {
        let (colour, state) = match w.proven {
            Some(true) => (PROVEN, "proven"),
            Some(false) => (NOT_PROVEN, "NOT proven"),
            None => (UNDECIDED, "undecided"),
        };
        // A window of one op has no width; give it a sliver so it stays visible.
        let to = w.to_s.max(w.from_s + 0.01);
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(w.from_s, low), (to, high)],
                colour.mix(SHADE).filled(),
            )))?
            .label(format!("fault {} ({state})", w.fault))
            .legend(move |(x, y)| {
                Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour.mix(SWATCH).filled())
            });
    }
    Ok(())
}

fn legend<'a, DB: DrawingBackend + 'a, X, Y>(chart: &mut Chart<'a, DB, X, Y>) -> Drawn
where
    DB::ErrorType: 'static,
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 12))
        .draw()?;
    Ok(())
}

/// The x axis reaches past the last op and the last window (never zero wide).
fn span_of(last: f64, windows: &[Window]) -> f64 {
    windows.iter().map(|w| w.to_s).fold(last, f64::max).max(1.0)
}

/// The share of the plot's height the legend of `entries` rows covers at its top,
/// left empty of data so the legend hides none of it.
fn headroom(entries: usize) -> f64 {
    ((entries as f64 * 15.0 + 30.0) / 300.0).min(0.75)
}

/// A log axis around `values` (ms): a factor of two of room below, and above the
/// `headroom` share of the height for the legend.
fn log_bounds(values: impl Iterator<Item = f64>, headroom: f64) -> (f64, f64) {
    let (low, high) = values.fold((f64::MAX, 0.0_f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let (low, high) = if high <= 0.0 {
        (FLOOR_MS, 1.0)
    } else {
        ((low / 2.0).max(FLOOR_MS), (high * 2.0).max(low * 10.0))
    };
    (low, low * (high / low).powf(1.0 / (1.0 - headroom)))
}

/// A log axis's tick in milliseconds, with its unit: `0.01 ms`, `1 ms`, `10 ms`,
/// `100 ms`, `2000 ms` (never `1.000`, read as a thousand in much of the world).
fn log_ms(v: &f64) -> String {
    format!("{} ms", compact(*v))
}

/// A number as people write it: three significant digits below 100, whole above,
/// no trailing zeros and no thousands separator (`0.001`, `0.25`, `1`, `10`, `150`,
/// `2500`).
pub(super) fn compact(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return "0".to_string();
    }
    let decimals = (2.0 - v.abs().log10().floor()).max(0.0) as usize;
    let text = format!("{v:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// The `q`th percentile (nearest rank) of sorted nanoseconds, in milliseconds.
fn nearest_rank(sorted: &[u64], q: usize) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (q * sorted.len()).div_ceil(100).clamp(1, sorted.len());
    Some(sorted[rank - 1] as f64 / 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_ticks_read_as_milliseconds_without_a_thousands_dot() {
        let ticks: Vec<String> = [0.001, 0.01, 0.099_999_9, 1.0, 2.0, 10.0, 100.000_01, 1000.0]
            .iter()
            .map(log_ms)
            .collect();
        assert_eq!(
            ticks,
            [
                "0.001 ms", "0.01 ms", "0.1 ms", "1 ms", "2 ms", "10 ms", "100 ms", "1000 ms"
            ]
        );
        assert_eq!(compact(0.25), "0.25");
        assert_eq!(compact(0.6000000000000001), "0.6");
        assert_eq!(compact(2500.0), "2500");
        assert_eq!(compact(0.0), "0");
    }
}
