//! A log as it stood at a replayed moment. The journal records no log offsets (the
//! engine hands each child a file and never reads it back), so the cut is on the
//! time each line carries: a line stamped after the moment, and everything appended
//! after it, is not shown. A line with no stamp of its own (a stack trace's
//! continuation) goes with the line before it; lines before the first stamp go with
//! the first. A file not modified since the moment is shown whole without reading
//! stamps; one that carries none is not shown until then.
//!
//! Stamps are read at a line's start (after an optional `[`): RFC 3339 / ISO 8601
//! (`2026-12-03T03:00:00.123Z`, `2026-12-03 03:00:00,123`, `2026/12/03 03:00:00`,
//! with or without a zone) or a time of day (`03:00:00.123`, the demo's). A stamp
//! without a zone is read in UTC, unless UTC puts the log's first line before its
//! command started or after its last write and the local zone does not; a time of
//! day takes its date from the command's start, and the next day's once the clock
//! goes back by more than twelve hours.

use std::collections::HashMap;
use std::io::{BufRead, Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex, PoisonError};

use crate::tui::files::Rebase;
use chrono::{DateTime, Duration, NaiveDate, NaiveDateTime, NaiveTime, TimeZone, Utc};

/// Bytes of a line's start read for its stamp.
const HEAD: usize = 64;
/// Slack on the bounds a zone is checked against (clocks, mtime granularity).
const SLACK_S: i64 = 5;
/// Logs whose stamps are kept indexed (the replayed session's, a few at a time).
const INDEXED: usize = 64;

static STAMP: LazyLock<Option<regex::Regex>> = LazyLock::new(|| {
    regex::Regex::new(
        r"^\s*\[?(?:(\d{4})[-/](\d{2})[-/](\d{2})[T ])?(\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?",
    )
    .ok()
});

/// A stamp as written: a full date-time (with its zone's offset when it has one)
/// or a time of day.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Stamp {
    At(NaiveDateTime, Option<i32>),
    TimeOfDay(NaiveTime),
}

fn stamp_of(head: &[u8]) -> Option<Stamp> {
    let text = String::from_utf8_lossy(head);
    let c = STAMP.as_ref()?.captures(&text)?;
    let num = |i: usize| c.get(i).and_then(|m| m.as_str().parse::<u32>().ok());
    let nanos = c.get(7).map_or(Some(0), |m| {
        let digits = m.as_str();
        let n: u32 = digits.parse().ok()?;
        Some(n * 10u32.pow(9 - u32::try_from(digits.len()).ok()?))
    })?;
    let time = NaiveTime::from_hms_nano_opt(num(4)?, num(5)?, num(6)?, nanos)?;
    let Some(year) = c.get(1).and_then(|m| m.as_str().parse::<i32>().ok()) else {
        return Some(Stamp::TimeOfDay(time));
    };
    let date = NaiveDate::from_ymd_opt(year, num(2)?, num(3)?)?;
    let offset = match c.get(8).map(|m| m.as_str()) {
        None => None,
        Some("Z") => Some(0),
        Some(zone) => {
            let sign = if zone.starts_with('-') { -1 } else { 1 };
            let digits: String = zone.chars().filter(char::is_ascii_digit).collect();
            let h: i32 = digits.get(..2)?.parse().ok()?;
            let m: i32 = digits.get(2..)?.parse().ok()?;
            Some(sign * (h * 3600 + m * 60))
        }
    };
    Some(Stamp::At(date.and_time(time), offset))
}

/// How stamps without a zone are placed in time: an offset east of UTC, and for a
/// time of day, the moment it is dated near (its command's start, in that zone) and
/// the day it counts in.
#[derive(Debug, Clone, Copy)]
struct Reading {
    offset_s: i32,
    anchor: NaiveDateTime,
    day: Option<NaiveDate>,
    last: Option<NaiveDateTime>,
}

impl Reading {
    fn new(offset_s: i32, anchor: DateTime<Utc>) -> Reading {
        Reading {
            offset_s,
            anchor: anchor.naive_utc() + Duration::seconds(i64::from(offset_s)),
            day: None,
            last: None,
        }
    }

