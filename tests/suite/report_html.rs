//! `findings/report.html` of the demo: drawn by headless Chromium with every figure
//! inline and a real size, holding nothing that fetches, opening at 1280x800 on the
//! session's verdict and a badge per scenario and arm; and report.md linking the
//! figures it is made from, every link pointing at a file that is there. Hostile
//! figures end as text or notes, in the browser too.

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;

/// How long one Chromium run may take before it is killed.
const CHROMIUM_LIMIT: Duration = Duration::from_secs(60);

/// Debian's `chromium`, or `None` after a loud SKIP (a failure under
/// `FAULTLINE_REQUIRE_CHROMIUM=1`, as in CI).
fn chromium() -> Option<PathBuf> {
    let found = which::which("chromium")
        .or_else(|_| which::which("chromium-browser"))
        .ok();
    let why =
        "no chromium on PATH (apt-get install chromium): report.html is not drawn in a browser";
    common::skipped("CHROMIUM", found.is_none().then(|| why.to_string()));
    found
}

/// Runs headless Chromium on `page` in a `size` window with `args` in a process group
/// of its own, its stdout into a file; killed (the whole group, by its pid) after
/// [`CHROMIUM_LIMIT`]. Returns stdout.
fn run_chromium(
    chromium: &Path,
    scratch: &Path,
    size: (u32, u32),
    args: &[String],
    page: &Path,
) -> String {
    let out = scratch.join("chromium.stdout");
    let err = scratch.join("chromium.stderr");
    let mut child = Command::new(chromium)
        .args(["--headless", "--no-sandbox", "--disable-gpu"])
        .args([
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!(
            "--user-data-dir={}",
            scratch.join("profile").display()
        ))
        .arg(format!("--window-size={},{}", size.0, size.1))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).expect("stdout file"))
        .stderr(std::fs::File::create(&err).expect("stderr file"))
        .process_group(0)
        .spawn()
        .expect("chromium starts");
    let pgid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).expect("pid"));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status);
        }
        if started.elapsed() > CHROMIUM_LIMIT {
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    // Whatever it left running (renderer, zygote) goes with it.
    let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL);
    let _ = child.wait();
    let stderr = std::fs::read_to_string(&err).unwrap_or_default();
    let status = status.unwrap_or_else(|| {
        panic!("chromium ran over {CHROMIUM_LIMIT:?} and was killed:\n{stderr}")
    });
    assert!(status.success(), "chromium failed ({status}):\n{stderr}");
    std::fs::read_to_string(&out).expect("chromium's stdout")
}

fn demo_findings() -> PathBuf {
    let run = common::demo_run();
    assert_eq!(
        run.out.status.code(),
        Some(1),
        "the demo ends FAIL:\n{}",
        String::from_utf8_lossy(&run.out.stderr)
    );
    common::session_of(&run.out).join("findings")
}

/// What the page measures of itself, written into `<pre id="measured">` (the
/// session timeline's legend is its figcaption, not a figure's).
const MEASURE: &str = r#"<pre id="measured"></pre>
<script>
const figures = [...document.querySelectorAll("svg.figure")].map(svg => {
  const r = svg.getBoundingClientRect();
  return { width: r.width, height: r.height, label: svg.getAttribute("aria-label") };
});
document.getElementById("measured").textContent = JSON.stringify({
  figures,
  figcaptions: document.querySelectorAll("figure:not(.session-timeline) > figcaption").length,
  tables: document.querySelectorAll("table").length,
});
</script>
"#;

