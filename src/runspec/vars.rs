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
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .map_err(|e| VarError::NoPort {
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