    /// `stamp` in UTC milliseconds.
    fn place(&mut self, stamp: Stamp) -> Option<i64> {
        let local = match stamp {
            Stamp::At(at, Some(offset)) => {
                let utc = at - Duration::seconds(i64::from(offset));
                return Some(utc.and_utc().timestamp_millis());
            }
            Stamp::At(at, None) => at,
            Stamp::TimeOfDay(time) => {
                let day = match self.day {
                    Some(day) => day,
                    // The first: the day that puts it nearest the anchor.
                    None => {
                        let near = self.anchor.date();
                        [near.pred_opt(), Some(near), near.succ_opt()]
                            .into_iter()
                            .flatten()
                            .min_by_key(|d| (d.and_time(time) - self.anchor).num_seconds().abs())?
                    }
                };
                let mut at = day.and_time(time);
                self.day = Some(day);
                // Past midnight: the clock went back by more than half a day.
                if let Some(last) = self.last
                    && last - at > Duration::hours(12)
                {
                    let next = day.succ_opt()?;
                    self.day = Some(next);
                    at = next.and_time(time);
                }
                self.last = Some(at);
                at
            }
        };
        let utc = local - Duration::seconds(i64::from(self.offset_s));
        Some(utc.and_utc().timestamp_millis())
    }
}

/// The zone a log's stamps without one are read in: UTC unless its first stamp
/// read so lies outside what is possible (before its command started, after the
/// file's last write) and read in the local zone does not.
fn reading_for(first: Stamp, started: Option<DateTime<Utc>>, modified: DateTime<Utc>) -> Reading {
    let anchor = started.unwrap_or(modified);
    let local = chrono::Local
        .offset_from_utc_datetime(&anchor.naive_utc())
        .local_minus_utc();
    let possible = |offset_s: i32| {
        let Some(ms) = Reading::new(offset_s, anchor).place(first) else {
            return false;
        };
        let after_start =
            started.is_none_or(|s| ms >= (s - Duration::seconds(SLACK_S)).timestamp_millis());
        after_start && ms <= (modified + Duration::seconds(SLACK_S)).timestamp_millis()
    };
    if !possible(0) && possible(local) {
        Reading::new(local, anchor)
    } else {
        Reading::new(0, anchor)
    }
}

/// What is known of one log's stamps: where each new latest stamp begins, so the
/// first line stamped after a moment is found by a binary search.
#[derive(Debug, Clone, Default)]
struct Index {
    file: (u64, u64),
    /// Read up to here (a line's start); what follows is read on the next look.
    scanned: u64,
    /// `(offset of the line, its stamp in UTC ms)` where the latest stamp so far
    /// grows, ascending in both.
    steps: Vec<(u64, i64)>,
    reading: Option<Reading>,
    /// Offset of the first line, when no stamp was found before it.
    unstamped_from: Option<u64>,
    /// A log too long to index: the last cut searched, for its length and moment.
    searched: Option<((u64, i64), Cut)>,
}

impl Index {
    /// Reads the lines appended since the last look (a partial last line is read
    /// again next time, and counts now).
    fn scan(
        &mut self,
        file: &mut std::fs::File,
        len: u64,
        started: Option<DateTime<Utc>>,
        modified: DateTime<Utc>,
    ) -> std::io::Result<()> {
        file.seek(SeekFrom::Start(self.scanned))?;
        let mut reader = std::io::BufReader::new(file.take(len - self.scanned));
        let mut start = self.scanned;
        let mut pos = self.scanned;
        let mut head: Vec<u8> = Vec::with_capacity(HEAD);
        loop {
            let buf = reader.fill_buf()?;
            if buf.is_empty() {
                break;
            }
            let newline = buf.iter().position(|b| *b == b'\n');
            let part = &buf[..newline.unwrap_or(buf.len())];
            let room = HEAD.saturating_sub(head.len());
            head.extend_from_slice(&part[..part.len().min(room)]);
            let used = part.len() + usize::from(newline.is_some());
            reader.consume(used);
            pos += used as u64;
            if newline.is_some() {
                self.line(start, &head, started, modified);
                head.clear();
                start = pos;
            }
        }
        if !head.is_empty() {
            self.line(start, &head, started, modified);
        }
        self.scanned = start;
        Ok(())
    }