/// `html` with `script` added before `</body>` and a policy that lets that inline
/// script run (and still forbids every fetch), drawn by Chromium in a `size` window;
/// the JSON the script wrote into `<pre id="measured">`.
fn measure(
    chromium: &Path,
    scratch: &Path,
    size: (u32, u32),
    html: &str,
    script: &str,
) -> serde_json::Value {
    let csp = "default-src 'none';";
    assert!(html.contains(csp), "report.html carries its policy");
    let measuring = html
        .replacen(csp, "default-src 'none'; script-src 'unsafe-inline';", 1)
        .replacen("</body>", &format!("{script}</body>"), 1);
    let page = scratch.join("measure.html");
    std::fs::write(&page, measuring).expect("copy");
    let dom = run_chromium(chromium, scratch, size, &["--dump-dom".into()], &page);
    let json = dom
        .split_once("<pre id=\"measured\">")
        .and_then(|(_, rest)| rest.split_once("</pre>"))
        .map(|(json, _)| {
            json.replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&amp;", "&")
        })
        .unwrap_or_else(|| panic!("no measurements in the DOM:\n{dom}"));
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"))
}

/// A screenshot of `page` in a `size` window: decoded, it is that size and not one
/// flat colour. Returns the PNG's path.
fn screenshot(chromium: &Path, scratch: &Path, size: (u32, u32), page: &Path) -> PathBuf {
    let png = scratch.join("screenshot.png");
    run_chromium(
        chromium,
        scratch,
        size,
        &[format!("--screenshot={}", png.display())],
        page,
    );
    let mut decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(&png).expect("screenshot written"),
    ));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().expect("a PNG");
    let mut pixels = vec![0; reader.output_buffer_size()];
    let frame = reader.next_frame(&mut pixels).expect("decodes");
    assert_eq!((frame.width, frame.height), size);
    let pixels = &pixels[..frame.buffer_size()];
    let step = reader.output_color_type().0.samples();
    let colours: std::collections::HashSet<&[u8]> = pixels.chunks(step).collect();
    assert!(
        colours.len() > 16,
        "the screenshot is (nearly) one flat colour: {} colours",
        colours.len()
    );
    png
}

#[test]
fn chromium_draws_the_demo_report_with_its_figures_inline() {
    let Some(chromium) = chromium() else {
        return;
    };
    let findings = demo_findings();
    let html = std::fs::read_to_string(findings.join("report.html")).expect("report.html");
    let scratch = tempfile::tempdir().expect("tmp");
    // A copy that measures itself.
    let measured = measure(&chromium, scratch.path(), (1280, 2000), &html, MEASURE);
    let figures = measured["figures"].as_array().expect("figures");
    assert!(figures.len() >= 6, "{measured}");
    for scenario in ["D2", "D3"] {
        let of = |name: &str| {
            figures.iter().any(|f| {
                f["label"]
                    .as_str()
                    .is_some_and(|l| l.starts_with(&format!("{name} of {scenario} seed-")))
            })
        };
        assert!(
            of("throughput") && of("latency") && of("quantiles"),
            "{scenario}'s figures are drawn: {measured}"
        );
    }
    for figure in figures {
        let (w, h) = (
            figure["width"].as_f64().unwrap_or(0.0),
            figure["height"].as_f64().unwrap_or(0.0),
        );
        assert!(w > 200.0 && h > 100.0, "too small: {figure}");
    }
    assert_eq!(
        measured["figcaptions"].as_u64(),
        Some(figures.len() as u64),
        "each figure is captioned: {measured}"
    );
    assert!(measured["tables"].as_u64() >= Some(1), "{measured}");

    // The report itself, unchanged, as a picture: it decodes and is not blank.
    let original = scratch.path().join("report.html");
    std::fs::write(&original, &html).expect("copy");
    screenshot(&chromium, scratch.path(), (1280, 2000), &original);
}

