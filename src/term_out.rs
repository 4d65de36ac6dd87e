//! The one writer for what a command prints on the terminal. Text from a plan, a run
//! spec, a history, a child, `/proc`, the journal or the socket may hold escape
//! sequences (a title change, a clipboard write, a cleared screen); every line goes
//! through [`crate::sanitize::line`] on its way out, line ends kept, so multi-line
//! output keeps its shape and no ESC or BEL reaches the terminal.
//!
//! [`say!`](crate::say) and [`say_err!`](crate::say_err) write through it to stdout and
//! stderr; [`Clean`] wraps any other writer (tests, a locked stdout handed down).

use std::io::{self, Write};

/// A writer that sanitizes each line before it reaches `inner`: bytes are held until
/// a line ends (an escape sequence split across `write` calls is still seen whole),
/// then decoded with [`crate::sanitize::decode`] and cleaned with
/// [`crate::sanitize::line`]. A flush writes a partial line cleaned as it stands.
pub struct Clean<W: Write> {
    inner: W,
    pending: Vec<u8>,
}

impl<W: Write> Clean<W> {
    pub fn new(inner: W) -> Self {
        Self {
            inner,
            pending: Vec::new(),
        }
    }

    /// Writes the held bytes, cleaned, and a line end if they ended a line.
    fn emit(&mut self, line_end: bool) -> io::Result<()> {
        let text = crate::sanitize::line(&crate::sanitize::decode(&self.pending));
        self.pending.clear();
        self.inner.write_all(text.as_bytes())?;
        if line_end {
            self.inner.write_all(b"\n")?;
        }
        Ok(())
    }
}

impl<W: Write> Write for Clean<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut rest = buf;
        while let Some(at) = rest.iter().position(|b| *b == b'\n') {
            self.pending.extend_from_slice(&rest[..at]);
            self.emit(true)?;
            rest = &rest[at + 1..];
        }
        self.pending.extend_from_slice(rest);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.pending.is_empty() {
            self.emit(false)?;
        }
        self.inner.flush()
    }
}

impl<W: Write> Drop for Clean<W> {
    fn drop(&mut self) {
        // As `BufWriter` does: what is held is written, an error has nowhere to go.
        let _ = self.flush();
    }
}

/// Writes `text` to `out` cleaned, then flushes.
pub fn write(out: impl Write, text: &str) -> io::Result<()> {
    let mut clean = Clean::new(out);
    clean.write_all(text.as_bytes())?;
    clean.flush()
}

/// `text` on stdout, cleaned. A stdout that went away (a closed pipe, `| head`)
/// drops the text: it never panics and never changes the exit code.
pub fn stdout(text: &str) {
    let _ = write(io::stdout().lock(), text);
}

/// `text` on stderr, cleaned; a stderr that went away drops it.
pub fn stderr(text: &str) {
    let _ = write(io::stderr().lock(), text);
}

/// `text` in lines of at most `width` characters, broken between words; a word longer
/// than a line (a path) is broken where the line ends.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let mut word: Vec<char> = word.chars().collect();
        let used = line.chars().count();
        if used > 0 && used + 1 + word.len() <= width {
            line.push(' ');
            line.extend(&word);
            continue;
        }
        if used > 0 {
            lines.push(std::mem::take(&mut line));
        }
        while word.len() > width {
            lines.push(word.drain(..width).collect());
        }
        line.extend(word);
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOSTILE: &str = "a\x1b]0;pwned\x07b\x1b]52;c;ZXZpbA==\x07c\x1b[2Jd";

    fn cleaned(chunks: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        {
            let mut clean = Clean::new(&mut out);
            for chunk in chunks {
                clean.write_all(chunk).expect("writes to a Vec");
            }
        }
        out
    }

    #[test]
    fn every_line_is_cleaned_and_line_ends_are_kept() {
        let text = format!("{HOSTILE}\n\n  {HOSTILE}\r\nlast");
        assert_eq!(cleaned(&[text.as_bytes()]), b"abcd\n\n  abcd\nlast");
    }

    #[test]
    fn a_sequence_split_across_writes_is_removed_whole() {
        let bytes = HOSTILE.as_bytes();
        let (one, two) = bytes.split_at(5);
        assert_eq!(cleaned(&[one, two, b"\n"]), b"abcd\n");
        // The 8-bit CSI as a raw byte is a control too.
        assert_eq!(cleaned(&[b"x\x9b2Jy\x07"]), b"xy");
    }
}