    fn line(
        &mut self,
        at: u64,
        head: &[u8],
        started: Option<DateTime<Utc>>,
        modified: DateTime<Utc>,
    ) {
        let Some(stamp) = stamp_of(head) else {
            if self.steps.is_empty() {
                self.unstamped_from.get_or_insert(at);
            }
            return;
        };
        let reading = self
            .reading
            .get_or_insert_with(|| reading_for(stamp, started, modified));
        let Some(ms) = reading.place(stamp) else {
            return;
        };
        if self.steps.last().is_none_or(|(_, max)| ms > *max) {
            // Lines before the first stamp go with it.
            let from = if self.steps.is_empty() {
                self.unstamped_from.unwrap_or(at)
            } else {
                at
            };
            self.steps.push((from, ms));
        }
    }

    /// Where the log stands at `at_ms`: the offset of the first line stamped after
    /// it; `None` when no line carries a stamp.
    fn cut(&self, at_ms: i64) -> Option<u64> {
        self.steps.first()?;
        let i = self.steps.partition_point(|(_, ms)| *ms <= at_ms);
        Some(self.steps.get(i).map_or(u64::MAX, |(offset, _)| *offset))
    }
}

static INDEXES: LazyLock<Mutex<HashMap<PathBuf, Index>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// What the pane shows of `path` (placed for `rebase`, a replay's) at `at`: its last
/// `cap` bytes before the first line stamped after `at` (whole lines, sanitized),
/// or one line saying why none.
pub fn tail_at(
    rebase: Option<&Rebase>,
    path: &Path,
    cap: u64,
    at: DateTime<Utc>,
    started: Option<&str>,
) -> Vec<String> {
    let shown = || -> std::io::Result<Vec<String>> {
        let mut file = crate::tui::files::open_placed(rebase, path)?;
        let len = file.metadata()?.len();
        Ok(match cut_at(&mut file, path, at, started, WHOLE_INDEX)? {
            Cut::Whole => super::run::lines_of(&super::run::bytes_before(&mut file, len, cap)?),
            Cut::At(end) => super::run::lines_of(&super::run::bytes_before(&mut file, end, cap)?),
            Cut::Untimed(modified) => vec![format!(
                "(its lines carry no time: shown as written by {}, once replayed to then)",
                super::local_time(&modified.to_rfc3339())
            )],
        })
    };
    shown().unwrap_or_else(|e| vec![super::run::unreadable(path, &e)])
}

/// Where a log is cut at a moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cut {
    /// Not written to since: all of it.
    Whole,
    /// Up to this offset.
    At(u64),
    /// Written to since, and no line says when: nothing, until the moment reaches
    /// its last write.
    Untimed(DateTime<Utc>),
}

/// Logs up to this long are indexed whole (then on from where the last look
/// stopped); a longer one is bisected ([`search`]), so the first look at a log of
/// any size reads a few hundred KiB of it at most.
const WHOLE_INDEX: u64 = 4 << 20;

fn cut_at(
    file: &mut std::fs::File,
    path: &Path,
    at: DateTime<Utc>,
    started: Option<&str>,
    whole_index: u64,
) -> std::io::Result<Cut> {
    let meta = file.metadata()?;
    let modified: DateTime<Utc> = meta.modified()?.into();
    if modified <= at {
        return Ok(Cut::Whole);
    }
    let started = started
        .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
        .map(|s| s.with_timezone(&Utc));
    let id = (meta.dev(), meta.ino());
    let len = meta.len();
    let mut indexes = INDEXES.lock().unwrap_or_else(PoisonError::into_inner);
    if indexes.len() >= INDEXED && !indexes.contains_key(path) {
        indexes.clear();
    }
    let index = indexes.entry(path.to_path_buf()).or_default();
    // Another file under the name, or this one cut short: read from its start.
    if index.file != id || len < index.scanned {
        *index = Index {
            file: id,
            ..Index::default()
        };
    }
    if len > whole_index {
        let key = (len, at.timestamp_millis());
        if let Some((k, cut)) = index.searched
            && k == key
        {
            return Ok(cut);
        }
        let (cut, _) = search(file, len, at, started, modified)?;
        index.searched = Some((key, cut));
        return Ok(cut);
    }
    if len > index.scanned {
        index.scan(file, len, started, modified)?;
    }
    Ok(match index.cut(at.timestamp_millis()) {
        Some(offset) => Cut::At(offset.min(len)),
        None => Cut::Untimed(modified),
    })
}

