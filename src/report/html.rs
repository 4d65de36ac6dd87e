//! `findings/report.html`: report.md as one self-contained HTML file that opens like
//! a dashboard. Its top is the session's verdict and every scenario and arm as a
//! coloured badge on the session's timeline ([`dashboard`], read from the session's
//! journal through the reducer); below it report.md's text, laid out by [`layout`]:
//! a contents list that stays in view, the scenario table as one section per
//! scenario and arm with its figures beside it, long evidence folded. The figures
//! report.md links are read (never through a symlink, bounded) and inlined as `<svg>`
//! elements holding only what faultline's own figures are drawn with, the style sheet
//! is inside the file, and nothing in it makes a browser fetch anything: no script,
//! no external style or font, no `src=`, and a Content-Security-Policy that forbids
//! every fetch anyway. Links to the session's own files (logs, findings) stay
//! relative links.

mod dashboard;
mod layout;
mod pieces;

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use pulldown_cmark::{CowStr, Event, LinkType, Options, Tag, TagEnd};
use quick_xml::escape::minimal_escape;
use quick_xml::events::{BytesEnd, BytesStart, BytesText, Event as XmlEvent};
use quick_xml::{Reader, Writer, XmlVersion};
use regex::Regex;

/// Where report.html goes for a report written to `report`: beside it, with the same
/// stem (`findings/report.md` → `findings/report.html`). `None` when that is the
/// report's own path (a report named `*.html`): it is not overwritten.
pub fn html_path(report: &Path) -> Option<PathBuf> {
    let html = report.with_extension("html");
    (html != report).then_some(html)
}

/// The whole HTML document for `markdown`; relative image paths are read from `base`
/// (the directory report.md's links are relative to: the session's `findings/`), and
/// the dashboard from the session's journal beside it (none when there is none).
pub fn render(markdown: &str, base: &Path) -> String {
    let mut out = Vec::new();
    // Writing to a Vec cannot fail, and the page is UTF-8 throughout.
    let _ = render_to(markdown, base, &mut out);
    String::from_utf8(out).unwrap_or_default()
}

/// [`render`] written to `out` as it is laid out: the page is never held whole
/// (the session writes a report of thousands of scenarios this way).
pub fn render_to(markdown: &str, base: &Path, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let title = markdown
        .lines()
        .find_map(|l| l.strip_prefix("# "))
        .unwrap_or("Findings report")
        .trim();
    let dashboard = dashboard::Dashboard::load(base);
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    let page = layout::page(
        markdown,
        options,
        &mut Rewrite::new(base),
        dashboard.as_ref(),
    );
    write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n{}<main>\n",
        escape(title),
        page.nav,
    )?;
    page.write_main(out)?;
    out.write_all(b"</main>\n</body>\n</html>\n")
}

/// Nothing may be fetched; only the style sheet inside the file applies; no `<base>`
/// may move its relative links and no form may send anything.
const CSP: &str =
    "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";

/// The most one figure file may hold (faultline's own are under 64 KiB): a larger one
/// is refused, not read.
const FIGURE_LIMIT: u64 = 4 << 20;
/// The most the figures inlined in one page may add up to; a figure past it is
/// refused.
const FIGURES_LIMIT: usize = 32 << 20;

const STYLE: &str = include_str!("../../assets/report.css");

/// A table cell or a list whose text runs longer than this many characters is folded
/// under a one-line summary.
const FOLD_AT: usize = 180;
/// A nested list of more items than this is folded.
const FOLD_ITEMS: usize = 6;

/// Turns markdown events into HTML so that nothing fetches: figures inlined, raw
/// HTML shown as text, links that leave the session turned into text; long table
/// cells and long nested lists folded. Figures are numbered across every call, so
/// their ids stay apart in one page.
struct Rewrite<'b> {
    base: &'b Path,
    figures: usize,
    /// Bytes of figures inlined so far, against [`FIGURES_LIMIT`].
    inlined: usize,
}

impl<'b> Rewrite<'b> {
    fn new(base: &'b Path) -> Rewrite<'b> {
        Rewrite {
            base,
            figures: 0,
            inlined: 0,
        }
    }

    /// `events` (whole blocks, or the inline events of one) as HTML; `in_table`
    /// when they are a table cell's, whose long names may break.
    fn html(&mut self, events: &[Event<'_>], in_table: bool) -> String {
        let mut out = String::new();
        pulldown_cmark::html::push_html(&mut out, self.events(events, in_table).into_iter());
        out
    }

    fn events<'a>(&mut self, events: &[Event<'a>], mut in_table: bool) -> Vec<Event<'a>> {
        let mut out = Vec::with_capacity(events.len());
        // The address of the link being shown as text, and how it was written.
        let mut leaving: Option<(CowStr<'a>, LinkType)> = None;
        let mut in_head = false;
        let mut lists = 0usize;
        // What closes a fold, pushed when the event at that index has been.
        let mut closers: Vec<(usize, &'static str)> = Vec::new();
        let mut i = 0;
        while i < events.len() {
            close_folds(&mut out, &mut closers, i);
            match &events[i] {
                Event::Start(Tag::Paragraph) => {
                    if let Some(end) = images_only(events, i) {
                        for (dest, alt) in images(&events[i + 1..end]) {
                            self.figures += 1;
                            let html =
                                figure(&dest, &alt, self.base, self.figures, &mut self.inlined);
                            out.push(Event::Html(html.into()));
                        }
                        i = end + 1;
                        continue;
                    }
                    out.push(events[i].clone());
                }
                // An image within text stays a link to its file, never a fetch.
                Event::Start(Tag::Image { dest_url, .. }) => {
                    let end = matching_end(events, i);
                    let alt = plain_text(&events[i + 1..end]);
                    out.push(Event::Html(inline_image(dest_url, &alt).into()));
                    i = end + 1;
                    continue;
                }
                Event::Start(Tag::Link {
                    link_type,
                    dest_url,
                    ..
                }) if !is_local(dest_url) => {
                    leaving = Some((dest_url.clone(), *link_type));
                }
                Event::End(TagEnd::Link) if leaving.is_some() => {
                    if let Some((url, kind)) = leaving.take()
                        && !matches!(kind, LinkType::Autolink | LinkType::Email)
                    {
                        out.push(Event::Text(format!(" ({url})").into()));
                    }
                }
                // Raw HTML in the text (a plan may carry some) is shown, not obeyed.
                Event::Start(Tag::HtmlBlock) => out.push(Event::Html("<pre>".into())),
                Event::End(TagEnd::HtmlBlock) => out.push(Event::Html("</pre>\n".into())),
                Event::Html(text) | Event::InlineHtml(text) => {
                    out.push(Event::Text(text.clone()));
                }
                Event::Start(Tag::Table(_)) | Event::End(TagEnd::Table) => {
                    in_table = matches!(events[i], Event::Start(_));
                    out.push(events[i].clone());
                }
                Event::Start(Tag::TableHead) | Event::End(TagEnd::TableHead) => {
                    in_head = matches!(events[i], Event::Start(_));
                    out.push(events[i].clone());
                }
                Event::Start(Tag::TableCell) if !in_head => {
                    let end = matching_end(events, i);
                    out.push(events[i].clone());
                    if let Some(open) = fold_open(&plain_text(&events[i + 1..end])) {
                        out.push(Event::Html(open.into()));
                        closers.push((end - 1, FOLD_CLOSE));
                    }
                }
                Event::Start(Tag::List(_)) => {
                    let end = matching_end(events, i);
                    let items = items(events, i, end);
                    if lists > 0 && items > FOLD_ITEMS {
                        let open = format!(
                            "<details class=\"fold\"><summary><span class=\"fold-head\">{items} entries</span>\
                             <span class=\"fold-less\">show less</span></summary><div class=\"fold-body\">"
                        );
                        out.push(Event::Html(open.into()));
                        closers.push((end, FOLD_CLOSE));
                    }
                    lists += 1;
                    out.push(events[i].clone());
                }
                Event::End(TagEnd::List(_)) => {
                    lists = lists.saturating_sub(1);
                    out.push(events[i].clone());
                }
                // A cell's `snake_case_names` and paths may break after `_` and `/`,
                // so a long one does not widen its column past the others.
                Event::Text(text) if in_table && text.contains(['_', '/']) => {
                    let html = escape(text).replace('_', "_<wbr>").replace('/', "/<wbr>");
                    out.push(Event::Html(html.into()));
                }
                other => out.push(other.clone()),
            }
            i += 1;
        }
        close_folds(&mut out, &mut closers, usize::MAX);
        out
    }
}

/// Pushes the closing of every fold whose last event comes before index `next`.
fn close_folds(out: &mut Vec<Event<'_>>, closers: &mut Vec<(usize, &'static str)>, next: usize) {
    while let Some(at) = closers.iter().position(|(after, _)| *after < next) {
        let (_, close) = closers.remove(at);
        out.push(Event::Html(close.into()));
    }
}

