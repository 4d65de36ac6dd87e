//! `${name}` substitution in run-spec commands. `${port:NAME}` picks a free loopback
//! port the first time NAME is seen and returns the same port afterwards, so several
//! sessions (or tests) can run side by side. Values may refer to other values.

use std::collections::BTreeMap;

/// How deep values may refer to values before we call it a cycle.
const MAX_DEPTH: usize = 8;

#[derive(Debug, Default, Clone)]
pub struct Vars {
    values: BTreeMap<String, String>,
    ports: BTreeMap<String, u16>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VarError {
    #[error("unknown variable `${{{0}}}`")]
    Unknown(String),
    #[error("unterminated `${{` in `{0}`")]
    Unterminated(String),
    #[error("variables refer to each other too deeply (cycle?) at `${{{0}}}`")]
    TooDeep(String),
    #[error("no free loopback port for `${{port:{name}}}`: {message}")]
    NoPort { name: String, message: String },
}

impl Vars {
    pub fn set(&mut self, name: &str, value: impl Into<String>) {
        self.values.insert(name.to_string(), value.into());
    }

    /// The ports handed out so far, by name.
    pub fn ports(&self) -> &BTreeMap<String, u16> {
        &self.ports
    }

    fn port(&mut self, name: &str) -> Result<u16, VarError> {
        if let Some(port) = self.ports.get(name) {
            return Ok(*port);
        }
        let port = free_port().map_err(|e| VarError::NoPort {
            name: name.to_string(),
            message: e.to_string(),
        })?;
        self.ports.insert(name.to_string(), port);
        Ok(port)
    }

    /// Replaces every `${…}` in `template`.
    pub fn expand(&mut self, template: &str) -> Result<String, VarError> {
        self.expand_at(template, 0)
    }

    fn expand_at(&mut self, template: &str, depth: usize) -> Result<String, VarError> {
        let mut out = String::with_capacity(template.len());
        let mut rest = template;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let end = after
                .find('}')
                .ok_or_else(|| VarError::Unterminated(template.to_string()))?;
            let name = &after[..end];
            if let Some(port_name) = name.strip_prefix("port:") {
                out.push_str(&self.port(port_name)?.to_string());
            } else {
                let value = self
                    .values
                    .get(name)
                    .cloned()
                    .ok_or_else(|| VarError::Unknown(name.to_string()))?;
                if depth >= MAX_DEPTH {
                    return Err(VarError::TooDeep(name.to_string()));
                }
                out.push_str(&self.expand_at(&value, depth + 1)?);
            }
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }
}

/// Where the search for free ports starts; shared so successive picks in one process
/// never hand out the same port twice.
static NEXT_PORT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// A loopback port that is free now and lies BELOW the kernel's ephemeral range: a
/// port from that range may be taken at any moment as the local end of an outgoing
/// connection (even connecting to itself on loopback), so a service told to listen
/// there can find it busy.
fn free_port() -> std::io::Result<u16> {
    use std::sync::atomic::Ordering;
    let ephemeral_low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|t| {
            t.split_whitespace()
                .next()
                .and_then(|p| p.parse::<u32>().ok())
        })
        .unwrap_or(32768);
    let low = 10_000u32.min(ephemeral_low.saturating_sub(1000));
    let span = ephemeral_low.saturating_sub(low).max(1);
    // Start somewhere different per process so parallel sessions rarely probe the same ports.
    let _ = NEXT_PORT.compare_exchange(
        0,
        std::process::id().wrapping_mul(7919) % span + 1,
        Ordering::SeqCst,
        Ordering::SeqCst,
    );
    for _ in 0..span.min(2000) {
        let offset = NEXT_PORT.fetch_add(1, Ordering::SeqCst) % span;
        let Ok(port) = u16::try_from(low + offset) else {
            continue;
        };
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return Ok(port);
        }
    }
    // Every candidate was busy: let the kernel choose.
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
}
