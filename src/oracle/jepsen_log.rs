//! Jepsen's operation log: the lines `jepsen.util` writes while a test runs, one
//! per invoke or completion, as in Porcupine's 102 etcd histories:
//!
//! ```text
//! INFO  jepsen.util - 3  :invoke  :cas  [3 0]
//! INFO  jepsen.util - 3  :ok  :cas  [3 0]
//! INFO  jepsen.util - 4  :info  :write  :timed-out
//! INFO  jepsen.util - :nemesis  :info  :start  "Cut off …"
//! ```
//!
//! After the `jepsen.util - ` marker come the process, the `:type`, the `:f` and the
//! value, separated by tabs (shown as spaces above) or spaces; the value is the rest
//! of the line, one EDN form. Whatever stands before the marker (level, timestamp,
//! thread) is ignored, and so is every line without the marker (the rest of a Jepsen
//! log). A line is
//! read exactly as the same map in an EDN history would be (`jepsen.rs`): an
//! integer process is a client, anything else (`:nemesis`) a fault window whose
//! text is only a description and is not read. There are no timestamps, so file
//! order is the real-time order. An empty file is an empty history; a file with
//! text but no operation line is refused (it is more likely another format).

use super::edn::{Edn, EdnKind, read_all};
use super::format::Source;
use super::history::{History, HistoryError, Op};
use super::jepsen::{At, Pairing, Summary, collect};
use std::io::Read;

/// What precedes the fields on an operation line.
const MARKER: &str = "jepsen.util - ";

/// The longest line read. An op's value is read into a tree several times its
/// text's size; a register or cas log's lines are tens of bytes.
const LINE_LIMIT: usize = 1 << 20;

/// Parse a Jepsen operation log. `source` names it in error messages.
pub fn parse_jepsen_log(source: &str, text: &str) -> Result<History, HistoryError> {
    read_jepsen_log(source, text.as_bytes())
}

/// A Jepsen operation log read from `reader` line by line into a [`History`].
pub fn read_jepsen_log(source: &str, reader: impl Read) -> Result<History, HistoryError> {
    collect(source, |emit| pair_jepsen_log(source, reader, emit))
}

/// The ops of a Jepsen operation log, paired as its lines are read (see
/// [`super::jepsen::pair_edn`]). The error is the one reading the whole file
/// first would give: a read error, then bytes not UTF-8, then the first line that
/// is not an operation line's fields, then the first op not well paired.
pub(super) fn pair_jepsen_log<R: Read>(
    source: &str,
    reader: R,
    emit: &mut dyn FnMut(Op, At),
) -> Result<Summary, HistoryError> {
    let mut bytes = Source::new(reader);
    let mut pairing = Pairing::new(source, emit);
    let mut unpaired = None;
    let mut entries = 0u64;
    let mut blank = true;
    let mut line = 0usize;
    let mut buf = Vec::new();
    let line_error = loop {
        buf.clear();
        // A `\r` before the `\n` is not the line's (as `str::lines` reads it).
        let Some(ended) = bytes.read_line(&mut buf, LINE_LIMIT + 2) else {
            break None;
        };
        line += 1;
        if ended && buf.last() == Some(&b'\r') {
            buf.pop();
        }
        if buf.len() > LINE_LIMIT {
            break Some(HistoryError::Line {
                source_name: source.to_string(),
                line,
                message: format!(
                    "longer than {LINE_LIMIT} bytes: refused (one operation is one line; its \
                     value is read whole into memory)"
                ),
            });
        }
        // Not UTF-8: the source's error, saying where, outranks this one.
        let Ok(raw) = std::str::from_utf8(&buf) else {
            break Some(HistoryError::Line {
                source_name: source.to_string(),
                line,
                message: "not UTF-8".into(),
            });
        };
        blank &= raw.trim().is_empty();
        if let Some(at) = raw.find(MARKER) {
            match entry(source, line, &raw[at + MARKER.len()..]) {
                Ok(e) => {
                    if unpaired.is_none()
                        && let Err(err) = pairing.entry(entries, &e)
                    {
                        unpaired = Some(err);
                    }
                    entries += 1;
                }
                Err(e) => break Some(e),
            }
        }
    };
    // An empty file is an empty history (as in EDN); text without one operation
    // line is more likely another format than a test that did nothing.
    let line_error = line_error.or_else(|| {
        (entries == 0 && !blank).then(|| HistoryError::Line {
            source_name: source.to_string(),
            line: 1,
            message: format!(
                "no operation line: a Jepsen log has lines such as \
                 `INFO  jepsen.util - 0\t:invoke\t:read\tnil` (`{MARKER}` then process, \
                 :type, :f and value)"
            ),
        })
    });
    bytes.settle(source, line_error.or(unpaired))?;
    Ok(pairing.finish())
}