/// What closes a fold [`fold_open`] opened.
const FOLD_CLOSE: &str = "</div></details>";

/// The opening of a fold for text longer than [`FOLD_AT`]: a `<details>` whose
/// summary is the text's first words (its end shown when it is open); `None` for
/// short text, which is shown as it is.
fn fold_open(text: &str) -> Option<String> {
    let text = text.trim();
    if text.chars().count() <= FOLD_AT {
        return None;
    }
    let head: String = text.chars().take(110).collect();
    let head = match head.rfind(' ') {
        Some(at) if at > 60 => &head[..at],
        _ => head.as_str(),
    };
    Some(format!(
        "<details class=\"fold\"><summary><span class=\"fold-head\">{}\u{2026}</span>\
         <span class=\"fold-less\">show less</span></summary><div class=\"fold-body\">",
        escape(head.trim_end_matches([',', ';', ':', ' ']))
    ))
}

/// How many items the list opened at `start` (and closed at `end`) holds.
fn items(events: &[Event<'_>], start: usize, end: usize) -> usize {
    let mut depth = 0usize;
    let mut n = 0;
    for event in &events[start + 1..end] {
        match event {
            Event::Start(tag) => {
                n += usize::from(depth == 0 && matches!(tag, Tag::Item));
                depth += 1;
            }
            Event::End(_) => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    n
}

/// A destination inside the session: a relative path, or a fragment. Anything with
/// a scheme (`https:`, `file:`, `mailto:`, `javascript:`) or a host (`//…`) is not.
fn is_local(dest: &str) -> bool {
    static SCHEME: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r"^[A-Za-z][A-Za-z0-9+.\-]*:").ok());
    let has_scheme = SCHEME.as_ref().is_none_or(|re| re.is_match(dest));
    !dest.is_empty() && !has_scheme && !dest.starts_with("//") && !dest.starts_with('\\')
}

/// The index of the event that closes the tag opened at `start`.
fn matching_end(events: &[Event<'_>], start: usize) -> usize {
    let mut depth = 0usize;
    for (at, event) in events.iter().enumerate().skip(start) {
        match event {
            Event::Start(_) => depth += 1,
            Event::End(_) => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return at;
                }
            }
            _ => {}
        }
    }
    events.len().saturating_sub(1)
}

/// When the paragraph opened at `start` holds images and nothing else (line breaks
/// and blanks aside), the index of its end: such a paragraph becomes figures.
fn images_only(events: &[Event<'_>], start: usize) -> Option<usize> {
    let mut at = start + 1;
    let mut any = false;
    while let Some(event) = events.get(at) {
        match event {
            Event::End(TagEnd::Paragraph) => return any.then_some(at),
            Event::Start(Tag::Image { .. }) => {
                any = true;
                at = matching_end(events, at);
            }
            Event::SoftBreak | Event::HardBreak => {}
            Event::Text(t) if t.trim().is_empty() => {}
            _ => return None,
        }
        at += 1;
    }
    None
}

/// Each image's destination and alt text, in order.
fn images<'a>(events: &[Event<'a>]) -> Vec<(CowStr<'a>, String)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < events.len() {
        if let Event::Start(Tag::Image { dest_url, .. }) = &events[at] {
            let end = matching_end(events, at);
            out.push((dest_url.clone(), plain_text(&events[at + 1..end])));
            at = end;
        }
        at += 1;
    }
    out
}

/// The text of some inline events (an image's alt text).
fn plain_text(events: &[Event<'_>]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Text(t) | Event::Code(t) | Event::InlineHtml(t) => Some(t.as_ref()),
            Event::SoftBreak | Event::HardBreak => Some(" "),
            _ => None,
        })
        .collect()
}

/// An image that is not a figure on its own line: a relative link to it, or its
/// address as text when it is elsewhere.
fn inline_image(dest: &str, alt: &str) -> String {
    if is_local(dest) {
        format!("<a href=\"{}\">{}</a>", escape(dest), escape(alt))
    } else {
        format!("{} (image not fetched: {})", escape(alt), escape(dest))
    }
}

/// One image paragraph: the SVG inline in a `<figure>` captioned with its alt text,
/// or a visible note saying why it is not there. `inlined` counts the bytes of the
/// page's figures so far.
fn figure(dest: &str, alt: &str, base: &Path, n: usize, inlined: &mut usize) -> String {
    let note = |class: &str, text: String| format!("<p class=\"{class}\">{text}</p>\n");
    if !is_local(dest) {
        return note(
            "figure-note",
            format!(
                "{}: image not fetched (this file fetches nothing): {}",
                escape(alt),
                escape(dest)
            ),
        );
    }
    if !dest.to_ascii_lowercase().ends_with(".svg") {
        return note(
            "figure-note",
            format!(
                "figure not inlined (only SVG is): <a href=\"{}\">{}</a>",
                escape(dest),
                escape(alt)
            ),
        );
    }
    let svg = read_figure(&resolve(base, dest))
        .and_then(|text| inline_svg(&text, alt, n))
        .and_then(|svg| {
            if inlined.saturating_add(svg.len()) > FIGURES_LIMIT {
                return Err(format!(
                    "the figures before it already fill the {} MiB this page inlines",
                    FIGURES_LIMIT >> 20
                ));
            }
            *inlined += svg.len();
            Ok(svg)
        });
    match svg {
        Ok(svg) => format!(
            "<figure>\n{svg}\n<figcaption>{}</figcaption>\n</figure>\n",
            escape(alt)
        ),
        Err(why) => note(
            "figure-missing",
            format!("figure missing: {} ({})", escape(dest), escape(&why)),
        ),
    }
}

