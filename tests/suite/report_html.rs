//! `findings/report.html` of the demo: drawn by headless Chromium with every figure
//! inline and a real size, holding nothing that fetches; and report.md linking the
//! figures it is made from, every link pointing at a file that is there.

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

/// Runs headless Chromium on `page` with `args` in a process group of its own, its
/// stdout into a file; killed (the whole group, by its pid) after [`CHROMIUM_LIMIT`].
/// Returns stdout.
fn run_chromium(chromium: &Path, scratch: &Path, args: &[String], page: &Path) -> String {
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
        .arg("--window-size=1280,2000")
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

/// What the page measures of itself, written into `<pre id="measured">`.
const MEASURE: &str = r#"<pre id="measured"></pre>
<script>
const figures = [...document.querySelectorAll("svg.figure")].map(svg => {
  const r = svg.getBoundingClientRect();
  return { width: r.width, height: r.height, label: svg.getAttribute("aria-label") };
});
document.getElementById("measured").textContent = JSON.stringify({
  figures,
  figcaptions: document.querySelectorAll("figure > figcaption").length,
  tables: document.querySelectorAll("table").length,
});
</script>
"#;

#[test]
fn chromium_draws_the_demo_report_with_its_figures_inline() {
    let Some(chromium) = chromium() else {
        return;
    };
    let _g = common::demo_lock();
    let findings = demo_findings();
    let html = std::fs::read_to_string(findings.join("report.html")).expect("report.html");
    let scratch = tempfile::tempdir().expect("tmp");
    // A copy that measures itself: its policy lets this one inline script run (and
    // still forbids every fetch).
    let csp = "default-src 'none';";
    assert!(html.contains(csp), "report.html carries its policy");
    let measuring = html
        .replacen(csp, "default-src 'none'; script-src 'unsafe-inline';", 1)
        .replacen("</body>", &format!("{MEASURE}</body>"), 1);
    let page = scratch.path().join("measure.html");
    std::fs::write(&page, measuring).expect("copy");
    let dom = run_chromium(&chromium, scratch.path(), &["--dump-dom".into()], &page);
    let json = dom
        .split_once("<pre id=\"measured\">")
        .and_then(|(_, rest)| rest.split_once("</pre>"))
        .map(|(json, _)| {
            json.replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&amp;", "&")
        })
        .unwrap_or_else(|| panic!("no measurements in the DOM:\n{dom}"));
    let measured: serde_json::Value =
        serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"));
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
    let png = scratch.path().join("report.png");
    run_chromium(
        &chromium,
        scratch.path(),
        &[format!("--screenshot={}", png.display())],
        &original,
    );
    let mut decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(&png).expect("screenshot written"),
    ));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().expect("a PNG");
    let mut pixels = vec![0; reader.output_buffer_size()];
    let frame = reader.next_frame(&mut pixels).expect("decodes");
    assert_eq!((frame.width, frame.height), (1280, 2000));
    let pixels = &pixels[..frame.buffer_size()];
    let step = reader.output_color_type().0.samples();
    let colours: std::collections::HashSet<&[u8]> = pixels.chunks(step).collect();
    assert!(
        colours.len() > 16,
        "the screenshot is (nearly) one flat colour: {} colours",
        colours.len()
    );
}

#[test]
fn the_demo_report_html_fetches_nothing() {
    let _g = common::demo_lock();
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
    assert!(html.contains("Content-Security-Policy\" content=\"default-src 'none';"));
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
    let _g = common::demo_lock();
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