/// What the first screen holds: every dashboard badge (its run, verdict, link and
/// whether its target exists) and the session verdict, each with whether it lies
/// wholly inside the viewport; and per lane of the timeline, its bars, deciding bars
/// and fault windows by proof state.
const FIRST_SCREEN: &str = r##"<pre id="measured"></pre>
<script>
const vw = window.innerWidth, vh = window.innerHeight;
const inside = el => {
  const r = el.getBoundingClientRect();
  return r.width > 0 && r.height > 0 && r.left >= 0 && r.top >= 0 && r.right <= vw && r.bottom <= vh;
};
const badges = [...document.querySelectorAll("#dashboard a.badge")].map(a => {
  const href = a.getAttribute("href") || "";
  return {
    run: a.dataset.run, verdict: a.dataset.verdict, inside: inside(a),
    target: href.startsWith("#") && document.getElementById(href.slice(1)) !== null,
  };
});
const session = document.querySelector("#dashboard .session-verdict");
const lanes = [...document.querySelectorAll("#dashboard .lane:not(.axis)")].map(l => ({
  bars: l.querySelectorAll(".bar").length,
  deciding: l.querySelectorAll(".bar.deciding").length,
  proven: l.querySelectorAll(".fault.proof-proven").length,
  not_proven: l.querySelectorAll(".fault.proof-not-proven").length,
}));
const toc = document.querySelector("nav.toc");
document.getElementById("measured").textContent = JSON.stringify({
  vw, vh, badges, lanes,
  session: session && { verdict: session.dataset.sessionVerdict, inside: inside(session) },
  toc: toc && getComputedStyle(toc).position,
});
</script>
"##;

/// Issue 32 item 7: at 1280x800 the first screen holds the session's verdict and one
/// badge per scenario and arm, each linking to its section; the timeline has every
/// seed that ran, one deciding seed per run that ran, fault windows proven and not;
/// the contents stay in view. `FAULTLINE_SCREENSHOTS=1` also writes the first screen
/// to screenshots/report-dashboard.png.
#[test]
fn chromium_opens_the_demo_report_on_its_dashboard() {
    let Some(chromium) = chromium() else {
        return;
    };
    let findings = demo_findings();
    let html = std::fs::read_to_string(findings.join("report.html")).expect("report.html");
    let verdicts: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(findings.join("../verdicts.json")).expect("verdicts.json"),
    )
    .expect("json");
    let scratch = tempfile::tempdir().expect("tmp");
    let screen = (1280, 800);
    let m = measure(&chromium, scratch.path(), screen, &html, FIRST_SCREEN);
    // A window of `screen` draws a viewport as wide and a little less high (in
    // `--dump-dom`, Chromium takes its window frame off): what fits in it fits the
    // first screen of 1280x800.
    assert_eq!(m["vw"].as_u64(), Some(1280), "{m}");
    assert!(m["vh"].as_u64().is_some_and(|h| h > 500 && h <= 800), "{m}");

    // One badge per scenario and arm, each as verdicts.json says, in view, linked.
    let mut want = Vec::new();
    for scenario in verdicts["scenarios"].as_array().expect("scenarios") {
        let id = scenario["id"].as_str().expect("id");
        want.push((id.to_string(), scenario["verdict"].clone()));
        for run in scenario["runs"].as_array().expect("runs") {
            if run["id"] != id {
                want.push((
                    run["id"].as_str().expect("id").to_string(),
                    run["verdict"].clone(),
                ));
            }
        }
    }
    let badges = m["badges"].as_array().expect("badges");
    assert_eq!(badges.len(), want.len(), "{m}");
    assert!(
        badges.len() >= 10,
        "the demo has 8 scenarios and 2 arms: {m}"
    );
    for ((id, verdict), badge) in want.iter().zip(badges) {
        assert_eq!(badge["run"].as_str(), Some(id.as_str()), "{badge}");
        assert_eq!(&badge["verdict"], verdict, "{badge}");
        assert_eq!(
            badge["inside"], true,
            "{id}'s badge is not in the first screen: {m}"
        );
        assert_eq!(badge["target"], true, "{id}'s badge links nowhere: {badge}");
    }
    assert_eq!(m["session"]["verdict"], verdicts["session_verdict"], "{m}");
    assert_eq!(m["session"]["inside"], true, "{m}");
    // Each lane that ran a seed marks the one that decided it; the demo proves a
    // fault (D2) and fails to prove one (D4).
    let lanes = m["lanes"].as_array().expect("lanes");
    assert_eq!(lanes.len(), want.len(), "{m}");
    for lane in lanes {
        let deciding = u64::from(lane["bars"].as_u64() > Some(0));
        assert_eq!(lane["deciding"].as_u64(), Some(deciding), "{lane}");
    }
    let count = |key: &str| lanes.iter().filter_map(|l| l[key].as_u64()).sum::<u64>();
    assert!(
        count("bars") >= 8 && count("proven") > 0 && count("not_proven") > 0,
        "{m}"
    );
    assert_eq!(m["toc"], "sticky", "the contents stay in view: {m}");

    let original = scratch.path().join("report.html");
    std::fs::write(&original, &html).expect("copy");
    let png = screenshot(&chromium, scratch.path(), screen, &original);
    if std::env::var("FAULTLINE_SCREENSHOTS").as_deref() == Ok("1") {
        let to = Path::new(env!("CARGO_MANIFEST_DIR")).join("screenshots/report-dashboard.png");
        std::fs::copy(&png, &to).expect("screenshots/report-dashboard.png written");
    }
}