/// A figure file, which the system under test or another user may have been able to
/// write or replace: read as [`crate::untrusted`] reads such files (neither it nor its
/// directory through a symlink, a regular file only, believed only from this run's
/// uids), at most [`FIGURE_LIMIT`] bytes.
fn read_figure(path: &Path) -> Result<String, String> {
    use crate::untrusted::{believed, open_dir_nofollow, read_untrusted_at};
    let why = |e: std::io::Error| match e.raw_os_error() {
        Some(code) if code == nix::errno::Errno::ELOOP as i32 => {
            "a symlink, not followed".to_string()
        }
        _ => e.to_string(),
    };
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Err("not a file".into());
    };
    let fd = open_dir_nofollow(dir).map_err(|e| match e.raw_os_error() {
        // What `O_NOFOLLOW | O_DIRECTORY` says of a symlink.
        Some(code) if code == nix::errno::Errno::ENOTDIR as i32 => {
            "its directory is a symlink (not followed) or not a directory".to_string()
        }
        _ => format!("its directory: {}", why(e)),
    })?;
    let owner = nix::sys::stat::fstat(&fd)
        .map_err(|e| e.to_string())?
        .st_uid;
    believed(dir, owner).map_err(|e| e.to_string())?;
    read_untrusted_at(&fd, name, FIGURE_LIMIT).map_err(why)
}

/// `dest` (relative) from `base`, `..` taken lexically: the file is found even when
/// a directory on the way (`findings/` of `findings/../figures`) does not exist.
fn resolve(base: &Path, dest: &str) -> PathBuf {
    let mut path = base.to_path_buf();
    for part in Path::new(dest).components() {
        match part {
            std::path::Component::ParentDir => {
                path.pop();
            }
            std::path::Component::Normal(name) => path.push(name),
            _ => {}
        }
    }
    path
}

/// An SVG file as an element of the HTML, read and written back by an XML reader and
/// writer (quick-xml): no XML prolog, doctype, comment or processing instruction, no
/// namespace declarations (HTML's parser puts `<svg>` in the SVG namespace itself),
/// `href` for `xlink:href`, class `figure`, a viewBox so it can scale, and its ids
/// prefixed with `f<n>-` so two figures' ids cannot collide; every reference to an id
/// inside it (`href="#…"`, `xlink:href="#…"`, `url(#…)`) is prefixed alike, so it
/// still points into its own figure. Only what faultline's own figures are drawn with
/// is let through ([`ELEMENTS`], [`ATTRIBUTES`]); text and CDATA are written as
/// escaped text. A file that is not well-formed XML, whose document is not an
/// `<svg>`, or that holds anything else (a `<script>`, an `on…` handler, a
/// `<style>`, a `<foreignObject>`, a link or `url(…)` out of the figure) is refused
/// with the reason: the report says the figure is missing and why.
fn inline_svg(text: &str, alt: &str, n: usize) -> Result<String, String> {
    fn write(writer: &mut Writer<Vec<u8>>, event: XmlEvent<'_>) -> Result<(), String> {
        writer
            .write_event(event)
            .map_err(|e| format!("the SVG could not be written: {e}"))
    }
    let prefix = format!("f{n}-");
    let mut reader = Reader::from_str(text);
    let mut writer = Writer::new(Vec::new());
    // The elements open inside the figure, the root first.
    let mut open: Vec<&'static str> = Vec::new();
    loop {
        let event = reader.read_event().map_err(|e| {
            format!(
                "not well-formed XML at byte {}: {e}",
                reader.error_position()
            )
        })?;
        match event {
            XmlEvent::Start(ref e) | XmlEvent::Empty(ref e)
                if open.is_empty() && e.name().into_inner() != "svg" =>
            {
                return Err("no <svg> element".into());
            }
            XmlEvent::Start(_) | XmlEvent::Empty(_)
                if matches!(open.last(), Some(&("title" | "desc"))) =>
            {
                return Err("an element inside a <title> or <desc>, which hold text only".into());
            }
            XmlEvent::Start(e) => {
                let (name, out) = element(&e, &prefix, open.is_empty().then_some(alt))?;
                open.push(name);
                write(&mut writer, XmlEvent::Start(out))?;
            }
            XmlEvent::Empty(e) => {
                let (_, out) = element(&e, &prefix, open.is_empty().then_some(alt))?;
                write(&mut writer, XmlEvent::Empty(out))?;
                if open.is_empty() {
                    break;
                }
            }
            XmlEvent::End(_) => {
                // The reader has checked that it closes the element last opened.
                let Some(name) = open.pop() else {
                    return Err("a closing tag with no element open".into());
                };
                write(&mut writer, XmlEvent::End(BytesEnd::new(name)))?;
                if open.is_empty() {
                    break;
                }
            }
            // Never raw: `<` and `&` escaped (a well-formed text holds neither).
            XmlEvent::Text(t) if !open.is_empty() => {
                let text = BytesText::from_escaped(minimal_escape(t.into_inner()));
                write(&mut writer, XmlEvent::Text(text))?;
            }
            // Its content as text: HTML's parser would read a CDATA section inside
            // `<svg>` as the text it holds, and `]]>` in it ends it early.
            XmlEvent::CData(t) if !open.is_empty() => {
                let text = BytesText::from_escaped(escape(&t.into_inner()));
                write(&mut writer, XmlEvent::Text(text))?;
            }
            // `&lt;`, `&#233;`: what HTML reads alike; another entity is not defined here.
            XmlEvent::GeneralRef(r) if !open.is_empty() => {
                let known = match r.resolve_char_ref() {
                    Ok(Some(c)) => c != '\0',
                    Ok(None) => matches!(
                        &*r.clone().into_inner(),
                        "lt" | "gt" | "amp" | "apos" | "quot"
                    ),
                    Err(_) => false,
                };
                if !known {
                    return Err(format!("an undefined entity &{};", clip(&r.into_inner())));
                }
                write(&mut writer, XmlEvent::GeneralRef(r))?;
            }
            XmlEvent::Eof if open.is_empty() => return Err("no <svg> element".into()),
            XmlEvent::Eof => return Err("no closing </svg>".into()),
            // The prolog, comments, processing instructions, and blanks around the root.
            _ => {}
        }
    }
    String::from_utf8(writer.into_inner()).map_err(|e| e.to_string())
}

/// The elements a figure may hold: what plotters and faultline's own writers
/// (`figures.rs`, `timeline.rs`, `cycle.rs`) draw with, and the few that only hold
/// shapes for them (gradients, patterns, clip paths, markers, `<use>` of one of its
/// own ids). Not `<a>`, `<image>`, `<style>`, `<foreignObject>`, `<script>`,
/// animation, or any element of another namespace.
const ELEMENTS: &[&str] = &[
    "svg",
    "g",
    "defs",
    "rect",
    "line",
    "polyline",
    "polygon",
    "path",
    "circle",
    "ellipse",
    "text",
    "tspan",
    "title",
    "desc",
    "clipPath",
    "linearGradient",
    "radialGradient",
    "stop",
    "pattern",
    "marker",
    "use",
];

