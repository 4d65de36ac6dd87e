//! `findings/report.html`: report.md as one self-contained HTML file that opens like
//! a dashboard. Its top is the session's verdict and every scenario and arm as a
//! coloured badge on the session's timeline ([`dashboard`], read from the session's
//! journal through the reducer); below it report.md's text, laid out by [`layout`]:
//! a contents list that stays in view, the scenario table as one section per
//! scenario and arm with its figures beside it, long evidence folded. The figures
//! report.md links are read and inlined as `<svg>` elements, the style sheet is inside
//! the file, and nothing in it makes a browser fetch anything: no script, no external
//! style or font, no `src=`, and a Content-Security-Policy that forbids every fetch
//! anyway. Links to the session's own files (logs, findings) stay relative links.

mod dashboard;
mod layout;

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use pulldown_cmark::{CowStr, Event, LinkType, Options, Parser, Tag, TagEnd};
use quick_xml::events::{BytesCData, BytesStart, BytesText, Event as XmlEvent};
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
    let title = markdown
        .lines()
        .find_map(|l| l.strip_prefix("# "))
        .unwrap_or("Findings report")
        .trim();
    let dashboard = dashboard::Dashboard::load(base);
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    let events: Vec<Event<'_>> = Parser::new_ext(markdown, options).collect();
    let page = layout::page(&events, &mut Rewrite::new(base), dashboard.as_ref());
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n{}<main>\n{}</main>\n\
         </body>\n</html>\n",
        escape(title),
        page.nav,
        page.main
    )
}

/// Nothing may be fetched; only the style sheet inside the file applies.
const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'";

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
}

