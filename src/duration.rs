//! Durations written for people: `300ms`, `5s`, `2m`, `1h`, or a bare number of seconds.

use std::fmt;
use std::time::Duration;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Dur(pub Duration);

/// Parses `300ms`, `1.5s`, `2m`, `1h` or `5` (seconds).
pub fn parse(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("invalid duration `{text}` (write e.g. 300ms, 5s, 2m)"))?;
    let seconds = match unit.trim() {
        "ms" => value / 1000.0,
        "" | "s" => value,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        other => {
            return Err(format!(
                "invalid duration unit `{other}` in `{text}` (use ms, s, m or h)"
            ));
        }
    };
    // `try_`: a value past what a Duration holds (about 584 billion years) is the
    // writer's error, not a panic.
    Duration::try_from_secs_f64(seconds).map_err(|_| format!("invalid duration `{text}`"))
}

impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct DurVisitor;
        impl Visitor<'_> for DurVisitor {
            type Value = Dur;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration such as 300ms, 5s or 2m")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Dur, E> {
                Ok(Dur(Duration::from_secs(v)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Dur, E> {
                parse(&v.to_string()).map(Dur).map_err(E::custom)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Dur, E> {
                parse(v).map(Dur).map_err(E::custom)
            }
        }
        deserializer.deserialize_any(DurVisitor)
    }
}

impl Serialize for Dur {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{}ms", self.0.as_millis()))
    }
}