/// The attributes a figure's elements may carry: geometry and presentation, ids and
/// classes, `href`/`xlink:href` to one of its own ids. Not `style`, no `on…` handler,
/// no `overflow` (a figure stays inside its box).
const ATTRIBUTES: &[&str] = &[
    "id",
    "class",
    "href",
    "xlink:href",
    "role",
    "aria-label",
    "x",
    "y",
    "x1",
    "y1",
    "x2",
    "y2",
    "cx",
    "cy",
    "r",
    "rx",
    "ry",
    "fx",
    "fy",
    "dx",
    "dy",
    "width",
    "height",
    "d",
    "points",
    "pathLength",
    "offset",
    "viewBox",
    "preserveAspectRatio",
    "transform",
    "fill",
    "fill-opacity",
    "fill-rule",
    "stroke",
    "stroke-width",
    "stroke-opacity",
    "stroke-dasharray",
    "stroke-dashoffset",
    "stroke-linecap",
    "stroke-linejoin",
    "stroke-miterlimit",
    "opacity",
    "color",
    "visibility",
    "clip-path",
    "clip-rule",
    "clipPathUnits",
    "marker-start",
    "marker-mid",
    "marker-end",
    "markerWidth",
    "markerHeight",
    "markerUnits",
    "refX",
    "refY",
    "orient",
    "stop-color",
    "stop-opacity",
    "gradientUnits",
    "gradientTransform",
    "spreadMethod",
    "patternUnits",
    "patternContentUnits",
    "patternTransform",
    "font-family",
    "font-size",
    "font-weight",
    "font-style",
    "text-anchor",
    "dominant-baseline",
    "alignment-baseline",
    "baseline-shift",
    "letter-spacing",
    "word-spacing",
    "text-decoration",
    "shape-rendering",
    "text-rendering",
    "vector-effect",
];

/// The classes the root may carry besides `figure`: those faultline's own figures
/// are named with (a class of the page's own, such as `tick`, would place it).
const ROOT_CLASSES: &[&str] = &["anomaly-timeline", "dependency-cycle"];

const SVG_NS: &str = "http://www.w3.org/2000/svg";
const XLINK_NS: &str = "http://www.w3.org/1999/xlink";

/// At most 60 characters of something a figure holds, for a reason shown in the page.
fn clip(text: &str) -> String {
    crate::sanitize::clip(text, 60)
}

/// One element of the figure, its name as [`ELEMENTS`] spells it, with its attributes
/// rewritten: namespace declarations left out, `xlink:href` as `href`, its id and its
/// references to ids prefixed. The root (`alt` given) also gets class `figure`, a
/// viewBox from its width and height when it has none, and `role="img"` with `alt`
/// as its label (in place of its own). What is not allowed is refused with why.
fn element(
    e: &BytesStart<'_>,
    prefix: &str,
    alt: Option<&str>,
) -> Result<(&'static str, BytesStart<'static>), String> {
    let raw = e.name().into_inner();
    if e.local_name().into_inner().eq_ignore_ascii_case("script") {
        return Err("it holds a script".into());
    }
    let Some(&name) = ELEMENTS.iter().find(|&&known| known == raw) else {
        return Err(format!("it holds <{}>, which is not drawn here", clip(raw)));
    };
    let bad = |why: quick_xml::events::attributes::AttrError| {
        format!("a malformed attribute in <{name}>: {why}")
    };
    let mut out = BytesStart::new(name);
    let (mut width, mut height, mut view_box, mut class) = (None, None, false, false);
    for attr in e.attributes() {
        let attr = attr.map_err(bad)?;
        let key = attr.key.into_inner();
        if key.to_ascii_lowercase().starts_with("on") {
            return Err("it holds a script".into());
        }
        let value = attr
            .normalized_value(XmlVersion::Explicit1_0)
            .map_err(|why| format!("an attribute of <{name}>: {why}"))?;
        match (key, &*value) {
            ("xmlns", SVG_NS) | ("xmlns:xlink", XLINK_NS) => continue,
            ("xmlns", _) => return Err(format!("<{name}> of another namespace")),
            _ if key.starts_with("xmlns:") => {
                return Err(format!("a namespace other than SVG's: {}", clip(key)));
            }
            _ if !ATTRIBUTES.contains(&key) => {
                return Err(format!(
                    "<{name}> has the attribute {}, which is not drawn here",
                    clip(key)
                ));
            }
            ("transform", _) if alt.is_some() => {
                return Err("<svg> has a transform (it would move the figure)".into());
            }
            _ => {}
        }
        // A CSS escape (`u\72l(`) could hide a `url(` from the check below.
        if value.contains('\\') {
            return Err(format!("<{name}> has a backslash in {key}"));
        }
        if let Some(outside) = outside_url(&value) {
            return Err(format!(
                "<{name}> refers to {} outside the figure",
                clip(outside)
            ));
        }
        let key = if key == "xlink:href" { "href" } else { key };
        let value = match key {
            "id" => format!("{prefix}{value}"),
            "href" => match value.strip_prefix('#') {
                Some(id) => format!("#{prefix}{id}"),
                None => {
                    return Err(format!(
                        "<{name}> links to {} outside the figure",
                        clip(&value)
                    ));
                }
            },
            _ => references(&value, prefix),
        };
        if alt.is_some() {
            match key {
                "role" | "aria-label" => continue,
                "width" => width = pixels(&value).map(str::to_string),
                "height" => height = pixels(&value).map(str::to_string),
                "viewBox" => view_box = true,
                "class" => {
                    if let Some(other) =
                        value.split_whitespace().find(|c| !ROOT_CLASSES.contains(c))
                    {
                        return Err(format!(
                            "<svg> has the class {}, not one of faultline's figures'",
                            clip(other)
                        ));
                    }
                    class = true;
                    out.push_attribute(("class", format!("figure {value}").as_str()));
                    continue;
                }
                _ => {}
            }
        }
        out.push_attribute((key, value.as_str()));
    }
    if let Some(alt) = alt {
        if let (false, Some(w), Some(h)) = (view_box, width, height) {
            out.push_attribute(("viewBox", format!("0 0 {w} {h}").as_str()));
        }
        if !class {
            out.push_attribute(("class", "figure"));
        }
        out.push_attribute(("role", "img"));
        out.push_attribute(("aria-label", alt));
    }
    Ok((name, out))
}

/// The first `url(…)` in `value` (in any case) that is not a reference to an id
/// (`url(#…)`, quoted or not, the one [`references`] prefixes), from `url(` on.
fn outside_url(value: &str) -> Option<&str> {
    let lower = value.to_ascii_lowercase();
    lower.match_indices("url(").find_map(|(at, _)| {
        let inner = lower[at + "url(".len()..]
            .trim_start()
            .trim_start_matches(['"', '\'']);
        let fragment = inner.starts_with('#') && value[at..].starts_with("url(");
        (!fragment).then(|| &value[at..])
    })
}

