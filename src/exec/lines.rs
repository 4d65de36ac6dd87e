//! Lines of child output read with bounded memory: a child may write megabytes
//! without a newline, so only the first [`LINE_LIMIT`] bytes of a line are kept; the
//! rest is read past, never buffered.

use std::io::BufRead;

/// Longest prefix of one line kept for matching and display.
pub const LINE_LIMIT: usize = 64 * 1024;

/// Splits a byte stream into lines cut at [`LINE_LIMIT`]; an unfinished last line is
/// carried to the next [`LineCap::scan`] (a log that is still being written).
#[derive(Debug, Default)]
pub struct LineCap {
    partial: Vec<u8>,
}

impl LineCap {
    /// Reads `reader` to its end, handing each complete line (without its newline) to
    /// `found` until it returns true. Returns the bytes consumed and whether `found`
    /// stopped the scan.
    pub fn scan<R: BufRead>(
        &mut self,
        reader: &mut R,
        mut found: impl FnMut(&[u8]) -> bool,
    ) -> std::io::Result<(u64, bool)> {
        let mut consumed = 0u64;
        loop {
            let buf = reader.fill_buf()?;
            if buf.is_empty() {
                return Ok((consumed, false));
            }
            let newline = buf.iter().position(|b| *b == b'\n');
            let part = &buf[..newline.unwrap_or(buf.len())];
            let room = LINE_LIMIT.saturating_sub(self.partial.len());
            self.partial
                .extend_from_slice(&part[..part.len().min(room)]);
            let used = part.len() + usize::from(newline.is_some());
            reader.consume(used);
            consumed += used as u64;
            if newline.is_some() {
                let line = std::mem::take(&mut self.partial);
                if found(&line) {
                    return Ok((consumed, true));
                }
            }
        }
    }

    /// The unfinished last line (cut at [`LINE_LIMIT`]), once the stream has ended.
    pub fn finish(self) -> Vec<u8> {
        self.partial
    }
}