/// The most a probe of [`search`] reads looking for a stamped line.
const PROBE: u64 = 256 * 1024;
/// Where [`search`] stops bisecting and reads on line by line.
const WINDOW: u64 = 64 * 1024;

/// The cut of a log too long to index, and the bytes read to find it: bisected on
/// offsets, each probe reading the first stamped line after it (a log's lines are
/// taken to be written in order). A stamp without a zone is read in the zone its
/// first stamp puts the log in ([`reading_for`]); a time of day on the day that
/// puts it nearest the moment. A log with no stamp in its first [`PROBE`] bytes is
/// taken to carry none.
fn search(
    file: &mut std::fs::File,
    len: u64,
    at: DateTime<Utc>,
    started: Option<DateTime<Utc>>,
    modified: DateTime<Utc>,
) -> std::io::Result<(Cut, u64)> {
    let at_ms = at.timestamp_millis();
    let mut read = 0u64;
    let mut first = None;
    read += lines(file, 0, len, false, PROBE, |_, head| {
        first = stamp_of(head);
        first.is_some()
    })?;
    let Some(first) = first else {
        return Ok((Cut::Untimed(modified), read));
    };
    let offset_s = reading_for(first, started, modified).offset_s;
    let ms_of = |stamp| Reading::new(offset_s, at).place(stamp);
    // The first stamped line at or after `from` (a line start when `from` is 0, else
    // after the line `from` falls in), before `to`.
    let probe = |file: &mut std::fs::File, from: u64, to: u64, read: &mut u64| {
        let mut found = None;
        *read += lines(file, from, to, from > 0, PROBE, |start, head| {
            found = stamp_of(head).and_then(ms_of).map(|ms| (start, ms));
            found.is_some()
        })?;
        std::io::Result::Ok(found)
    };
    // Lines before the first stamp go with it.
    if probe(file, 0, len, &mut read)?.is_some_and(|(_, ms)| ms > at_ms) {
        return Ok((Cut::At(0), read));
    }
    // The cut is a line start in [lo, hi), else `cut`.
    let (mut lo, mut hi, mut cut) = (0u64, len, len);
    while hi - lo > WINDOW {
        let mid = lo + (hi - lo) / 2;
        match probe(file, mid, cut, &mut read)? {
            Some((start, ms)) if ms <= at_ms => lo = start + 1,
            Some((start, _)) => {
                cut = start;
                hi = mid;
            }
            // Nothing stamped from `mid` on before `cut`: what is there goes with a
            // line before it.
            None => hi = mid,
        }
    }
    let mut found = None;
    let budget = (cut - lo).min(WINDOW + 2 * PROBE);
    read += lines(file, lo, cut, lo > 0, budget, |start, head| {
        found = stamp_of(head)
            .and_then(ms_of)
            .filter(|ms| *ms > at_ms)
            .map(|_| start);
        found.is_some()
    })?;
    Ok((Cut::At(found.unwrap_or(cut).min(len)), read))
}