/// A width or height in user units (`900`, `420.5`, `900px`) as the number, else
/// `None` (`100%`, `12em`: no viewBox can be made of it).
fn pixels(value: &str) -> Option<&str> {
    let value = value.trim();
    let number = value.strip_suffix("px").unwrap_or(value);
    let (whole, fraction) = number.split_once('.').unwrap_or((number, "0"));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(whole) && digits(fraction)).then_some(number)
}

/// `text` with every `url(#id)` (quoted or not) made `url(#<prefix>id)`.
fn references(text: &str, prefix: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("url(") {
        let (head, tail) = rest.split_at(at + "url(".len());
        out.push_str(head);
        let quoted = tail.trim_start().trim_start_matches(['"', '\'']);
        let skipped = tail.len() - quoted.len();
        out.push_str(&tail[..skipped]);
        match quoted.strip_prefix('#') {
            Some(id) => {
                out.push('#');
                out.push_str(prefix);
                rest = id;
            }
            None => rest = quoted,
        }
    }
    out.push_str(rest);
    out
}

/// Text as HTML text or a quoted attribute value.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SVG: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- drawn -->\n\
        <svg width=\"900\" height=\"420\" xmlns=\"http://www.w3.org/2000/svg\" \
        xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n<defs><clipPath id=\"c\"><rect/></clipPath></defs>\n\
        <rect clip-path=\"url(#c)\"/><use xlink:href=\"#c\"/>\n</svg>\n";

    #[test]
    fn an_svg_is_inlined_without_prolog_or_namespaces_and_with_its_own_ids() {
        let svg = inline_svg(SVG, "throughput of D2 seed-1", 3).expect("inlined");
        assert!(svg.starts_with("<svg width=\"900\" height=\"420\" viewBox=\"0 0 900 420\" class=\"figure\" role=\"img\" aria-label=\"throughput of D2 seed-1\">"), "{svg}");
        assert!(svg.ends_with("</svg>"), "{svg}");
        for gone in ["<?xml", "<!--", "xmlns", "xlink", "http"] {
            assert!(!svg.contains(gone), "{gone} left in {svg}");
        }
        assert!(
            svg.contains("id=\"f3-c\"")
                && svg.contains("url(#f3-c)")
                && svg.contains("href=\"#f3-c\""),
            "{svg}"
        );
        assert_eq!(
            inline_svg("<svg><script>x()</script></svg>", "a", 1),
            Err("it holds a script".to_string())
        );
        assert_eq!(
            inline_svg("<svg><g><SCRIPT/></g></svg>", "a", 1),
            Err("it holds a script".to_string())
        );
        assert_eq!(
            inline_svg("<svg><rect onclick=\"x()\"/></svg>", "a", 1),
            Err("it holds a script".to_string())
        );
        assert_eq!(
            inline_svg("<html/>", "a", 1),
            Err("no <svg> element".to_string())
        );
    }

    /// Each id an inlined SVG declares, and each `#id` it refers to (by `href` or
    /// `url(#…)` in an attribute), read back with an XML reader.
    fn ids_and_references(svg: &str) -> (Vec<String>, Vec<String>) {
        let (mut ids, mut refs) = (Vec::new(), Vec::new());
        let urls = |text: &str, refs: &mut Vec<String>| {
            for part in text.split("url(").skip(1) {
                let id = part.trim_start_matches(['"', '\'']);
                let id = id.strip_prefix('#').expect("a fragment");
                refs.push(id[..id.find(['"', '\'', ')']).expect("end")].to_string());
            }
        };
        let mut reader = Reader::from_str(svg);
        loop {
            match reader
                .read_event()
                .expect("the inlined SVG is well-formed XML")
            {
                XmlEvent::Start(e) | XmlEvent::Empty(e) => {
                    for a in e.attributes() {
                        let a = a.expect("attribute");
                        let value = a
                            .normalized_value(XmlVersion::Explicit1_0)
                            .expect("value")
                            .into_owned();
                        match a.key.into_inner() {
                            "id" => ids.push(value),
                            "href" => refs.extend(value.strip_prefix('#').map(str::to_string)),
                            key => {
                                assert_ne!(key, "xlink:href");
                                urls(&value, &mut refs);
                            }
                        }
                    }
                }
                XmlEvent::Eof => break,
                _ => {}
            }
        }
        (ids, refs)
    }

    /// Two figures drawn with the same ids (as every plotters figure is): inlined in
    /// one page, no id is declared twice and each reference finds its own figure's.
    #[test]
    fn two_figures_with_the_same_ids_keep_apart_and_their_references_follow() {
        let drawn = "<?xml version=\"1.0\"?>\n<!DOCTYPE svg>\n\
            <svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" \
            width=\"640px\" height=\"480\" class=\"anomaly-timeline\" role=\"graphics-document\">\
            <rect clip-path=\"url(#clip)\" fill=\"url('#grad')\"/>\
            <defs><clipPath id=\"clip\"><rect width=\"10\" height=\"10\"/></clipPath>\
            <linearGradient id=\"grad\"/><path id=\"tick\" d=\"M0 0\"/></defs>\
            <g clip-path=\"url(#clip)\" fill=\"url(&quot;#grad&quot;)\">\
            <use xlink:href=\"#tick\" x=\"1\"/><use href=\"#tick\" x=\"2\"/></g>\
            <text x=\"1\">a &lt; b &amp; url(#clip) stays text</text></svg>\n<!-- after -->\n";
        let dir = tempfile::tempdir().expect("tmp");
        let figures = dir.path().join("figures/D2");
        std::fs::create_dir_all(&figures).expect("mkdir");
        for name in ["throughput", "latency"] {
            std::fs::write(figures.join(format!("seed-1-{name}.svg")), drawn).expect("svg");
        }
        let markdown = "# Findings report: demo\n\n\
            ![throughput of D2 seed-1](../figures/D2/seed-1-throughput.svg)\n\n\
            ![latency of D2 seed-1](../figures/D2/seed-1-latency.svg)\n";
        let html = render(markdown, &dir.path().join("findings"));
        assert!(!html.contains("figure missing"), "{html}");
        let svgs: Vec<&str> = html
            .split("<svg ")
            .skip(1)
            .map(|rest| &rest[..rest.find("</svg>").expect("closed") + "</svg>".len()])
            .collect();
        assert_eq!(svgs.len(), 2, "{html}");
        let mut every_id = std::collections::BTreeSet::new();
        for (n, svg) in svgs.iter().enumerate() {
            let svg = format!("<svg {svg}");
            let (ids, refs) = ids_and_references(&svg);
            let prefix = format!("f{}-", n + 1);
            assert_eq!(
                ids,
                ["clip", "grad", "tick"].map(|id| format!("{prefix}{id}")),
                "{svg}"
            );
            // clip-path and fill twice (a rect, a group), the two uses.
            assert_eq!(refs.len(), 6, "{refs:?} in {svg}");
            for r in &refs {
                assert!(
                    ids.contains(r),
                    "#{r} is not an id of its own figure: {svg}"
                );
            }
            for id in ids {
                assert!(
                    every_id.insert(id.clone()),
                    "{id} declared twice in the page"
                );
            }
            // The root: its own class kept after `figure`, its size a viewBox, the
            // caption its label; nothing of the prolog, namespaces or comments.
            assert!(
                svg.starts_with("<svg width=\"640px\" height=\"480\" class=\"figure anomaly-timeline\" viewBox=\"0 0 640 480\" role=\"img\" aria-label=\""),
                "{svg}"
            );
            for gone in [
                "xmlns",
                "xlink",
                "http",
                "DOCTYPE",
                "<!--",
                "graphics-document",
            ] {
                assert!(!svg.contains(gone), "{gone} left in {svg}");
            }
            // Text is not a reference and stays escaped.
            assert!(
                svg.contains(">a &lt; b &amp; url(#clip) stays text</text>"),
                "{svg}"
            );
        }
    }

    /// What is not a well-formed SVG is refused with a reason, never a panic, and the
    /// report says the figure is missing and why; an empty figure is still one.
    #[test]
    fn a_malformed_svg_is_a_missing_figure_with_its_reason() {
        for (svg, why) in [
            ("<svg><g></svg>", "not well-formed XML"),
            ("<svg><rect x=\"1\" x=\"2\"/></svg>", "malformed attribute"),
            ("<svg><rect x=1/></svg>", "malformed attribute"),
            (
                "<svg><text>&nosuch;</text></svg>",
                "an undefined entity &nosuch;",
            ),
            ("<svg><text>&#0;</text></svg>", "an undefined entity &#0;"),
            (
                "<svg:svg xmlns:svg=\"http://www.w3.org/2000/svg\"/>",
                "no <svg> element",
            ),
            ("<svg width=\"1\"><rect/>", "no closing </svg>"),
            ("", "no <svg> element"),
            ("not xml at all", "no <svg> element"),
            ("<svg", "not well-formed XML"),
        ] {
            match inline_svg(svg, "a", 1) {
                Ok(out) => panic!("{svg:?} inlined as {out}"),
                Err(e) => assert!(e.contains(why), "{svg:?}: {e}"),
            }
        }
        assert_eq!(
            inline_svg("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"0\" height=\"0\"/>", "none", 2),
            Ok("<svg width=\"0\" height=\"0\" viewBox=\"0 0 0 0\" class=\"figure\" role=\"img\" aria-label=\"none\"/>".to_string())
        );
        let dir = tempfile::tempdir().expect("tmp");
        std::fs::write(dir.path().join("broken.svg"), "<svg><g></svg>").expect("svg");
        let html = render("![broken](broken.svg)\n", dir.path());
        assert!(
            html.contains(
                "<p class=\"figure-missing\">figure missing: broken.svg (not well-formed XML"
            ),
            "{html}"
        );
        assert!(!html.contains("<svg"), "{html}");
    }

    /// What the security review planted in figures (issue: an SVG is inlined into
    /// the page): each is refused whole, with its reason, never stripped down.
    #[test]
    fn a_figure_holding_anything_but_drawing_is_refused_with_its_reason() {
        let xhtml = "xmlns=\"http://www.w3.org/1999/xhtml\"";
        for (svg, why) in [
            (
                format!(
                    "<svg xmlns=\"http://www.w3.org/2000/svg\"><desc><p {xhtml}><![CDATA[</p></desc></svg>\
                     </figure><meta http-equiv=refresh content='2;url=file:///tmp/evil.html'>]]></p></desc></svg>"
                ),
                "an element inside a <title> or <desc>",
            ),
            (
                format!(
                    "<svg><foreignObject width=\"9\" height=\"9\"><div {xhtml}><![CDATA[ ><img src=x \
                     onerror=alert(1)><script>alert(2)</script> ]]></div></foreignObject></svg>"
                ),
                "it holds <foreignObject>",
            ),
            (
                "<svg><style>table,h1{display:none!important} body::before{content:'Session \
                 verdict: DONE'}</style></svg>"
                    .into(),
                "it holds <style>",
            ),
            (
                "<svg><style>@import url(http://127.0.0.1:9/x.css);</style></svg>".into(),
                "it holds <style>",
            ),
            (
                format!("<svg><iframe {xhtml} srcdoc=\"&lt;script&gt;alert(1)&lt;/script&gt;\"/></svg>"),
                "it holds <iframe>",
            ),
            (
                format!("<svg><img {xhtml} src=\"http://127.0.0.1:9/y.png\"/></svg>"),
                "it holds <img>",
            ),
            (
                "<svg><image href=\"http://127.0.0.1:9/y.png\"/></svg>".into(),
                "it holds <image>",
            ),
            (
                format!(
                    "<svg><form {xhtml} action=\"http://127.0.0.1:9/\"><input type=\"password\"/></form></svg>"
                ),
                "it holds <form>",
            ),
            (
                format!("<svg><base {xhtml} href=\"http://127.0.0.1:9/\"/></svg>"),
                "it holds <base>",
            ),
            (
                "<svg><a href=\"javascript:alert(1)\"><text>x</text></a></svg>".into(),
                "it holds <a>",
            ),
            (
                "<svg><set attributeName=\"href\" to=\"javascript:alert(1)\"/></svg>".into(),
                "it holds <set>",
            ),
            (
                "<svg><use href=\"https://evil.example/x.svg#a\"/></svg>".into(),
                "links to https://evil.example/x.svg#a outside the figure",
            ),
            (
                "<svg xmlns:xlink=\"http://www.w3.org/1999/xlink\"><use xlink:href=\"data:text/html,x\"/></svg>"
                    .into(),
                "links to data:text/html,x outside the figure",
            ),
            (
                "<svg><rect fill=\"url(http://127.0.0.1:9/p.svg#p)\"/></svg>".into(),
                "refers to url(http://127.0.0.1:9/p.svg#p) outside the figure",
            ),
            (
                "<svg><rect fill=\"URL(#p)\"/></svg>".into(),
                "refers to URL(#p) outside the figure",
            ),
            (
                "<svg><rect fill=\"u\\72l(http://127.0.0.1:9/)\"/></svg>".into(),
                "a backslash in fill",
            ),
            (
                "<svg><rect style=\"position:fixed;top:0\"/></svg>".into(),
                "the attribute style",
            ),
            (
                "<svg overflow=\"visible\"/>".into(),
                "the attribute overflow",
            ),
            (
                "<svg transform=\"translate(0,-900) scale(4)\"/>".into(),
                "<svg> has a transform",
            ),
            ("<svg class=\"tick\"/>".into(), "the class tick"),
            (
                "<svg xmlns:s=\"http://www.w3.org/2000/svg\"><s:rect/></svg>".into(),
                "a namespace other than SVG's: xmlns:s",
            ),
            (
                format!("<svg><g {xhtml}/></svg>"),
                "<g> of another namespace",
            ),
            (
                "<svg><s:script xmlns:s=\"http://www.w3.org/2000/svg\"/></svg>".into(),
                "it holds a script",
            ),
            ("<svg><rect ONLOAD=\"x()\"/></svg>".into(), "it holds a script"),
        ] {
            match inline_svg(&svg, "a", 1) {
                Ok(out) => panic!("{svg:?} inlined as {out}"),
                Err(e) => assert!(e.contains(why), "{svg:?}: {e}"),
            }
        }
        // In the page: the note, and nothing of the figure.
        let dir = tempfile::tempdir().expect("tmp");
        std::fs::write(
            dir.path().join("evil.svg"),
            "<svg><foreignObject><div xmlns=\"http://www.w3.org/1999/xhtml\">\
             <![CDATA[<script>alert(1)</script>]]></div></foreignObject></svg>",
        )
        .expect("svg");
        let html = render("![evil](evil.svg)\n", dir.path());
        assert!(
            html.contains(
                "<p class=\"figure-missing\">figure missing: evil.svg (it holds &lt;foreignObject&gt;"
            ),
            "{html}"
        );
        for gone in ["<svg", "<script", "alert", "CDATA"] {
            assert!(!html.contains(gone), "{gone} in {html}");
        }
    }

    /// CDATA and text inside a figure are its text, escaped: HTML's parser reads a
    /// CDATA section inside `<svg>` as text up to the first `]]>`, so a raw one would
    /// let what follows it out as markup. Comments and processing instructions go.
    #[test]
    fn cdata_and_text_in_a_figure_are_escaped_text() {
        let svg = "<svg width=\"10\" height=\"10\"><text x=\"1\"><![CDATA[</text></svg></figure>\
            <meta http-equiv=refresh content='0;url=file:///tmp/evil.html'><script>alert(1)</script>\
            <img src=x onerror=alert(2)>]]></text><!-- <script/> --><?pi <script/>?>\
            <title>a ]]&gt; b > c</title></svg>";
        let out = inline_svg(svg, "a", 1).expect("inlined");
        assert_eq!(
            out,
            "<svg width=\"10\" height=\"10\" viewBox=\"0 0 10 10\" class=\"figure\" role=\"img\" \
             aria-label=\"a\"><text x=\"1\">&lt;/text&gt;&lt;/svg&gt;&lt;/figure&gt;&lt;meta \
             http-equiv=refresh content=&#39;0;url=file:///tmp/evil.html&#39;&gt;&lt;script&gt;\
             alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;</text>\
             <title>a ]]&gt; b > c</title></svg>"
        );
    }

    /// A figure (or its directory) that is a symlink is not followed, whatever it
    /// points at; nor is anything but a regular file read.
    #[test]
    fn a_symlinked_figure_is_not_followed() {
        let dir = tempfile::tempdir().expect("tmp");
        let secret = dir.path().join("root-only");
        std::fs::create_dir_all(&secret).expect("mkdir");
        std::fs::write(secret.join("s.svg"), "<svg><text>SECRET</text></svg>").expect("svg");
        let figures = dir.path().join("session/figures");
        std::fs::create_dir_all(figures.join("D1")).expect("mkdir");
        std::os::unix::fs::symlink(
            secret.join("s.svg"),
            figures.join("D1/seed-1-throughput.svg"),
        )
        .expect("symlink");
        std::os::unix::fs::symlink(&secret, figures.join("D2")).expect("symlink");
        nix::unistd::mkfifo(
            &figures.join("D1/seed-1-latency.svg"),
            nix::sys::stat::Mode::from_bits_truncate(0o600),
        )
        .expect("fifo");
        let markdown = "![a](../figures/D1/seed-1-throughput.svg)\n\n\
            ![b](../figures/D2/s.svg)\n\n![c](../figures/D1/seed-1-latency.svg)\n";
        let html = render(markdown, &dir.path().join("session/findings"));
        for note in [
            "figure missing: ../figures/D1/seed-1-throughput.svg (a symlink, not followed)",
            "figure missing: ../figures/D2/s.svg (its directory is a symlink (not followed) or not a directory)",
            "figure missing: ../figures/D1/seed-1-latency.svg (not a regular file)",
        ] {
            assert!(html.contains(note), "{note}: {html}");
        }
        assert!(!html.contains("SECRET") && !html.contains("<svg"), "{html}");
    }

    /// A figure over [`FIGURE_LIMIT`] is not read; one that would take the page's
    /// figures over [`FIGURES_LIMIT`] is not inlined. Both say why.
    #[test]
    fn an_oversized_figure_is_missing_with_its_size() {
        let dir = tempfile::tempdir().expect("tmp");
        let mut big = String::from("<svg>");
        big.push_str(&" ".repeat(usize::try_from(FIGURE_LIMIT).expect("size")));
        big.push_str("</svg>");
        std::fs::write(dir.path().join("big.svg"), &big).expect("svg");
        std::fs::write(dir.path().join("small.svg"), SVG).expect("svg");
        let html = render("![big](big.svg)\n\n![small](small.svg)\n", dir.path());
        assert!(
            html.contains("figure missing: big.svg (larger than 4194304 bytes)"),
            "{html}"
        );
        assert_eq!(html.matches("<svg").count(), 1, "{html}");
        let mut inlined = FIGURES_LIMIT - 100;
        let note = figure("small.svg", "small", dir.path(), 1, &mut inlined);
        assert_eq!(
            note,
            "<p class=\"figure-missing\">figure missing: small.svg (the figures before it \
             already fill the 32 MiB this page inlines)</p>\n"
        );
        assert_eq!(inlined, FIGURES_LIMIT - 100);
    }

    /// faultline's hand-drawn dependency cycle (paths, polygons, groups with titles)
    /// passes the allowlist whole: every element it draws is in the page.
    #[test]
    fn a_dependency_cycle_figure_is_inlined_whole() {
        use crate::oracle::checker::{Cycle, CycleTxn, Hop};
        let txn = |name: &str| CycleTxn {
            name: name.into(),
            process: "1".into(),
            mops: vec!["append 1 2".into(), "r 1 [2 \"<x>\"]".into()],
        };
        let hop = |kind: &str| Hop {
            kind: kind.into(),
            why: "T1 wrote 2 & T2 read it".into(),
        };
        let drawn = super::super::cycle::cycle_svg(&Cycle {
            kind: "G-single".into(),
            violates: "violates snapshot-isolation".into(),
            txns: vec![txn("T1"), txn("T2")],
            hops: vec![hop("ww"), hop("rw")],
        });
        let svg = inline_svg(&drawn, "cycle", 1).expect("inlined");
        for element in ["<g ", "<path ", "<polygon ", "<rect ", "<text ", "<title>"] {
            assert_eq!(
                svg.matches(element).count(),
                drawn.matches(element).count(),
                "{element}: {svg}"
            );
        }
        assert!(svg.contains("class=\"figure dependency-cycle\""), "{svg}");
    }

    #[test]
    fn figures_are_inlined_and_nothing_is_fetched() {
        let dir = tempfile::tempdir().expect("tmp");
        let figures = dir.path().join("figures/D2");
        std::fs::create_dir_all(&figures).expect("mkdir");
        std::fs::write(figures.join("seed-1-throughput.svg"), SVG).expect("svg");
        let findings = dir.path().join("findings");
        let markdown = "# Findings report: demo\n\n\
            ![throughput of D2 seed-1](../figures/D2/seed-1-throughput.svg)\n\n\
            ![latency of D2 seed-1](../figures/D2/seed-1-latency.svg)\n\n\
            ![remote](https://example.com/x.svg)\n\n\
            See [the log](../logs/D2/seed-1/workload.stderr.log), [docs](https://example.com/docs) \
            and <https://example.com/auto>; an ![inline](../figures/D2/seed-1-throughput.svg).\n\n\
            <img src=\"http://example.com/t.png\"><script>alert(1)</script>\n\n\
            | a | b |\n|---|---|\n| 1 | 2 |\n";
        let html = render(markdown, &findings);
        assert!(
            html.contains("<title>Findings report: demo</title>"),
            "{html}"
        );
        assert!(
            html.contains(&format!("content=\"{CSP}\""))
                && CSP.contains("base-uri 'none'; form-action 'none'"),
            "{html}"
        );
        assert_eq!(html.matches("<svg").count(), 1, "{html}");
        assert_eq!(html.matches("<figcaption>").count(), 1, "{html}");
        assert!(html.contains("<figcaption>throughput of D2 seed-1</figcaption>"));
        assert!(
            html.contains("figure missing: ../figures/D2/seed-1-latency.svg ("),
            "{html}"
        );
        assert!(html.contains("<a href=\"../logs/D2/seed-1/workload.stderr.log\">the log</a>"));
        assert!(html.contains("<a href=\"../figures/D2/seed-1-throughput.svg\">inline</a>"));
        assert!(html.contains("docs (https://example.com/docs)"), "{html}");
        assert!(
            html.contains("<table>") && html.contains("<td>2</td>"),
            "{html}"
        );
        // The raw HTML is shown as text: no element of it is left.
        for fetch in ["<script", "href=\"http", "<img", "<link"] {
            assert!(!html.contains(fetch), "{fetch} in {html}");
        }
        assert!(
            html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{html}"
        );
    }

    /// The results table becomes a section per row, its long cells folded and its
    /// text still escaped; each run's figures move into its section; the contents
    /// list every section and run.
    #[test]
    fn each_scenario_is_a_section_with_its_figures_and_long_evidence_folded() {
        let dir = tempfile::tempdir().expect("tmp");
        let figures = dir.path().join("figures/D2");
        std::fs::create_dir_all(&figures).expect("mkdir");
        std::fs::write(figures.join("seed-1-latency.svg"), SVG).expect("svg");
        let long = "seed 1: pause-n3 landed (declared signal seen), injected yes; ".repeat(5);
        let markdown = format!(
            "# Findings report: demo\n\n**Result: FAIL.**\n\n## Summary\n\n- one\n\n\
             ## Scenario results\n\n\
             | ID | Scenario | Verdict | Oracle | Landing | Artifacts |\n|---|---|---|---|---|---|\n\
             | D2 | paused_follower | PASS-smoke — passed | <img src=x onerror=alert(1)> | {long} | [D2.md](D2.md) |\n\
             | D5 (all arms) | every_surface | PARTIAL-surface | — | see arms | — |\n\n\
             ## Findings\n\n### F1: D3 lost\n\n- **Anomalies:** 8\n{}\n\
             ## Figures\n\nIntro.\n\n### Figures of D2\n\nseed-1 (the last seed run):\n\n\
             ![latency of D2 seed-1](../figures/D2/seed-1-latency.svg)\n\n\
             ### Figures of D9\n\n![latency of D9 seed-1](../figures/D9/seed-1-latency.svg)\n\n\
             ## Session verdict\n\n**FAIL**\n",
            (1..=8)
                .map(|n| format!("  - anomaly {n}\n"))
                .collect::<String>()
        );
        let html = render(&markdown, &dir.path().join("findings"));
        let d2 = html
            .find("<section class=\"run tone-none\" id=\"run-D2\">")
            .expect("D2's section");
        let d5 = html.find("id=\"run-D5\">").expect("D5's section");
        let figures_part = html
            .find("<section class=\"part\" id=\"figures\">")
            .expect("figures");
        // D2's figure stands in its section; D9 has none, so its figures stay.
        let figure = html
            .find("<figcaption>latency of D2 seed-1</figcaption>")
            .expect("figure");
        assert!(d2 < figure && figure < d5 && d5 < figures_part, "{html}");
        assert!(
            html[figures_part..].contains("figures/D9/seed-1-latency.svg"),
            "{html}"
        );
        assert!(
            html[figures_part..].contains("class=\"moved-note\""),
            "{html}"
        );
        assert!(!html[figures_part..].contains("Figures of D2"), "{html}");
        // A cell's raw HTML is text; the long one is folded under its first words.
        assert!(
            html.contains("<dt>Oracle</dt><dd>&lt;img src=x onerror=alert(1)&gt;</dd>"),
            "{html}"
        );
        assert!(!html.contains("<img"), "{html}");
        assert!(
            html.contains("<dt>Landing</dt><dd><details class=\"fold\"><summary><span class=\"fold-head\">seed 1: pause-n3 landed"),
            "{html}"
        );
        assert!(html.contains("<dd>see arms</dd>"), "{html}");
        // Eight anomalies are folded; the summary says how many.
        assert!(
            html.contains("<span class=\"fold-head\">8 entries</span>"),
            "{html}"
        );
        // The contents: every section, each run, each finding.
        let nav = &html[html.find("<nav").expect("nav")..html.find("</nav>").expect("end")];
        for link in [
            "#summary",
            "#scenario-results",
            "#run-D2",
            "#run-D5",
            "#findings",
            "#f1-d3-lost",
            "#figures",
            "#session-verdict",
        ] {
            assert!(nav.contains(&format!("href=\"{link}\"")), "{link}: {nav}");
        }
        assert!(html.contains("<h3 id=\"f1-d3-lost\">"), "{html}");
        assert!(
            html.contains("<h1 id=\"top\">Findings report: demo</h1>"),
            "{html}"
        );
        // No journal beside it: no dashboard.
        assert!(!html.contains("id=\"dashboard\""), "{html}");
    }

    #[test]
    fn report_html_sits_beside_the_report_with_its_stem() {
        assert_eq!(
            html_path(Path::new("/s/findings/report.md")),
            Some(PathBuf::from("/s/findings/report.html"))
        );
        assert_eq!(
            html_path(Path::new("/x/out")),
            Some(PathBuf::from("/x/out.html"))
        );
        assert_eq!(html_path(Path::new("/x/out.html")), None);
    }

    #[test]
    fn only_relative_destinations_are_local() {
        for local in ["../logs/a.log", "D3.md", "#top", "figures/x.svg"] {
            assert!(is_local(local), "{local}");
        }
        for away in [
            "https://x",
            "http://x",
            "//host/x",
            "file:///etc/passwd",
            "javascript:alert(1)",
            "mailto:a@b",
            "",
        ] {
            assert!(!is_local(away), "{away}");
        }
    }
}