impl<'b> Rewrite<'b> {
    fn new(base: &'b Path) -> Rewrite<'b> {
        Rewrite { base, figures: 0 }
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
                            let html = figure(&dest, &alt, self.base, self.figures);
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
/// or a visible note saying why it is not there.
fn figure(dest: &str, alt: &str, base: &Path, n: usize) -> String {
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
    let inlined = std::fs::read_to_string(resolve(base, dest))
        .map_err(|e| e.to_string())
        .and_then(|text| inline_svg(&text, alt, n));
    match inlined {
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
/// inside it (`href="#…"`, `xlink:href="#…"`, `url(#…)` in an attribute or a
/// `<style>`) is prefixed alike, so it still points into its own figure. A file that
/// is not well-formed XML, whose document is not an `<svg>`, or that holds a script
/// (a `<script>` or an `on…` handler) is refused with the reason: the report says
/// the figure is missing and why.
fn inline_svg(text: &str, alt: &str, n: usize) -> Result<String, String> {
    fn write(writer: &mut Writer<Vec<u8>>, event: XmlEvent<'_>) -> Result<(), String> {
        writer
            .write_event(event)
            .map_err(|e| format!("the SVG could not be written: {e}"))
    }
    let prefix = format!("f{n}-");
    let mut reader = Reader::from_str(text);
    let mut writer = Writer::new(Vec::new());
    // Elements open inside the figure (the root counts), and the depth of an open
    // `<style>` whose text may hold `url(#…)`.
    let mut depth = 0usize;
    let mut style: Option<usize> = None;
    loop {
        let event = reader.read_event().map_err(|e| {
            format!(
                "not well-formed XML at byte {}: {e}",
                reader.error_position()
            )
        })?;
        match event {
            XmlEvent::Start(ref e) | XmlEvent::Empty(ref e)
                if depth == 0 && e.name().into_inner() != "svg" =>
            {
                return Err("no <svg> element".into());
            }
            XmlEvent::Start(e) => {
                let out = element(&e, &prefix, (depth == 0).then_some(alt))?;
                depth += 1;
                if is_named(&e, "style") {
                    style.get_or_insert(depth);
                }
                write(&mut writer, XmlEvent::Start(out))?;
            }
            XmlEvent::Empty(e) => {
                let out = element(&e, &prefix, (depth == 0).then_some(alt))?;
                write(&mut writer, XmlEvent::Empty(out))?;
                if depth == 0 {
                    break;
                }
            }
            XmlEvent::End(e) => {
                if style == Some(depth) {
                    style = None;
                }
                depth = depth.saturating_sub(1);
                write(&mut writer, XmlEvent::End(e))?;
                if depth == 0 {
                    break;
                }
            }
            XmlEvent::Text(t) if depth > 0 => {
                let t = match style {
                    Some(_) => BytesText::from_escaped(references(&t.into_inner(), &prefix)),
                    None => t,
                };
                write(&mut writer, XmlEvent::Text(t))?;
            }
            XmlEvent::CData(t) if depth > 0 => {
                let t = match style {
                    Some(_) => BytesCData::new(references(&t.into_inner(), &prefix)),
                    None => t,
                };
                write(&mut writer, XmlEvent::CData(t))?;
            }
            // `&lt;`, `&#233;`: what HTML reads alike; another entity is not defined here.
            XmlEvent::GeneralRef(r) if depth > 0 => {
                let known = match r.resolve_char_ref() {
                    Ok(Some(c)) => c != '\0',
                    Ok(None) => matches!(
                        &*r.clone().into_inner(),
                        "lt" | "gt" | "amp" | "apos" | "quot"
                    ),
                    Err(_) => false,
                };
                if !known {
                    return Err(format!("an undefined entity &{};", r.into_inner()));
                }
                write(&mut writer, XmlEvent::GeneralRef(r))?;
            }
            XmlEvent::Eof if depth == 0 => return Err("no <svg> element".into()),
            XmlEvent::Eof => return Err("no closing </svg>".into()),
            // The prolog, comments, processing instructions, and blanks around the root.
            _ => {}
        }
    }
    String::from_utf8(writer.into_inner()).map_err(|e| e.to_string())
}

/// Whether an element's local name is `name` (any case: `<SCRIPT>` is a script too).
fn is_named(e: &BytesStart<'_>, name: &str) -> bool {
    e.local_name().into_inner().eq_ignore_ascii_case(name)
}

/// One element of the figure with its attributes rewritten: namespace declarations
/// left out, `xlink:href` as `href`, its id and its references to ids prefixed. The
/// root (`alt` given) also gets class `figure`, a viewBox from its width and height
/// when it has none, and `role="img"` with `alt` as its label (in place of its own).
fn element(
    e: &BytesStart<'_>,
    prefix: &str,
    alt: Option<&str>,
) -> Result<BytesStart<'static>, String> {
    if is_named(e, "script") {
        return Err("it holds a script".into());
    }
    let bad = |why: quick_xml::events::attributes::AttrError| {
        format!(
            "a malformed attribute in <{}>: {why}",
            e.name().into_inner()
        )
    };
    let mut out = BytesStart::new(e.name().into_inner().to_string());
    let (mut width, mut height, mut view_box, mut class) = (None, None, false, false);
    for attr in e.attributes() {
        let attr = attr.map_err(bad)?;
        let key = attr.key.into_inner();
        let lower = key.to_ascii_lowercase();
        if lower.starts_with("on") {
            return Err("it holds a script".into());
        }
        if key == "xmlns" || key.starts_with("xmlns:") {
            continue;
        }
        let value = attr
            .normalized_value(XmlVersion::Explicit1_0)
            .map_err(|why| format!("an attribute of <{}>: {why}", e.name().into_inner()))?;
        let key = if key == "xlink:href" { "href" } else { key };
        let value = match key {
            "id" => format!("{prefix}{value}"),
            "href" => match value.strip_prefix('#') {
                Some(id) => format!("#{prefix}{id}"),
                None => value.into_owned(),
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
    Ok(out)
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
    /// `url(#…)`, in an attribute or a style sheet), read back with an XML reader.
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
        let mut in_style = false;
        loop {
            match reader
                .read_event()
                .expect("the inlined SVG is well-formed XML")
            {
                XmlEvent::End(e) => in_style &= e.name().into_inner() != "style",
                XmlEvent::Start(e) | XmlEvent::Empty(e) => {
                    in_style |= e.name().into_inner() == "style";
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
                XmlEvent::Text(t) if in_style => urls(&t.into_inner(), &mut refs),
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
            width=\"640px\" height=\"480\" class=\"chart\" role=\"graphics-document\">\
            <style>.line { clip-path: url(#clip); } .fill { fill: url('#grad') }</style>\
            <defs><clipPath id=\"clip\"><rect width=\"10\" height=\"10\"/></clipPath>\
            <linearGradient id=\"grad\"/><path id=\"tick\" d=\"M0 0\"/></defs>\
            <g clip-path=\"url(#clip)\" fill=\"url(&quot;#grad&quot;)\">\
            <use xlink:href=\"#tick\" x=\"1\"/><use href=\"#tick\" x=\"2\"/></g>\
            <text x=\"1\">a &lt; b &amp; url(#clip) stays text</text>\
            <a href=\"seed-2.svg\"><rect/></a></svg>\n<!-- after -->\n";
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
            // clip-path and fill twice (style sheet, attribute), the two uses.
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
                svg.starts_with("<svg width=\"640px\" height=\"480\" class=\"figure chart\" viewBox=\"0 0 640 480\" role=\"img\" aria-label=\""),
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
            // Text is not a reference and stays escaped; other links are left alone.
            assert!(
                svg.contains(">a &lt; b &amp; url(#clip) stays text</text>"),
                "{svg}"
            );
            assert!(svg.contains("<a href=\"seed-2.svg\"><rect/></a>"), "{svg}");
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