/// Calls `each` with the start and first [`HEAD`] bytes of every line starting in
/// `[from, to)` (after the line `from` falls in, when `skip_partial`), until it
/// says stop or `budget` bytes were read; the bytes read.
fn lines(
    file: &mut std::fs::File,
    from: u64,
    to: u64,
    skip_partial: bool,
    budget: u64,
    mut each: impl FnMut(u64, &[u8]) -> bool,
) -> std::io::Result<u64> {
    if from >= to {
        return Ok(0);
    }
    file.seek(SeekFrom::Start(from))?;
    let mut reader = std::io::BufReader::with_capacity(16 * 1024, (&*file).take(budget));
    let mut pos = from;
    let mut skipping = skip_partial;
    let mut head: Vec<u8> = Vec::with_capacity(HEAD);
    let mut start = from;
    loop {
        if !skipping && start >= to {
            break;
        }
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        let newline = buf.iter().position(|b| *b == b'\n');
        let part = &buf[..newline.unwrap_or(buf.len())];
        if !skipping {
            let room = HEAD.saturating_sub(head.len());
            head.extend_from_slice(&part[..part.len().min(room)]);
        }
        let used = part.len() + usize::from(newline.is_some());
        reader.consume(used);
        pos += used as u64;
        if newline.is_some() {
            if !skipping && each(start, &head) {
                return Ok(pos - from);
            }
            skipping = false;
            head.clear();
            start = pos;
        }
    }
    if !skipping && !head.is_empty() && start < to {
        each(start, &head);
    }
    Ok(pos - from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn utc(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text)
            .expect("a time")
            .with_timezone(&Utc)
    }

    #[test]
    fn stamps_are_read_in_the_common_forms() {
        let ms = |line: &str| {
            let stamp = stamp_of(line.as_bytes())?;
            Reading::new(0, utc("2026-12-03T03:00:00Z")).place(stamp)
        };
        let at = utc("2026-12-03T03:00:01.250Z").timestamp_millis();
        assert_eq!(ms("03:00:01.250 n1 started"), Some(at));
        assert_eq!(ms("2026-12-03T03:00:01.250Z x"), Some(at));
        assert_eq!(ms("[2026-12-03 03:00:01,250] x"), Some(at));
        assert_eq!(ms("2026/12/03 03:00:01.25 x"), Some(at));
        assert_eq!(ms("2026-12-03T05:00:01.250+02:00 x"), Some(at));
        assert_eq!(ms("  at frame 3"), None);
        assert_eq!(ms("12:3 not a time"), None);
    }

    /// A log written while a moment was replayed: what came after it is not shown,
    /// a continuation goes with its line, and appended lines are read on the next
    /// look (only they).
    #[test]
    fn a_log_is_cut_at_the_first_line_stamped_after_the_moment() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("n1.stderr.log");
        let mut file = std::fs::File::create(&path).expect("log");
        writeln!(file, "starting up").expect("write");
        writeln!(file, "03:00:01.000 n1 listening").expect("write");
        writeln!(file, "03:00:02.000 n1 took write k1").expect("write");
        writeln!(file, "  continued").expect("write");
        writeln!(file, "03:00:03.000 n1 took write k2").expect("write");
        file.flush().expect("flush");
        // Last written after every moment replayed here.
        let later = std::time::SystemTime::from(utc("2026-12-03T03:00:10Z"));
        file.set_modified(later).expect("mtime");
        let started = Some("2026-12-03T03:00:00.500Z");
        let shown = |at: &str| tail_at(None, &path, 64 * 1024, utc(at), started);
        assert_eq!(shown("2026-12-03T03:00:00.900Z"), Vec::<String>::new());
        assert_eq!(
            shown("2026-12-03T03:00:02.500Z"),
            vec![
                "starting up",
                "03:00:01.000 n1 listening",
                "03:00:02.000 n1 took write k1",
                "  continued"
            ]
        );
        assert_eq!(shown("2026-12-03T03:00:03.000Z").len(), 5);
        writeln!(file, "03:00:04.000 n1 took write k3").expect("write");
        file.flush().expect("flush");
        file.set_modified(later).expect("mtime");
        assert_eq!(shown("2026-12-03T03:00:03.500Z").len(), 5);
        assert_eq!(
            shown("2026-12-03T03:00:04.000Z").last().map(String::as_str),
            Some("03:00:04.000 n1 took write k3")
        );
        // A log whose lines say no time is not shown before its last write.
        let plain = dir.path().join("client.stdout.log");
        std::fs::write(&plain, "one\ntwo\n").expect("plain log");
        let said = tail_at(None, &plain, 1024, utc("2026-12-03T03:00:01Z"), started);
        assert_eq!(said.len(), 1);
        assert!(said[0].contains("carry no time"), "{said:?}");
        // Not written to since the moment: whole.
        assert_eq!(
            tail_at(
                None,
                &plain,
                1024,
                chrono::Utc::now() + Duration::seconds(60),
                started
            ),
            vec!["one", "two"]
        );
    }

    #[test]
    fn a_time_of_day_rolls_over_midnight() {
        let mut reading = Reading::new(0, utc("2026-12-03T23:59:58Z"));
        let late = stamp_of(b"23:59:59.000 x").expect("stamp");
        let early = stamp_of(b"00:00:01.000 x").expect("stamp");
        assert_eq!(
            reading.place(late),
            Some(utc("2026-12-03T23:59:59Z").timestamp_millis())
        );
        assert_eq!(
            reading.place(early),
            Some(utc("2026-12-04T00:00:01Z").timestamp_millis())
        );
    }

    /// A log too long to index is bisected: it is cut where the whole index cuts it,
    /// at every moment, reading a small part of it.
    #[test]
    fn a_long_log_is_cut_without_reading_it_whole() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("n1.stderr.log");
        let mut out = std::io::BufWriter::new(std::fs::File::create(&path).expect("log"));
        writeln!(out, "preamble without a time").expect("write");
        // 200 000 lines over 2 000 s, one in every 7 with a continuation.
        // The stamps are written by hand from 03:00:00.000: chrono's formatting
        // at the tests' opt-level 0 took most of this test's time.
        let pad = "x".repeat(40);
        for i in 0..200_000usize {
            let ms = i * 10;
            let (h, m, s) = (3 + ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60);
            writeln!(
                out,
                "{h:02}:{m:02}:{s:02}.{:03} n1 op {i} {}",
                ms % 1000,
                &pad[..i % 40]
            )
            .expect("write");
            if i % 7 == 0 {
                writeln!(out, "  at frame {i}").expect("write");
            }
        }
        out.flush().expect("flush");
        drop(out);
        let later = std::time::SystemTime::from(utc("2026-12-03T04:00:00Z"));
        std::fs::File::options()
            .append(true)
            .open(&path)
            .expect("reopen")
            .set_modified(later)
            .expect("mtime");
        let len = std::fs::metadata(&path).expect("meta").len();
        assert!(len > WHOLE_INDEX, "{len}");
        let started = Some("2026-12-03T02:59:59Z");
        let started_at = started
            .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
            .map(|s| s.with_timezone(&Utc));
        let modified: DateTime<Utc> = later.into();
        // The whole index, the reference every cut is compared with (built once).
        let mut index = Index::default();
        index
            .scan(
                &mut std::fs::File::open(&path).expect("open"),
                len,
                started_at,
                modified,
            )
            .expect("scan");
        for at in [
            "2026-12-03T02:59:59.500Z",
            "2026-12-03T03:00:00.000Z",
            "2026-12-03T03:00:00.005Z",
            "2026-12-03T03:05:17.123Z",
            "2026-12-03T03:21:00.010Z",
            "2026-12-03T03:33:19.990Z",
            "2026-12-03T03:40:00Z",
        ] {
            let at = utc(at);
            let mut file = std::fs::File::open(&path).expect("open");
            let whole = index.cut(at.timestamp_millis()).map(|o| o.min(len));
            let (cut, read) = search(&mut file, len, at, started_at, modified).expect("search");
            assert_eq!(cut, Cut::At(whole.expect("stamped")), "at {at}");
            assert!(read < 2 * 1024 * 1024, "read {read} of {len} bytes at {at}");
        }
        // Through the pane's entry point, as the index's threshold picks it.
        let shown = tail_at(None, &path, 4096, utc("2026-12-03T03:05:17.123Z"), started);
        assert_eq!(
            shown.last().map(String::as_str),
            Some("03:05:17.120 n1 op 31712 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
        );
    }
}