/// Figures someone else wrote into `figures/`: one whose text (a CDATA section) holds
/// markup is drawn with that markup as text; one with a `<foreignObject>` and one
/// with an XHTML element in its `<desc>` are notes. Drawn by Chromium, the page keeps
/// its own three `<meta>` and gains no script, frame, image, form or base element.
#[test]
fn chromium_draws_hostile_figures_as_text_or_notes() {
    let Some(chromium) = chromium() else {
        return;
    };
    let session = tempfile::tempdir().expect("tmp");
    let figures = session.path().join("figures/D1");
    std::fs::create_dir_all(&figures).expect("mkdir");
    let markup = "</text></svg></figure><meta http-equiv=refresh content='0;url=file:///tmp/evil.html'>\
        <base href=\"http://127.0.0.1:9/\"><script>document.title='ran'</script>\
        <img src=x onerror=\"document.title='ran'\"><iframe srcdoc=\"x\"></iframe>\
        <form action=\"http://127.0.0.1:9/\"><input type=password></form>";
    let xhtml = "xmlns=\"http://www.w3.org/1999/xhtml\"";
    for (name, svg) in [
        (
            "throughput",
            format!(
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"400\" height=\"200\">\
                 <text x=\"10\" y=\"20\"><![CDATA[{markup}]]></text></svg>"
            ),
        ),
        (
            "latency",
            format!(
                "<svg width=\"400\" height=\"200\"><foreignObject width=\"400\" height=\"200\">\
                 <div {xhtml}><![CDATA[ >{markup} ]]></div></foreignObject></svg>"
            ),
        ),
        (
            "quantiles",
            format!("<svg><desc><p {xhtml}><![CDATA[</p></desc></svg>{markup}]]></p></desc></svg>"),
        ),
    ] {
        std::fs::write(figures.join(format!("seed-1-{name}.svg")), svg).expect("svg");
    }
    let markdown = "# Findings report: hostile\n\n\
        ![throughput of D1 seed-1](../figures/D1/seed-1-throughput.svg)\n\n\
        ![latency of D1 seed-1](../figures/D1/seed-1-latency.svg)\n\n\
        ![quantiles of D1 seed-1](../figures/D1/seed-1-quantiles.svg)\n";
    let html = faultline::report::html::render(markdown, &session.path().join("findings"));
    assert_eq!(html.matches("figure missing").count(), 2, "{html}");
    let scratch = tempfile::tempdir().expect("tmp");
    let page = scratch.path().join("report.html");
    std::fs::write(&page, &html).expect("page");
    let dom = run_chromium(
        &chromium,
        scratch.path(),
        (1280, 800),
        &["--dump-dom".into()],
        &page,
    );
    // Still this page (a refresh would have left it), its title its own.
    assert!(
        dom.contains("<title>Findings report: hostile</title>"),
        "{dom}"
    );
    assert_eq!(
        dom.matches("<meta").count(),
        3,
        "only the page's own: {dom}"
    );
    for element in [
        "<script",
        "<iframe",
        "<img",
        "<form",
        "<input",
        "<base",
        "<foreignobject",
        "<foreignObject",
    ] {
        assert!(!dom.contains(element), "{element} in the DOM: {dom}");
    }
    assert_eq!(dom.matches("class=\"figure\"").count(), 1, "{dom}");
    assert!(
        dom.contains("&lt;script&gt;document.title='ran'&lt;/script&gt;"),
        "the markup is the figure's text: {dom}"
    );
}