/// One operation line's fields after the marker, as the EDN map Jepsen's history
/// would hold for it.
fn entry(source: &str, line: usize, fields: &str) -> Result<Edn, HistoryError> {
    let err = |field: &str, message: String| HistoryError::field(source, line, field, message);
    let mut rest = fields.trim_start();
    let mut next = |name: &str| -> Result<&str, HistoryError> {
        let end = rest
            .find(|c: char| c.is_ascii_whitespace())
            .unwrap_or(rest.len());
        let (field, after) = rest.split_at(end);
        rest = after.trim_start();
        if field.is_empty() {
            Err(err(
                name,
                format!("missing: the line ends before its {name} (process, :type, :f, value)"),
            ))
        } else {
            Ok(field)
        }
    };
    let process = next("process")?;
    let kind = next(":type")?;
    let f = next(":f")?;
    let value_text = rest.trim_end();
    let at = |kind: EdnKind| Edn { line, kind };
    let numeral = process.strip_prefix('-').unwrap_or(process);
    let process = match process.parse::<i64>() {
        Ok(p) => at(EdnKind::Int(p)),
        // A client numbered past what a history holds: never mistaken for an actor.
        Err(_) if numeral.bytes().all(|b| b.is_ascii_digit()) => {
            return Err(err(
                "process",
                format!("{process} is out of range for a process number (64-bit integers)"),
            ));
        }
        // A non-client actor (`:nemesis`): its value is prose, never read.
        Err(_) => at(EdnKind::Keyword(
            process.trim_start_matches(':').to_string(),
        )),
    };
    let keyword = |field: &str, text: &str| match text.strip_prefix(':') {
        Some(name) if !name.is_empty() => Ok(at(EdnKind::Keyword(name.to_string()))),
        _ => Err(err(
            field,
            format!("expected a keyword such as :invoke or :read, found {text:?}"),
        )),
    };
    let mut map = vec![
        (at(EdnKind::Keyword("process".into())), process.clone()),
        (at(EdnKind::Keyword("type".into())), keyword(":type", kind)?),
        (at(EdnKind::Keyword("f".into())), keyword(":f", f)?),
    ];
    if matches!(process.kind, EdnKind::Int(_)) {
        let value = match read_all(value_text) {
            Ok(forms) => match <[Edn; 1]>::try_from(forms) {
                Ok([one]) => Edn { line, ..one },
                Err(forms) => {
                    return Err(err(
                        ":value",
                        format!(
                            "expected one EDN value (nil, 3, [3 0], :timed-out), found {}",
                            forms.len()
                        ),
                    ));
                }
            },
            Err(e) => return Err(err(":value", format!("not an EDN value: {}", e.message))),
        };
        map.push((at(EdnKind::Keyword("value".into())), value));
    }
    Ok(at(EdnKind::Map(map)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "\
2026-12-04 INFO  jepsen.core - Running test
INFO  jepsen.util - 0\t:invoke\t:write\t3
INFO  jepsen.util - 1\t:invoke\t:read\tnil
INFO  jepsen.util - 0\t:ok\t:write\t3
INFO  jepsen.util - :nemesis\t:info\t:start\t\"Cut off {:n1 #{:n2}}\"
INFO  jepsen.util - 1   :ok :read  3
INFO  jepsen.util - 2\t:invoke\t:cas\t[3 4]
INFO  jepsen.util - 2\t:info\t:cas\t:timed-out
INFO  jepsen.util - :nemesis\t:info\t:stop\tnil
";

    #[test]
    // Spaces stand for tabs in some of Porcupine's etcd logs (etcd_100 to 102).
    fn reads_client_ops_and_nemesis_windows_and_skips_other_lines() -> Result<(), HistoryError> {
        let history = parse_jepsen_log("etcd.log", LOG)?;
        assert_eq!(history.ops.len(), 3);
        assert!(history.ops[0].is_acked() && history.ops[1].is_acked());
        assert!(history.ops[2].is_indeterminate());
        assert_eq!(history.ops[2].op_type, "cas");
        // The cas was invoked inside the nemesis's window; the write before it.
        assert!(history.ops[2].fault_epoch.is_some());
        assert_eq!(history.ops[0].fault_epoch, None);
        Ok(())
    }

    #[test]
    fn a_bad_line_is_named_with_its_field() {
        let bad = "INFO  jepsen.util - 0\t:invoke\t:write\t[3\n";
        let Err(e) = parse_jepsen_log("etcd.log", bad) else {
            panic!("an unclosed vector was accepted");
        };
        let text = e.to_string();
        assert!(
            text.contains("etcd.log") && text.contains(":value"),
            "{text}"
        );
        let Err(e) = parse_jepsen_log("etcd.log", "INFO  jepsen.util - 0\tinvoke\n") else {
            panic!("a line without :f was accepted");
        };
        assert!(e.to_string().contains(":type"), "{e}");
        let Err(e) = parse_jepsen_log("etcd.log", "nothing here\n") else {
            panic!("a log without operation lines was accepted");
        };
        assert!(e.to_string().contains("no operation line"), "{e}");
        assert!(matches!(parse_jepsen_log("etcd.log", "\n"), Ok(h) if h.ops.is_empty()));
    }

    #[test]
    fn a_client_past_64_bits_or_a_line_past_the_limit_is_refused() {
        let big = "INFO  jepsen.util - 9223372036854775808\t:invoke\t:write\t1\n";
        let Err(e) = parse_jepsen_log("etcd.log", big) else {
            panic!("a process past i64 was read (as the nemesis?)");
        };
        assert!(e.to_string().contains("`process`"), "{e}");
        let long = format!(
            "INFO  jepsen.util - 0\t:invoke\t:write\t[{}]\n",
            "1 ".repeat(LINE_LIMIT / 2)
        );
        let Err(e) = parse_jepsen_log("etcd.log", &long) else {
            panic!("a line past the limit was read");
        };
        assert!(e.to_string().contains("etcd.log:1: longer than"), "{e}");
    }

    #[test]
    fn a_value_that_smuggles_fields_is_refused() {
        let sly = "INFO  jepsen.util - 0\t:invoke\t:write\t1 :process 5\n";
        assert!(parse_jepsen_log("etcd.log", sly).is_err());
    }
}
