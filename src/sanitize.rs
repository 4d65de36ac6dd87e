//! Child output is never shown raw: escape sequences and control characters are
//! removed before any text that came from a child reaches a terminal or a report.

/// Removes escape sequences — CSI, OSC, DCS / SOS / PM / APC strings (7-bit `ESC x`
/// and 8-bit C1 forms alike) and two-byte `ESC x` forms — every control character
/// other than tab, and the Unicode marks that reorder or break what is shown around
/// them (bidi overrides and isolates, line / paragraph separators): text someone else
/// wrote must not spoof what follows it.
pub fn line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let introducer = match c {
            '\u{1b}' => match chars.next() {
                Some('[') => '\u{9b}',
                Some(']') => '\u{9d}',
                Some('P') => '\u{90}',
                Some('X') => '\u{98}',
                Some('^') => '\u{9e}',
                Some('_') => '\u{9f}',
                // Any other two-byte form: both characters dropped.
                _ => continue,
            },
            c => c,
        };
        match introducer {
            // CSI: parameters and intermediates up to a final byte in @..~
            '\u{9b}' => {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            // OSC, DCS, SOS, PM, APC: a string up to BEL or ST (ESC \ or 8-bit 0x9c).
            '\u{9d}' | '\u{90}' | '\u{98}' | '\u{9e}' | '\u{9f}' => {
                while let Some(c) = chars.next() {
                    if c == '\u{7}' || c == '\u{9c}' {
                        break;
                    }
                    if c == '\u{1b}' && chars.peek() == Some(&'\\') {
                        chars.next();
                        break;
                    }
                }
            }
            '\t' => out.push('\t'),
            c if c.is_control() || reorders(c) => {}
            c => out.push(c),
        }
    }
    out
}

/// JSON text made safe to print whole: every character [`line`] would remove and
/// serde_json writes raw (C1 controls such as the 8-bit CSI and OSC, DEL, the
/// marks that reorder or hide text) written as its `\uXXXX` escape instead. Such
/// characters can only stand inside a JSON string (everything outside one is
/// ASCII), so the text means the same value, and the terminal writer finds
/// nothing to cut: cutting from a C1 introducer on dropped the JSON after it.
pub fn json(text: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| ('\u{7f}'..='\u{9f}').contains(&c) || reorders(c);
    if !text.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    use std::fmt::Write as _;
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if unsafe_char(c) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                let _ = write!(out, "\\u{unit:04x}");
            }
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The invisible marks that change the order or the lines of the text around them,
/// and the other invisible format characters (Unicode category Cf: zero-width
/// spaces and joiners, word joiners, invisible operators, the byte order mark, tag
/// characters…) that let two different texts look the same.
fn reorders(c: char) -> bool {
    matches!(
        c,
        '\u{200e}' | '\u{200f}' | '\u{061c}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
            | '\u{2028}' | '\u{2029}'
    ) || format_char(c)
}

/// Unicode's format characters (category Cf).
fn format_char(c: char) -> bool {
    matches!(
        c,
        '\u{00ad}'
            | '\u{0600}'..='\u{0605}'
            | '\u{06dd}'
            | '\u{070f}'
            | '\u{0890}'..='\u{0891}'
            | '\u{08e2}'
            | '\u{180e}'
            | '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{206f}'
            | '\u{feff}'
            | '\u{fff9}'..='\u{fffb}'
            | '\u{110bd}'
            | '\u{110cd}'
            | '\u{13430}'..='\u{1343f}'
            | '\u{1bca0}'..='\u{1bca3}'
            | '\u{1d173}'..='\u{1d17a}'
            | '\u{e0001}'
            | '\u{e0020}'..='\u{e007f}'
    )
}

/// Decodes raw child output for display: valid UTF-8 as is, a stray byte in the C1
/// range (0x80–0x9f, e.g. the 8-bit CSI 0x9b) as the C1 control it stands for, so
/// [`line`] removes it with its parameters, and any other invalid byte as U+FFFD.
pub fn decode(raw: &[u8]) -> String {
    let mut out = String::with_capacity(raw.len());
    for chunk in raw.utf8_chunks() {
        out.push_str(chunk.valid());
        for byte in chunk.invalid() {
            match byte {
                0x80..=0x9f => out.push(char::from(*byte)),
                _ => out.push('\u{fffd}'),
            }
        }
    }
    out
}

/// At most `chars` characters of `text`, with `…` where it was cut: a long id,
/// input or message shown within a line.
pub fn clip(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// JSON made safe means the same value, and the terminal writer's cleaning
        /// leaves it whole: C1 controls, DEL, bidi and other format characters
        /// (a tag character needs a surrogate pair) among any text.
        #[test]
        fn json_made_safe_reads_back_the_same_and_survives_cleaning(
            parts in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::strategy::Just("\u{9b}31m".to_string()),
                    proptest::strategy::Just("\u{9d}0;title\u{7}".to_string()),
                    proptest::strategy::Just("\u{7f}\u{85}\u{202e}\u{200b}\u{e0041}".to_string()),
                    proptest::strategy::Just("\u{1b}[2J\n\"\\".to_string()),
                    "\\PC{0,6}",
                ],
                0..8,
            ),
        ) {
            let text: String = parts.concat();
            let value = serde_json::json!({ "ops": [text], "file": text, "n": 1 });
            for printed in [value.to_string(), serde_json::to_string_pretty(&value).expect("json")] {
                let safe = json(&printed);
                proptest::prop_assert_eq!(line(&safe), safe.lines().collect::<Vec<_>>().join(""));
                let back: serde_json::Value = serde_json::from_str(&safe).expect("still JSON");
                proptest::prop_assert_eq!(&back, &value);
            }
        }
    }

    /// Zero-width and other invisible format characters are dropped: `ad\u{200b}min`
    /// must not pass for `admin` on screen while being another text.
    #[test]
    fn zero_width_and_format_characters_are_removed() {
        for c in [
            '\u{200b}',
            '\u{200c}',
            '\u{200d}',
            '\u{200e}',
            '\u{200f}',
            '\u{2060}',
            '\u{2063}',
            '\u{2064}',
            '\u{feff}',
            '\u{00ad}',
            '\u{e0041}',
        ] {
            assert_eq!(
                line(&format!("ad{c}min")),
                "admin",
                "U+{:04X}",
                u32::from(c)
            );
        }
        assert_eq!(line("naïve café — ok"), "naïve café — ok");
    }
}