#[test]
fn the_demo_report_html_fetches_nothing() {
    let findings = demo_findings();
    let html = std::fs::read_to_string(findings.join("report.html")).expect("report.html");
    for fetch in [
        "http://", "https://", "<script", "<link", "<img", "<iframe", "<object", "<embed", " src=",
        "@import", "<base",
    ] {
        assert!(!html.contains(fetch), "report.html holds `{fetch}`");
    }
    assert!(
        html.split("url(").skip(1).all(|rest| rest.starts_with('#')),
        "a url() that is not a fragment"
    );
    assert!(html.contains(
        "Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; \
         base-uri 'none'; form-action 'none'\""
    ));
    // Every image of report.md is a figure here, none missing.
    let markdown = std::fs::read_to_string(findings.join("report.md")).expect("report.md");
    let images = markdown.matches("![").count();
    assert!(images >= 6, "report.md shows {images} figures");
    assert_eq!(html.matches("<figure>").count(), images);
    assert_eq!(html.matches("<svg ").count(), images);
    assert!(!html.contains("figure missing"), "a figure is missing");
}

#[test]
fn the_demo_report_md_links_its_figures_and_every_link_is_there() {
    use pulldown_cmark::{Event, Options, Parser, Tag};
    let findings = demo_findings();
    let markdown = std::fs::read_to_string(findings.join("report.md")).expect("report.md");
    let mut images = Vec::new();
    let mut links = Vec::new();
    for event in Parser::new_ext(&markdown, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::Image { dest_url, .. }) => images.push(dest_url.to_string()),
            Event::Start(Tag::Link { dest_url, .. }) => links.push(dest_url.to_string()),
            _ => {}
        }
    }
    // D2 passed with three seeds: its last is shown, the other two linked.
    for figure in ["throughput", "latency", "quantiles"] {
        let shown = format!("../figures/D2/seed-3-{figure}.svg");
        assert!(images.contains(&shown), "{shown} not shown: {images:?}");
        for seed in [1, 2] {
            let linked = format!("../figures/D2/seed-{seed}-{figure}.svg");
            assert!(links.contains(&linked), "{linked} not linked");
        }
        // D3 failed on its first seed: that one is shown, its re-run linked.
        assert!(images.contains(&format!("../figures/D3/seed-1-{figure}.svg")));
        assert!(links.contains(&format!("../figures/D3/seed-1-rerun-{figure}.svg")));
    }
    assert!(
        markdown.contains("![throughput of D2 seed-3](../figures/D2/seed-3-throughput.svg)"),
        "the alt text names the figure, the scenario and the seed"
    );
    for target in images.iter().chain(&links) {
        assert!(
            !target.contains("://"),
            "report.md links outside the session: {target}"
        );
        let path = findings.join(target.split('#').next().unwrap_or_default());
        assert!(path.exists(), "report.md links {target}: not there");
    }
    // Every figure drawn for a run is in the report, shown or linked.
    let session = findings.parent().expect("session");
    for stem in std::fs::read_dir(session.join("figures")).expect("figures/") {
        let stem = stem.expect("entry");
        for file in std::fs::read_dir(stem.path()).expect("a run's figures") {
            let name = file.expect("entry").file_name();
            let name = name.to_string_lossy();
            if name.ends_with(".svg") {
                let target = format!("../figures/{}/{name}", stem.file_name().to_string_lossy());
                assert!(
                    images.contains(&target) || links.contains(&target),
                    "{target} is not in report.md"
                );
            }
        }
    }
}
