//! Log-pattern landing probes on real files, and sanitizing of child output.

use std::io::Write;
use std::time::Duration;

use faultline::nemesis::landing::LogWatch;
use faultline::sanitize;

#[tokio::test]
async fn only_lines_written_inside_the_window_count() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("n1.log");
    std::fs::write(
        &log,
        "WARN replication to n3 timed out (before the fault)\n",
    )
    .expect("write");
    let pattern = regex::Regex::new(r"replication to n3 timed out").expect("regex");
    let watch = LogWatch::begin(&log, pattern);
    assert_eq!(
        watch.poll().expect("poll"),
        None,
        "a pre-fault line proved landing"
    );

    let writer = {
        let log = log.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(&log)
                .expect("open");
            f.write_all(b"INFO ok\nWARN \x1b[31mreplication to n3 timed out\x1b[0m after 300ms\n")
                .expect("append");
        })
    };
    let found = watch
        .await_match(Duration::from_secs(3))
        .await
        .expect("poll");
    writer.await.expect("writer");
    assert_eq!(
        found.as_deref(),
        Some("WARN replication to n3 timed out after 300ms")
    );
}

#[tokio::test]
async fn a_signal_that_never_appears_is_reported_absent() {
    let dir = tempfile::tempdir().expect("tempdir");
    let watch = LogWatch::begin(
        &dir.path().join("missing.log"),
        regex::Regex::new("never").expect("regex"),
    );
    assert_eq!(
        watch
            .await_match(Duration::from_millis(100))
            .await
            .expect("poll"),
        None
    );
}

#[test]
fn sanitize_strips_escapes_and_controls() {
    assert_eq!(sanitize::line("a\x1b[2J\x1b[Hb"), "ab");
    assert_eq!(sanitize::line("t\x1b]0;title\x07x"), "tx");
    assert_eq!(sanitize::line("t\x1b]8;;u\x1b\\y"), "ty");
    assert_eq!(sanitize::line("bell\x07\rcr\tok"), "bellcr\tok");
    assert_eq!(sanitize::line("plain ✓"), "plain ✓");
}

#[test]
fn dcs_apc_and_eight_bit_c1_forms_are_removed_with_their_payload() {
    use faultline::sanitize::{decode, line};
    let raw = b"a\x1bP1$qsecret\x1b\\b\x1b_apc\x07c\x9b31md\x9d0;title\x07e\xffz";
    let shown = line(&decode(raw));
    assert_eq!(shown, "abcde\u{fffd}z");
}
